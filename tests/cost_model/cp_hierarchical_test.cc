// Megatron's hierarchical context parallelism (cp_comm=a2a+p2p, cp_a2a_size):
// its limits are the plain kinds, its volumes a closed form, and across nodes
// it beats an all-to-all that would leave the node.
#include <catch2/catch.hpp>

#include <string>

#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/comm_plan.h"
#include "cost_model/evaluator.h"
#include "cost_model/layer_cost.h"
#include "cp_plan_util.h"
#include "report_dimensions.h"
#include "test_specs.h"

using namespace parasim;
using parasim::testing::CpBytes;
using parasim::testing::CpConfig;
using parasim::testing::CpInputs;
using parasim::testing::DimExposed;
using parasim::testing::DimTotal;
using Catch::Matchers::WithinRel;

namespace {

ParallelConfig Hier(int cp, int a2a_size) {
  ParallelConfig c;
  c.cp = cp;
  c.cp_comm = CpComm::kA2aP2p;
  c.cp_a2a_size = a2a_size;
  return c;
}

bool SameCollectives(const CommPlan& a, const CommPlan& b) {
  if (a.layer.size() != b.layer.size()) return false;
  for (size_t i = 0; i < a.layer.size(); ++i) {
    const WorkloadCollective &x = a.layer[i], &y = b.layer[i];
    if (x.op != y.op || x.size.si() != y.size.si() || x.count != y.count || x.phase != y.phase ||
        x.blocking != y.blocking || x.sub.size != y.sub.size || x.sub.stride != y.sub.stride)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cost_model: a2a+p2p moves the all-to-alls over its group and the ring over the rest",
          "[cost_model][cp]") {
  // cp = 8 as 2 (all-to-all) x 4 (ring). After the all-to-all a rank holds
  // 2T tokens of half the heads, so a ring step carries the plain ring's K,V.
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const double T = 4096, q = 4096, g = 1024;
  const double kv = T * 2 * g * 2, qb = T * q * 2;   // this rank's K,V and Q (bf16)
  const CommPlan p = BuildCommPlan(Hier(8, 2), s, CpInputs(T, q, g));
  for (CommPhase phase : {CommPhase::kForward, CommPhase::kBackward}) {
    CHECK(CpBytes(p, phase, CollectiveOp::kAllToAll) == 2 * qb + kv);
  }
  CHECK(CpBytes(p, CommPhase::kForward, CollectiveOp::kSendRecv) == 3 * kv);
  CHECK(CpBytes(p, CommPhase::kBackward, CollectiveOp::kSendRecv) == 2 * 3 * kv);
  int a2a_fwd = 0, ring_steps = 0;
  for (const WorkloadCollective& c : p.layer) {
    if (c.dim != ParallelDim::kCp) continue;
    if (c.op == CollectiveOp::kAllToAll) {
      // Consecutive cp ranks (Megatron's level-1 group), blocking.
      CHECK(c.sub.size == 2);
      CHECK(c.sub.stride == 1);
      CHECK(c.blocking);
      if (c.phase == CommPhase::kForward) a2a_fwd += c.count;
    } else {
      // Every second cp rank (level 2), beside the attention blocks.
      CHECK(c.sub.size == 4);
      CHECK(c.sub.stride == 2);
      CHECK_FALSE(c.blocking);
      if (c.phase == CommPhase::kForward) ring_steps += c.count;
    }
  }
  CHECK(a2a_fwd == 4);      // q, k, v before attention, the output after it
  CHECK(ring_steps == 3);   // ring of 4: 3 steps
}

TEST_CASE("cost_model: a2a+p2p with an all-to-all group of 1 is the ring, of cp the all-to-all",
          "[cost_model][cp]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  for (int cp : {2, 4, 16}) {
    INFO("cp=" << cp);
    CHECK(SameCollectives(BuildCommPlan(Hier(cp, 1), s, CpInputs(4096, 4096, 1024)),
                          BuildCommPlan(CpConfig(cp, CpComm::kP2p), s, CpInputs(4096, 4096, 1024))));
    CHECK(SameCollectives(BuildCommPlan(Hier(cp, cp), s, CpInputs(4096, 4096, 1024)),
                          BuildCommPlan(CpConfig(cp, CpComm::kA2a), s, CpInputs(4096, 4096, 1024))));
  }
  // The whole step on two nodes (the ring and the all-to-all cross them).
  const ClusterSpec nodes = testing::Dgx(testing::H100(), 2);
  const AnalyticalEvaluator e(testing::Llama2_7b(), nodes, testing::Job(8, 65536), s);
  const struct {
    const char* hier;
    const char* plain;
  } cases[] = {{"dp=1,cp=16,sharding=zero1,cp_comm=a2a+p2p,cp_a2a_size=1", "dp=1,cp=16,sharding=zero1"},
               {"dp=1,cp=16,sharding=zero1,cp_comm=a2a+p2p,cp_a2a_size=16", "dp=1,cp=16,sharding=zero1,cp_comm=a2a"},
               {"dp=1,cp=16,sharding=zero1,recompute=full,cp_comm=a2a+p2p,cp_a2a_size=1",
                "dp=1,cp=16,sharding=zero1,recompute=full"}};
  for (const auto& k : cases) {
    INFO(k.hier);
    const Report h = e.Evaluate(ParseParallelConfig(k.hier));
    const Report p = e.Evaluate(ParseParallelConfig(k.plain));
    CHECK(h.step_time.si() == p.step_time.si());
    CHECK(h.memory_per_gpu.si() == p.memory_per_gpu.si());
    CHECK(DimTotal(h, "cp") == DimTotal(p, "cp"));
    CHECK(DimExposed(h, "cp") == DimExposed(p, "cp"));
  }
}

TEST_CASE("cost_model: across nodes a2a+p2p beats an all-to-all that leaves the node", "[cost_model][cp]") {
  // Llama-2 7B (MHA, 32 heads), 4096 tokens per GPU, cp = 8 per node.
  // Pure a2a over 16 or 32 ranks sends its all-to-alls over the NICs; the
  // hierarchical kind keeps them in the node (a2a group 8) and passes K,V
  // over the NICs in ring steps hidden under attention blocks.
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  double previous_a2a_cp = 0;
  for (int nodes : {1, 2, 4}) {
    INFO("nodes=" << nodes);
    const int cp = 8 * nodes;
    const AnalyticalEvaluator e(testing::Llama2_7b(), testing::Dgx(testing::H100(), nodes),
                                testing::Job(8, 4096 * cp), s);
    const std::string base = "dp=1,cp=" + std::to_string(cp) + ",sharding=zero1";
    const Report a2a = e.Evaluate(ParseParallelConfig(base + ",cp_comm=a2a"));
    const Report hier = e.Evaluate(ParseParallelConfig(base + ",cp_comm=a2a+p2p,cp_a2a_size=8"));
    // The saved q, k, v and output hold the same elements per rank as the
    // plain kinds' (a·T tokens of 1/a of the heads): no memory of its own.
    const Report ring = e.Evaluate(ParseParallelConfig(base));
    CHECK(hier.memory_per_gpu.si() == ring.memory_per_gpu.si());
    CHECK(hier.memory_per_gpu.si() == a2a.memory_per_gpu.si());
    if (nodes == 1) {
      // The all-to-all group is the whole cp: the same as a2a.
      CHECK(hier.step_time.si() == a2a.step_time.si());
    } else {
      CHECK(hier.step_time.si() < a2a.step_time.si());
      CHECK(DimExposed(hier, "cp") < DimExposed(a2a, "cp"));
    }
    // Same bytes per rank, more of the group behind the NICs: a2a's time grows.
    CHECK(DimTotal(a2a, "cp") > previous_a2a_cp);
    previous_a2a_cp = DimTotal(a2a, "cp");
    // Part of the ring hides under attention; the all-to-alls do not.
    if (nodes > 1) CHECK(DimExposed(hier, "cp") < DimTotal(hier, "cp"));
  }
}

TEST_CASE("cost_model: a2a+p2p's attention kernels see the all-to-all group's share of the sequence",
          "[cost_model][cp]") {
  // Kernel sequence s/ring: between the ring's s/cp and a2a's s, so the
  // attention per GPU is between theirs (longer kernels run more efficiently).
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const LayerCostModel lcm = MakeLayerCostModel(testing::Llama2_7b(), testing::NominalH100Rates(), s, 65536);
  const double T = 65536.0 / 16;
  const double ring = TransformerLayerCost(lcm, CpConfig(16, CpComm::kP2p), T).fwd.attention;
  const double hier = TransformerLayerCost(lcm, Hier(16, 4), T).fwd.attention;
  const double a2a = TransformerLayerCost(lcm, CpConfig(16, CpComm::kA2a), T).fwd.attention;
  CHECK(a2a <= hier);
  CHECK(hier <= ring);
  CHECK(a2a < ring);
}

TEST_CASE("cost_model: cp_a2a_size round-trips and is checked", "[cost_model][cp]") {
  const ParallelConfig c = ParseParallelConfig("dp=1,cp=8,cp_comm=a2a+p2p,cp_a2a_size=2");
  CHECK(c.cp_comm == CpComm::kA2aP2p);
  CHECK(c.cp_a2a_size == 2);
  CHECK(c.CpA2aSize() == 2);
  CHECK(c.CpRingSize() == 4);
  const ParallelConfig back = ParseParallelConfig(c.ToString());
  CHECK(back.cp_comm == CpComm::kA2aP2p);
  CHECK(back.cp_a2a_size == 2);
  CHECK(back.ToString() == c.ToString());
  CHECK(ParseParallelConfig("dp=1,cp=8").ToString().find("cp_a2a_size") == std::string::npos);
  CHECK_THROWS_AS(ParseParallelConfig("dp=1,cp=8,cp_comm=a2a+p2p,cp_a2a_size=0"), InvalidInput);
  CHECK_THROWS_AS(ParseParallelConfig("dp=1,cp=8,cp_comm=a2a+p2p,cp_a2a_size=two"), InvalidInput);

  const ModelSpec llama3 = LoadModel("llama3-8b");   // 32 query heads, 8 key/value heads
  const JobSpec job = testing::Job(8, 8192);
  auto issue_keys = [&](const std::string& text, int world) {
    std::string keys;
    for (const Issue& i : ParseParallelConfig(text).Validate(llama3, job, world)) keys += i.key + " ";
    return keys;
  };
  CHECK(issue_keys("dp=1,cp=8,cp_comm=a2a+p2p,cp_a2a_size=2", 8).empty());
  CHECK(issue_keys("dp=1,tp=2,cp=8,cp_comm=a2a+p2p,cp_a2a_size=4", 16).empty());
  // Does not divide cp; not given; given without the kind; heads 8 over tp·a2a = 16.
  CHECK(issue_keys("dp=1,cp=8,cp_comm=a2a+p2p,cp_a2a_size=3", 8) == "cp_a2a_size ");
  CHECK(issue_keys("dp=1,cp=8,cp_comm=a2a+p2p", 8) == "cp_a2a_size ");
  CHECK(issue_keys("dp=1,cp=8,cp_a2a_size=2", 8) == "cp_a2a_size ");
  CHECK(issue_keys("dp=1,tp=2,cp=8,cp_comm=a2a+p2p,cp_a2a_size=8", 16) == "cp_a2a_size ");
  CHECK_THAT(CpCommProblem(llama3, 2, 8, CpComm::kA2aP2p, 8), Catch::Matchers::Contains("8 key/value heads"));
  // The plain all-to-all over the same 16 ranks fails the same rule, but the
  // hierarchical kind with a smaller group runs.
  CHECK_FALSE(CpCommProblem(llama3, 2, 8, CpComm::kA2a).empty());
  CHECK(CpCommProblem(llama3, 2, 8, CpComm::kA2aP2p, 4).empty());
}

TEST_CASE("cost_model: the evaluator's memo tells a2a+p2p group sizes apart", "[cost_model][cp]") {
  const ClusterSpec nodes = testing::Dgx(testing::H100(), 2);
  const JobSpec job = testing::Job(8, 65536);
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const AnalyticalEvaluator shared(testing::Llama2_7b(), nodes, job, s);
  for (int a : {2, 8, 4, 2, 8}) {
    INFO("cp_a2a_size=" << a);
    const ParallelConfig c =
        ParseParallelConfig("dp=1,cp=16,sharding=zero1,cp_comm=a2a+p2p,cp_a2a_size=" + std::to_string(a));
    const Report warm = shared.Evaluate(c);
    const Report fresh = AnalyticalEvaluator(testing::Llama2_7b(), nodes, job, s).Evaluate(c);
    CHECK(warm.step_time.si() == fresh.step_time.si());
    CHECK(DimTotal(warm, "cp") == DimTotal(fresh, "cp"));
    CHECK(DimExposed(warm, "cp") == DimExposed(fresh, "cp"));
  }
}
