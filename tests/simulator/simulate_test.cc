#include "simulator/simulate.h"

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

JobSpec Job(int64_t batch, int64_t seq) {
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = seq;
  return job;
}

TEST_CASE("simulator: smoke tier B on presets", "[simulator]") {
  ModelSpec model = LoadModel("llama2-7b");
  ClusterSpec cluster = LoadCluster("dgx-h100", 4);
  AnalyticalEvaluator eval(model, cluster, Job(64, 4096));
  ParallelConfig c = ParseParallelConfig("dp=32,tp=1,pp=1,sharding=zero2");
  Report a = eval.Evaluate(c);
  SimulationOptions opt;
  SimulationResult b = SimulateConfig(eval, c, opt);
  WARN("A " << a.step_time.si() << " B " << b.report.step_time.si() << " exposedA " << a.exposed_comm.si()
            << " exposedB " << b.report.exposed_comm.si() << " acts " << b.activities);
  opt.fidelity = Fidelity::kFull;
  SimulationResult cr = SimulateConfig(eval, c, opt);
  WARN("C " << cr.report.step_time.si() << " exposedC " << cr.report.exposed_comm.si() << " acts " << cr.activities);
}

}  // namespace
}  // namespace parasim::simulator
