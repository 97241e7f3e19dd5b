// From a directory of microbenchmark measurements to a calibrated GPU
// profile: run every fit the data allow, replace the fitted fields of the
// input profile (the facade writes it in the hw_profiles YAML schema,
// hw_profiles/SCHEMA.md, loadable by LoadGpuProfile).
#pragma once

#include <optional>
#include <string>

#include "calibrate/device_fits.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/gemm_shape_model.h"
#include "calibrate/microbench_data.h"
#include "core/gpu_profile.h"

namespace parasim::calibrate {

struct CalibrationFits {
  std::string device, date;
  // The GEMM fit written to the profile: the sustained sweep when present
  // (clocks at the power cap, as through a training step), else the burst one.
  std::optional<GemmFit> gemm;
  std::string gemm_source;            // file the written fit came from
  std::optional<GemmFit> gemm_burst;  // the full burst sweep's fit, when both exist
  // FP8 (E4M3, per-tensor scales) sustained sweep fitted the same way against
  // the fp8 dense peak, with the bf16 sweep's shape model: efficiency.gemm_max_fp8,
  // from the fast-accumulation rows only.
  std::optional<GemmFit> gemm_fp8;
  std::string gemm_fp8_source;
  // The same file's split-accumulator rows against that fit:
  // efficiency.gemm_fp8_split_accum (not usable, and not written, without split rows).
  std::optional<SplitAccumFit> gemm_fp8_split;
  int gemm_fp8_split_rows = 0;   // split rows in the file (before the time and roofline filters)
  // The smooth shape model (gemm_shape_model.h) on the fullest sweep, for
  // comparison with the cost model's shape term; reported, not written.
  std::optional<GemmShapeFit> gemm_shape;
  std::optional<MemoryFit> memory;
  std::optional<PowerFit> power;
  std::optional<LaunchOverhead> launch;  // reported only: launch cost belongs to the software stack
};

CalibrationFits FitMicrobench(const MicrobenchData& data, const GpuProfile& base);

// `base` with every usable fit applied and its sources updated ("calibrated
// on <device> <date> by parasim calibrate: <how>"); `name` names the result.
GpuProfile ApplyCalibration(const GpuProfile& base, const CalibrationFits& fits, const std::string& name);

}  // namespace parasim::calibrate
