// Every tier reports each pipeline stage's peak memory per GPU and which
// stage is the peak; the list's maximum is the reported peak.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

JobSpec Job(int64_t batch) {
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = 4096;
  return job;
}

void RequireStageList(const Report& r, int pp) {
  REQUIRE(static_cast<int>(r.memory_bytes_per_stage.size()) == pp);
  const auto peak = std::max_element(r.memory_bytes_per_stage.begin(), r.memory_bytes_per_stage.end());
  REQUIRE(*peak == r.memory_per_gpu.si());
  // The first stage at the peak.
  REQUIRE(r.memory_peak_stage == static_cast<int>(peak - r.memory_bytes_per_stage.begin()));
  for (double b : r.memory_bytes_per_stage) REQUIRE(b > 0);
}

TEST_CASE("report: the stage memory list has pp entries whose maximum is the peak, in every tier",
          "[simulator][memory]") {
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job(64));
  for (const char* config : {"dp=4,tp=2,pp=4,sharding=zero1", "dp=2,tp=2,pp=8,sharding=zero1,vpp=5,schedule=interleaved",
                             "dp=16,tp=2,sharding=zero3"}) {
    INFO(config);
    const ParallelConfig c = ParseParallelConfig(config);
    const Report a = eval.Evaluate(c);
    RequireStageList(a, c.pp);
    const StepWorkload wl = eval.BuildWorkload(c);
    const Report b = SimulateStep(wl, eval.cluster(), SimulationOptions{}).report;
    RequireStageList(b, c.pp);
    REQUIRE(b.memory_bytes_per_stage == a.memory_bytes_per_stage);
    const Report via_config = SimulateConfig(eval, c, SimulationOptions{}).report;
    REQUIRE(via_config.memory_bytes_per_stage == a.memory_bytes_per_stage);
    REQUIRE(via_config.memory_peak_stage == a.memory_peak_stage);
  }
}

TEST_CASE("report: under 1F1B the first stage holds the most micro-batches: of equal stages it is the peak",
          "[simulator][memory]") {
  // llama2-13b: 40 equal layers on 4 stages; stage s holds pp − s micro-batches'
  // activations, so memory falls along the pipeline (the last adds its logits).
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job(64));
  const Report a = eval.Evaluate(ParseParallelConfig("dp=4,tp=2,pp=4,sharding=zero1"));
  RequireStageList(a, 4);
  REQUIRE(a.memory_peak_stage == 0);
  REQUIRE(a.memory_bytes_per_stage[1] > a.memory_bytes_per_stage[2]);
}

TEST_CASE("report: a DeepSeek-V3-like model's dense first layers make a lighter first stage",
          "[simulator][memory]") {
  // DeepSeek-V3 (first_k_dense_replace = 3): stage 0 holds the embedding and
  // three dense layers of its four, the next stages four MoE layers each with
  // their experts' weights, gradients and optimizer state.
  const ModelSpec model = LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/deepseek-v3");
  REQUIRE(model.first_dense_layers == 3);
  AnalyticalEvaluator eval(model, LoadCluster("dgx-h100", 32), Job(1024), LoadSoftwareStack("megatron-core"));
  const Report a = eval.Evaluate(ParseParallelConfig("dp=16,pp=16,ep=16,sharding=zero1"));
  RequireStageList(a, 16);
  REQUIRE(a.memory_peak_stage == 1);
  REQUIRE(a.memory_bytes_per_stage[0] < a.memory_bytes_per_stage[1]);
}

TEST_CASE("report: the JSON carries the stage list and the peak stage", "[simulator][memory]") {
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job(64));
  const Report a = eval.Evaluate(ParseParallelConfig("dp=4,tp=2,pp=4,sharding=zero1"));
  const nlohmann::json j = nlohmann::json::parse(ReportToJson(a));
  REQUIRE(j["memory_bytes_per_stage"].size() == 4);
  for (size_t s = 0; s < 4; ++s) REQUIRE(j["memory_bytes_per_stage"][s].get<double>() == a.memory_bytes_per_stage[s]);
  REQUIRE(j["memory_peak_stage"].get<int>() == a.memory_peak_stage);
}

}  // namespace
}  // namespace parasim::simulator
