// The planner's metrics-only ranking path (AnalyticalEvaluator::Metrics)
// against the full evaluator: the same verdict, reason category and (for a
// config that fits) ranking metrics, bit for bit, on configs sampled across whole spaces (dense and
// MoE, every placement order, configs that do not fit); and the same plan
// (everything its JSON report holds) with and without it.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "planner/search_space.h"
#include "tests/planner/plan_digest.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

struct Setup {
  const char* model;
  const char* cluster;
  int nodes;
  long long global_batch;
  long long seq_len;
  const char* constraints;
};

JobSpec JobOf(const Setup& s) {
  JobSpec job;
  job.global_batch = s.global_batch;
  job.seq_len = s.seq_len;
  return job;
}

// Every `stride`-th candidate of the space, about `wanted` of them.
std::vector<ParallelConfig> Sample(const SearchSpace& space, size_t wanted) {
  std::vector<ParallelConfig> out;
  const size_t stride = std::max<size_t>(1, space.candidates.size() / wanted);
  for (size_t i = 0; i < space.candidates.size(); i += stride) out.push_back(space.ToConfig(i));
  return out;
}

const Setup kSetups[] = {
    {"llama3-70b", "dgx-h100", 32, 512, 8192, ""},
    {"llama2-7b", "dgx-a100", 8, 128, 4096, "order=any"},
    {"mixtral-8x7b", "dgx-h100", 16, 256, 4096, ""},
};

}  // namespace

TEST_CASE("planner: Metrics() equals Evaluate()'s ranking fields bit for bit", "[planner]") {
  for (const Setup& s : kSetups) {
    const ModelSpec model = LoadModel(s.model);
    const ClusterSpec cluster = LoadCluster(s.cluster, s.nodes);
    const JobSpec job = JobOf(s);
    const AnalyticalEvaluator evaluator(model, cluster, job);
    const SearchSpace space = EnumerateSpace(model, job, cluster.TotalGpus(), cluster.gpus_per_node,
                                             ConstraintSet::Parse(s.constraints, "test"), SpaceFor(evaluator.stack()));
    int feasible = 0, memory = 0;
    for (const ParallelConfig& c : Sample(space, 300)) {
      INFO(s.model << " " << c.ToString());
      const ConfigMetrics fast = evaluator.Metrics(c);
      const ConfigMetrics full = MetricsOfReport(evaluator.Evaluate(c));
      REQUIRE(fast.feasible == full.feasible);
      CHECK(fast.reason_category == full.reason_category);
      if (fast.feasible) {   // the planner reads the metrics of feasible configs only
        CHECK(fast.tokens_per_s == full.tokens_per_s);
        CHECK(fast.tokens_per_joule == full.tokens_per_joule);
        CHECK(fast.exposed_comm_fraction == full.exposed_comm_fraction);
      }
      feasible += fast.feasible;
      memory += fast.reason_category == "memory";
    }
    // The sample holds both kinds, so both branches were compared.
    CHECK(feasible > 10);
    CHECK(memory > 10);
  }
}

TEST_CASE("planner: Metrics() gives the config reason of an invalid config", "[planner]") {
  const ModelSpec model = LoadModel("llama2-7b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 2);
  const AnalyticalEvaluator evaluator(model, cluster, JobOf(kSetups[1]));
  ParallelConfig wrong_world;   // 1 GPU of 16
  ParallelConfig bad_order;
  bad_order.dp = 16;
  bad_order.order = "tp-dp";    // leaves out nothing of degree > 1, but not a full order either way
  for (const ParallelConfig& c : {wrong_world, bad_order}) {
    const ConfigMetrics fast = evaluator.Metrics(c);
    const ConfigMetrics full = MetricsOfReport(evaluator.Evaluate(c));
    CHECK(fast.feasible == full.feasible);
    CHECK(fast.reason_category == full.reason_category);
  }
  CHECK(evaluator.Metrics(wrong_world).reason_category == "config");
}

TEST_CASE("planner: the plan is the same with and without the metrics-only ranking", "[planner]") {
  const Setup setups[] = {
      {"llama3-70b", "dgx-h100", 8, 256, 8192, ""},
      {"llama2-7b", "dgx-a100", 1, 64, 4096, "order=any,pp<=2,mbs<=4"},
      {"mixtral-8x7b", "dgx-h100", 4, 128, 4096, ""},
  };
  for (const Setup& s : setups) {
    const ModelSpec model = LoadModel(s.model);
    const ClusterSpec cluster = LoadCluster(s.cluster, s.nodes);
    const JobSpec job = JobOf(s);
    const AnalyticalEvaluator evaluator(model, cluster, job);
    PlanOptions options;
    options.threads = 2;
    options.top_k = 5;
    options.constraints = ConstraintSet::Parse(s.constraints, "test");
    PlanResult fast = RunPlan(evaluator, options);   // the product path: metrics-only ranking
    options.space = SpaceFor(evaluator.stack());
    const Scorer full = [&evaluator](const ParallelConfig& c) { return evaluator.Evaluate(c); };
    PlanResult slow = RunPlan(model, job, cluster.TotalGpus(), cluster.gpus_per_node, full, options);
    slow.gpu_capacity_bytes = fast.gpu_capacity_bytes;
    CHECK(fast.scored == slow.scored);
    CHECK(fast.rejected == slow.rejected);
    CHECK(parasim_test::PlanDigest(fast) == parasim_test::PlanDigest(slow));
  }
}
