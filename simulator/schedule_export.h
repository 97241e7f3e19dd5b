// The schedule of one training step as JSON, for calibrate/cuda/
// reference_step.cu to replay on real GPUs (`parasim simulate
// --export-schedule FILE`): the model's shape, the parallel config, the
// first pipeline stage's layers in forward order with parasim's predicted
// compute times and each collective (op, bytes, phase, predicted duration),
// and the step prediction (step time, compute, exposed communication) to
// compare the measurement with. Read through StepWorkload's public fields only.
#pragma once

#include <string>

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/report.h"
#include "cost_model/workload.h"

namespace parasim::simulator {

inline constexpr int kScheduleSchemaVersion = 1;

// Deterministic text (fixed key order, %.9g numbers).
std::string ScheduleJson(const StepWorkload& workload, const ModelSpec& model, const JobSpec& job,
                         const Report& prediction);

}  // namespace parasim::simulator
