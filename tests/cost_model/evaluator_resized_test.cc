// AnalyticalEvaluator::Resized shares per-thread memo keys with its base
// (unit costs across sizes and batches; group paths and collective times
// across batches at one size). Its reports must equal a fresh evaluator's for
// that cluster and batch bit for bit, whatever the tables held before.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/loaders.h"
#include "cost_model/evaluator.h"

using namespace parasim;

namespace {

JobSpec Job(int64_t global_batch) {
  JobSpec job;
  job.global_batch = global_batch;
  job.seq_len = 4096;
  return job;
}

// Configs of `gpus` GPUs across tp, pp, mbs, sharding and recompute.
std::vector<ParallelConfig> Configs(int gpus) {
  std::vector<ParallelConfig> out;
  for (int tp : {1, 2, 8}) {
    for (int pp : {1, 4}) {
      for (int mbs : {1, 2}) {
        for (const char* sh : {"zero1", "zero3", "hsdp:2"}) {
          for (const char* rc : {"none", "full"}) {
            out.push_back(ParseParallelConfig(StrCat("dp=", gpus / (tp * pp), ",tp=", tp, ",pp=", pp, ",mbs=", mbs,
                                                     ",sharding=", sh, ",recompute=", rc)));
          }
        }
      }
    }
  }
  return out;
}

void RequireSame(const Report& a, const Report& b) {
  INFO(a.config.ToString());
  REQUIRE(a.feasible == b.feasible);
  CHECK(a.infeasible_reason == b.infeasible_reason);
  CHECK(a.step_time.si() == b.step_time.si());
  CHECK(a.tokens_per_s == b.tokens_per_s);
  CHECK(a.tokens_per_joule == b.tokens_per_joule);
  CHECK(a.memory_per_gpu.si() == b.memory_per_gpu.si());
  CHECK(a.exposed_comm_fraction == b.exposed_comm_fraction);
  CHECK(a.power_per_gpu.si() == b.power_per_gpu.si());
  REQUIRE(a.by_dimension.size() == b.by_dimension.size());
  for (size_t i = 0; i < a.by_dimension.size(); ++i) {
    CHECK(a.by_dimension[i].total.si() == b.by_dimension[i].total.si());
    CHECK(a.by_dimension[i].exposed.si() == b.by_dimension[i].exposed.si());
  }
}

// The planner's metrics of `m` are those of the report `r`, bit for bit.
void RequireSameMetrics(const ConfigMetrics& m, const Report& r) {
  INFO(r.config.ToString());
  REQUIRE(m.feasible == r.feasible);
  if (!r.feasible) {
    CHECK(r.infeasible_reason.rfind(m.reason_category + ":", 0) == 0);
    return;
  }
  CHECK(m.tokens_per_s == r.tokens_per_s);
  CHECK(m.tokens_per_joule == r.tokens_per_joule);
  CHECK(m.exposed_comm_fraction == r.exposed_comm_fraction);
}

}  // namespace

TEST_CASE("evaluator: a Resized evaluator reports as a fresh one, memo tables warm or cold", "[evaluator]") {
  const ModelSpec model = LoadModel("llama2-13b");
  const AnalyticalEvaluator base(model, LoadCluster("dgx-h100", 8), Job(256));
  const AnalyticalEvaluator base_fresh(model, LoadCluster("dgx-h100", 8), Job(256));
  struct Target {
    const char* cluster;
    int nodes;
    int64_t batch;
  };
  // Another batch at the same size (paths and times shared), other sizes
  // (unit costs shared), and another GPU (nothing shared: the guard).
  for (const Target t : {Target{"dgx-h100", 8, 512}, Target{"dgx-h100", 4, 256}, Target{"dgx-h100", 16, 128},
                         Target{"dgx-a100", 8, 256}}) {
    const ClusterSpec cluster = LoadCluster(t.cluster, t.nodes);
    const AnalyticalEvaluator resized = base.Resized(cluster, t.batch);
    const AnalyticalEvaluator fresh(model, cluster, Job(t.batch));
    const std::vector<ParallelConfig> configs = Configs(cluster.TotalGpus());
    for (const ParallelConfig& c : Configs(64)) base.Evaluate(c);   // the base's entries in the tables
    for (const ParallelConfig& c : configs) RequireSame(resized.Evaluate(c), fresh.Evaluate(c));
    for (const ParallelConfig& c : configs) RequireSame(fresh.Evaluate(c), resized.Evaluate(c));
    // The planner's path: the ranking metrics, warm from the base's query.
    for (const ParallelConfig& c : Configs(64)) base.Metrics(c);
    for (const ParallelConfig& c : configs) RequireSameMetrics(resized.Metrics(c), fresh.Evaluate(c));
    // And the base after its resized copy filled the tables.
    for (const ParallelConfig& c : Configs(64)) RequireSame(base.Evaluate(c), base_fresh.Evaluate(c));
  }
}
