// plan --uncertainty: deterministic draws, a spread that collapses without
// uncertain fields, and the registry's cited slots.
#include <catch2/catch.hpp>

#include "core/field_registry.h"
#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "planner/scaling.h"
#include "planner/uncertainty.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

struct Setup {
  ModelSpec model = LoadModel("llama2-7b");
  ClusterSpec cluster = ResizeCluster(LoadCluster("dgx-h100"), 32);
  JobSpec job;
  PlanOptions options;
  Setup() {
    job.global_batch = 64;
    job.seq_len = 4096;
    options.top_k = 4;
    options.threads = 1;
  }
  PlanResult Plan() const { return RunPlan(AnalyticalEvaluator(model, cluster, job), options); }
};

}  // namespace

TEST_CASE("uncertainty: only fields with a cited uncertainty are drawn", "[planner][uncertainty]") {
  const std::vector<UncertainField> fields = RegistryUncertainFields();
  REQUIRE(!fields.empty());
  for (const UncertainField& f : fields) {
    INFO(f.key);
    CHECK(f.sigma > 0);
    CHECK(f.sigma < 1);
  }
  // Draws: fixed by the seed, different for another seed, inside each field's range.
  const ClusterSpec base = LoadCluster("dgx-h100");
  const std::vector<ClusterSpec> a = PerturbedClusters(base, fields, 50, 7), b = PerturbedClusters(base, fields, 50, 7);
  const std::vector<ClusterSpec> c = PerturbedClusters(base, fields, 50, 8);
  int moved = 0;
  double log_sum = 0;
  for (size_t s = 0; s < a.size(); ++s) {
    CHECK(a[s].inter_node.nic_bandwidth.si() == b[s].inter_node.nic_bandwidth.si());
    moved += a[s].inter_node.nic_bandwidth.si() != c[s].inter_node.nic_bandwidth.si();
    CHECK(ValidateCluster(a[s], "").empty());
    log_sum += std::log(a[s].inter_node.nic_bandwidth.si() / base.inter_node.nic_bandwidth.si());
  }
  CHECK(moved == 50);
  CHECK(std::abs(log_sum / 50) < 3 * 0.125 / std::sqrt(50.0));   // centred on the profile's value
}

TEST_CASE("uncertainty: deterministic across thread counts; no draws reduce to the plain plan", "[planner][uncertainty]") {
  Setup s;
  const PlanResult base = s.Plan();
  REQUIRE(base.plans.size() == 4);
  const UncertaintyResult one = RunUncertainty(s.model, s.cluster, s.job, base, s.options, 6);
  PlanOptions threaded = s.options;
  threaded.threads = 3;
  const UncertaintyResult three = RunUncertainty(s.model, s.cluster, s.job, base, threaded, 6);
  // Every field the JSON report prints, bit for bit.
  CHECK(one.samples == three.samples);
  CHECK(one.seed == three.seed);
  CHECK(one.other_first == three.other_first);
  REQUIRE(one.plans.size() == three.plans.size());
  for (size_t k = 0; k < one.plans.size(); ++k) {
    CHECK(one.plans[k].config == three.plans[k].config);
    CHECK(one.plans[k].base_tokens_per_s == three.plans[k].base_tokens_per_s);
    CHECK(one.plans[k].p10 == three.plans[k].p10);
    CHECK(one.plans[k].p50 == three.plans[k].p50);
    CHECK(one.plans[k].p90 == three.plans[k].p90);
    CHECK(one.plans[k].ranked_first == three.plans[k].ranked_first);
  }
  CHECK(UncertaintyToTable(one) == UncertaintyToTable(three));
  int firsts = one.other_first;
  for (const PlanSpread& p : one.plans) {
    CHECK(p.p10 <= p.p50);
    CHECK(p.p50 <= p.p90);
    firsts += p.ranked_first;
  }
  CHECK(firsts == 6);
  CHECK(one.fields.size() == RegistryUncertainFields().size());
  CHECK(UncertaintyToTable(one).find(std::to_string(one.fields.size()) + " fields perturbed") != std::string::npos);

  // No uncertain field: every draw is the profile itself, so each plan's spread
  // is its own throughput and the plain plan's winner ranks first every time.
  const UncertaintyResult none = RunUncertainty(s.model, s.cluster, s.job, base, s.options, 5, {});
  CHECK(none.plans[0].ranked_first == 5);
  for (size_t k = 0; k < none.plans.size(); ++k) {
    CHECK(none.plans[k].p10 == base.plans[k].tokens_per_s);
    CHECK(none.plans[k].p90 == base.plans[k].tokens_per_s);
  }
  // N = 0: nothing drawn, nothing re-planned.
  const UncertaintyResult zero = RunUncertainty(s.model, s.cluster, s.job, base, s.options, 0);
  CHECK(zero.samples == 0);
  CHECK(zero.other_first == 0);
  CHECK_THROWS_WITH(RunUncertainty(s.model, s.cluster, s.job, base, s.options, -1), Catch::Contains("--uncertainty"));
}
