// Context-parallel kinds (ParallelConfig::cp_comm): closed-form volumes,
// which kind moves less, monotonicity in cp, the heads rule.
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

// Bytes one rank sends in `phase`: a ring step sends its block, an all-to-all
// (cp−1)/cp of its buffer, an all-gather (cp−1)/cp of its output, a
// reduce-scatter (cp−1)/cp of its input.
double CpSentBytes(const CommPlan& p, CommPhase phase, int cp) {
  double b = 0;
  for (const WorkloadCollective& c : p.layer) {
    if (c.dim != ParallelDim::kCp || c.phase != phase) continue;
    const double share = c.op == CollectiveOp::kSendRecv ? 1.0 : (cp - 1.0) / cp;
    b += share * c.size.si() * c.count;
  }
  return b;
}

}  // namespace

TEST_CASE("cost_model: CP kinds move their closed-form volumes", "[cost_model][cp]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const double T = 4096, q = 4096, g = 1024;   // GQA: 4x fewer key/value heads
  const double kv = T * 2 * g * 2, qb = T * q * 2;   // this rank's K,V and Q (bf16)
  for (int cp : {2, 4, 8}) {
    INFO("cp=" << cp);
    const CommPlan ring = BuildCommPlan(CpConfig(cp, CpComm::kP2p), s, CpInputs(T, q, g));
    CHECK(CpBytes(ring, CommPhase::kForward) == (cp - 1) * kv);
    CHECK(CpBytes(ring, CommPhase::kBackward) == 2 * (cp - 1) * kv);
    // Ulysses: q and the output, k and v, each all-to-all'd once per direction.
    const CommPlan a2a = BuildCommPlan(CpConfig(cp, CpComm::kA2a), s, CpInputs(T, q, g));
    CHECK(CpBytes(a2a, CommPhase::kForward) == 2 * qb + kv);
    CHECK(CpBytes(a2a, CommPhase::kBackward) == 2 * qb + kv);
    int a2a_ops = 0;
    for (const WorkloadCollective& c : a2a.layer)
      if (c.phase == CommPhase::kForward) a2a_ops += c.count;
    CHECK(a2a_ops == 4);
    // All-gather: the sequence's K,V forward; again, and dK,dV reduce-scattered, backward.
    const CommPlan ag = BuildCommPlan(CpConfig(cp, CpComm::kAllGather), s, CpInputs(T, q, g));
    CHECK(CpBytes(ag, CommPhase::kForward) == cp * kv);
    CHECK(CpBytes(ag, CommPhase::kBackward) == 2 * cp * kv);
    for (const WorkloadCollective& c : a2a.layer) CHECK(c.blocking);
    for (const WorkloadCollective& c : ring.layer) CHECK_FALSE(c.blocking);
  }
}

TEST_CASE("cost_model: a2a sends less than the ring exactly when cp·KV > 2Q + KV", "[cost_model][cp]") {
  // Per rank: ring (cp−1)·KV, a2a (cp−1)/cp·(2Q + KV). MHA (KV = 2Q): the
  // ring sends cp/2 times more, equal at cp = 2. GQA with 8x fewer K/V heads
  // (KV = Q/4): the ring sends cp/9 as much, less up to cp = 8.
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const double T = 4096;
  for (int cp : {2, 4, 8, 16}) {
    INFO("cp=" << cp);
    const double mha_ring = CpSentBytes(BuildCommPlan(CpConfig(cp, CpComm::kP2p), s, CpInputs(T, 4096, 4096)),
                                        CommPhase::kForward, cp);
    const double mha_a2a = CpSentBytes(BuildCommPlan(CpConfig(cp, CpComm::kA2a), s, CpInputs(T, 4096, 4096)),
                                       CommPhase::kForward, cp);
    CHECK_THAT(mha_ring / mha_a2a, WithinRel(cp / 2.0, 1e-12));
    const double gqa_ring = CpSentBytes(BuildCommPlan(CpConfig(cp, CpComm::kP2p), s, CpInputs(T, 4096, 512)),
                                        CommPhase::kForward, cp);
    const double gqa_a2a = CpSentBytes(BuildCommPlan(CpConfig(cp, CpComm::kA2a), s, CpInputs(T, 4096, 512)),
                                       CommPhase::kForward, cp);
    CHECK_THAT(gqa_ring / gqa_a2a, WithinRel(cp / 9.0, 1e-12));
  }
}

TEST_CASE("cost_model: timed on a node, a2a beats the ring for MHA at cp=8, loses for GQA at cp=2",
          "[cost_model][cp]") {
  const ClusterSpec node = testing::Dgx(testing::H100(), 1);
  const JobSpec job = testing::Job(8, 32768);
  const ModelSpec mha = testing::Llama2_7b();
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const AnalyticalEvaluator e_mha(mha, node, job, s);
  const Report ring8 = e_mha.Evaluate(ParseParallelConfig("dp=1,cp=8,sharding=zero1"));
  const Report a2a8 = e_mha.Evaluate(ParseParallelConfig("dp=1,cp=8,sharding=zero1,cp_comm=a2a"));
  CHECK(DimTotal(a2a8, "cp") < DimTotal(ring8, "cp"));
  ModelSpec gqa = mha;
  gqa.num_kv_heads = 4;   // KV = Q/4
  const AnalyticalEvaluator e_gqa(gqa, node, job, s);
  const Report ring2 = e_gqa.Evaluate(ParseParallelConfig("dp=4,cp=2,sharding=zero1"));
  const Report a2a2 = e_gqa.Evaluate(ParseParallelConfig("dp=4,cp=2,sharding=zero1,cp_comm=a2a"));
  CHECK(DimTotal(ring2, "cp") < DimTotal(a2a2, "cp"));
  // The blocking kinds are exposed in full; the ring hides steps under attention.
  CHECK(DimExposed(a2a8, "cp") == DimTotal(a2a8, "cp"));
  CHECK(DimExposed(ring8, "cp") < DimTotal(ring8, "cp"));
}

TEST_CASE("cost_model: CP group traffic grows with cp for every kind; attention per GPU shrinks",
          "[cost_model][cp]") {
  // Fixed sequence (tokens per rank = S/cp): the bytes all cp ranks send together.
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const double S = 65536;
  for (CpComm kind : {CpComm::kP2p, CpComm::kA2a, CpComm::kAllGather}) {
    INFO(ToString(kind));
    double previous = 0;
    for (int cp : {2, 4, 8, 16}) {
      const CommPlan p = BuildCommPlan(CpConfig(cp, kind), s, CpInputs(S / cp, 4096, 1024));
      const double group = cp * (CpSentBytes(p, CommPhase::kForward, cp) + CpSentBytes(p, CommPhase::kBackward, cp));
      CHECK(group > previous);
      previous = group;
    }
  }
  const ModelSpec m = testing::Llama2_7b();
  const LayerCostModel lcm = MakeLayerCostModel(m, testing::NominalH100Rates(), s, 65536);
  for (CpComm kind : {CpComm::kP2p, CpComm::kA2a, CpComm::kAllGather}) {
    INFO(ToString(kind));
    double previous = 1e300;
    for (int cp : {2, 4, 8}) {
      const UnitCost u = TransformerLayerCost(lcm, CpConfig(cp, kind), 65536.0 / cp);
      CHECK(u.fwd.attention < previous);
      previous = u.fwd.attention;
    }
  }
}

TEST_CASE("cost_model: all-gather CP holds the gathered K,V; a2a and the ring do not", "[cost_model][cp]") {
  const ClusterSpec node = testing::Dgx(testing::H100(), 1);
  const AnalyticalEvaluator e(testing::Llama2_7b(), node, testing::Job(8, 32768), LoadSoftwareStack("megatron-core"));
  const Report ring = e.Evaluate(ParseParallelConfig("dp=1,cp=8,sharding=zero1"));
  const Report ag = e.Evaluate(ParseParallelConfig("dp=1,cp=8,sharding=zero1,cp_comm=allgather"));
  const Report a2a = e.Evaluate(ParseParallelConfig("dp=1,cp=8,sharding=zero1,cp_comm=a2a"));
  // Backward: K,V of the whole sequence and their gradients, bf16, one layer;
  // the peak is a maximum over phases, so it rises by at most that (with the
  // allocator's slack).
  const double gathered = 2.0 * 32768 * 2 * 4096 * 2;
  CHECK(ag.memory_per_gpu.si() > ring.memory_per_gpu.si());
  CHECK(ag.memory_per_gpu.si() - ring.memory_per_gpu.si() <= 1.05 * gathered);
  CHECK(a2a.memory_per_gpu.si() <= ring.memory_per_gpu.si());
}

TEST_CASE("cost_model: a2a CP needs the query and key/value heads to split over tp·cp", "[cost_model][cp]") {
  const ModelSpec llama3 = LoadModel("llama3-8b");   // 32 query heads, 8 key/value heads
  CHECK(CpCommProblem(llama3, 1, 8, CpComm::kA2a).empty());
  CHECK(CpCommProblem(llama3, 2, 4, CpComm::kA2a).empty());
  const std::string problem = CpCommProblem(llama3, 2, 8, CpComm::kA2a);
  CHECK_THAT(problem, Catch::Matchers::Contains("8 key/value heads"));
  CHECK(CpCommProblem(llama3, 2, 8, CpComm::kP2p).empty());
  CHECK(CpCommProblem(llama3, 2, 8, CpComm::kAllGather).empty());
  const JobSpec job = testing::Job(8, 8192);
  const ParallelConfig bad = ParseParallelConfig("dp=1,tp=2,cp=8,cp_comm=a2a");
  bool named = false;
  for (const Issue& i : bad.Validate(llama3, job, 16)) named = named || i.key == "cp_comm";
  CHECK(named);
}

TEST_CASE("cost_model: cp_comm round-trips through the config text; ring stays implicit", "[cost_model][cp]") {
  const ParallelConfig a2a = ParseParallelConfig("dp=2,cp=4,cp_comm=a2a");
  CHECK(a2a.cp_comm == CpComm::kA2a);
  CHECK(ParseParallelConfig(a2a.ToString()).cp_comm == CpComm::kA2a);
  CHECK(ParseParallelConfig("dp=2,cp=4").ToString().find("cp_comm") == std::string::npos);
  CHECK_THROWS_AS(ParseParallelConfig("dp=2,cp=4,cp_comm=ulysses"), InvalidInput);
}

TEST_CASE("cost_model: the evaluator's memo tells CP kinds apart", "[cost_model][cp]") {
  // Same degrees and micro-batch, different kind: a memo keyed without the
  // kind would hand one kind's units or collectives to the other.
  const ClusterSpec node = testing::Dgx(testing::H100(), 1);
  const JobSpec job = testing::Job(8, 32768);
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  const AnalyticalEvaluator shared(testing::Llama2_7b(), node, job, s);
  for (const char* kind : {"p2p", "a2a", "allgather", "a2a", "p2p"}) {
    INFO(kind);
    const ParallelConfig c = ParseParallelConfig(std::string("dp=1,cp=8,sharding=zero1,cp_comm=") + kind);
    const Report warm = shared.Evaluate(c);
    const Report fresh = AnalyticalEvaluator(testing::Llama2_7b(), node, job, s).Evaluate(c);
    CHECK(warm.step_time.si() == fresh.step_time.si());
    CHECK(warm.memory_per_gpu.si() == fresh.memory_per_gpu.si());
    CHECK(DimTotal(warm, "cp") == DimTotal(fresh, "cp"));
  }
}

TEST_CASE("cost_model: a stack that repeats K/V before attention moves a*d-wide K/V over CP", "[cost_model][cp]") {
  // torchtitan's CP hooks SDPA after repeat_kv: GQA saves nothing on the wire.
  const ClusterSpec node = testing::Dgx(testing::H100(), 1);
  const JobSpec job = testing::Job(8, 32768);
  ModelSpec gqa = testing::Llama2_7b();
  gqa.num_kv_heads = 4;
  SoftwareStack grouped = LoadSoftwareStack("torchtitan");
  REQUIRE(grouped.repeats_kv_heads);
  const SoftwareStack repeated = grouped;
  grouped.repeats_kv_heads = false;
  for (const char* cfg : {"dp=4,cp=2,sharding=zero1", "dp=4,cp=2,sharding=zero1,cp_comm=allgather"}) {
    INFO(cfg);
    const double r = DimTotal(AnalyticalEvaluator(gqa, node, job, repeated).Evaluate(ParseParallelConfig(cfg)), "cp");
    const double g = DimTotal(AnalyticalEvaluator(gqa, node, job, grouped).Evaluate(ParseParallelConfig(cfg)), "cp");
    CHECK(r > g);
  }
}
