// torch's context parallel (torch/distributed/tensor/experimental/
// _attention.py): the load-balanced ring loop's attention work in closed
// form, and what its all-gather kind costs beside it (merges, packs, the
// fp32 dK,dV ring) against Transformer Engine's one-call all-gather.
#include <catch2/catch.hpp>

#include <vector>

#include "core/loaders.h"
#include "cost_model/comm_plan.h"
#include "cost_model/evaluator.h"
#include "cost_model/flops.h"
#include "cost_model/layer_cost.h"
#include "cp_plan_util.h"
#include "report_dimensions.h"
#include "test_specs.h"

using namespace parasim;
using parasim::testing::CpBytes;
using parasim::testing::CpConfig;
using parasim::testing::CpInputs;
using parasim::testing::DimExposed;
using Catch::Matchers::WithinRel;

namespace {

// Query-key pairs one rank's attention calls compute in torch's loop with
// round-robin load balancing (_generate_round_robin_indices: rank r holds
// chunks r and 2cp−1−r of s/(2cp) tokens; _is_causal_behavior and
// _templated_ring_attention's three branches): step 0 the local q, k causal
// (a causal call over n queries and n keys computes n(n+1)/2 pairs); step
// i ≤ r all local queries against the first chunk of the source rank's K;
// step i > r the second query chunk against all the source's K. Each
// computed pair is checked to be one the causal mask needs (key position ≤
// query position), so no call does wasted work.
double TorchLoopPairs(int s, int cp, int rank, bool* all_needed) {
  const int c = s / (2 * cp);
  auto chunks_of = [&](int r) { return std::vector<int>{r, 2 * cp - 1 - r}; };
  auto pos = [&](int chunk, int j) { return chunk * c + j; };
  double pairs = 0;
  for (int i = 0; i < cp; ++i) {
    const int src = ((rank - i) % cp + cp) % cp;
    std::vector<int> q_chunks = chunks_of(rank), k_chunks = chunks_of(src);
    const bool causal = i == 0;
    if (i > 0 && i <= rank) k_chunks = {k_chunks[0]};
    if (i > rank) q_chunks = {q_chunks[1]};
    // The call's local sequences: the chunks concatenated in order.
    std::vector<int> q_pos, k_pos;
    for (int ch : q_chunks)
      for (int j = 0; j < c; ++j) q_pos.push_back(pos(ch, j));
    for (int ch : k_chunks)
      for (int j = 0; j < c; ++j) k_pos.push_back(pos(ch, j));
    for (size_t a = 0; a < q_pos.size(); ++a) {
      for (size_t b = 0; b < k_pos.size(); ++b) {
        if (causal && b > a) continue;   // is_causal=True masks by local index
        pairs += 1;
        if (k_pos[b] > q_pos[a]) *all_needed = false;
      }
    }
  }
  return pairs;
}

}  // namespace

TEST_CASE("cost_model: torch's load-balanced CP loop computes each rank's causal share exactly", "[cost_model][cp]") {
  // Every rank computes s(s+1)/(2cp) pairs, all needed: the causal count
  // split evenly, what parasim's attention FLOPs (4·T·s·a·d, half of it
  // computed) price, up to the diagonal's s/(2cp).
  const int s = 96;
  for (int cp : {1, 2, 4, 8}) {
    if (s % (2 * cp) != 0) continue;
    INFO("cp=" << cp);
    for (int r = 0; r < cp; ++r) {
      bool needed = true;
      const double pairs = TorchLoopPairs(s, cp, r, &needed);
      CHECK(needed);
      CHECK(pairs == s * (s + 1.0) / (2.0 * cp));
    }
    // parasim: half the full count of T = s/cp queries against s keys.
    const ModelSpec m = testing::Llama2_7b();
    const ModelFlops f = CountModelFlops(m);
    const double priced_pairs = 0.5 * LayerForwardFlops(f, s / cp, s, 1).attention / (4.0 * f.attn_width);
    CHECK_THAT(priced_pairs, WithinRel(s * s / (2.0 * cp), 1e-12));
  }
}

TEST_CASE("cost_model: torch's all-gather CP moves K,V once and rotates fp32 dK,dV", "[cost_model][cp]") {
  const SoftwareStack torch = LoadSoftwareStack("torchtitan");
  REQUIRE(torch.cp_allgather_ring_loop);
  const double T = 4096, q = 4096, g = 1024;
  const double kv = T * 2 * g * 2;   // this rank's K,V in bf16
  for (int cp : {2, 4, 8}) {
    INFO("cp=" << cp);
    const CommPlan p = BuildCommPlan(CpConfig(cp, CpComm::kAllGather), torch, CpInputs(T, q, g));
    CHECK(CpBytes(p, CommPhase::kForward) == cp * kv);
    // The gather again, then cp exchanges of the fp32 dK,dV (2x the bf16 K,V).
    CHECK(CpBytes(p, CommPhase::kBackward, CollectiveOp::kAllGather) == cp * kv);
    CHECK(CpBytes(p, CommPhase::kBackward, CollectiveOp::kSendRecv) == cp * 2 * kv);
    CHECK(CpBytes(p, CommPhase::kBackward, CollectiveOp::kReduceScatter) == 0);
    int blocking = 0;
    for (const WorkloadCollective& c : p.layer) blocking += c.blocking ? c.count : 0;
    CHECK(blocking == 1);   // the last dK,dV exchange, waited after the loop
  }
}

TEST_CASE("cost_model: torch's all-gather CP pays the ring's merge and pack traffic, same attention",
          "[cost_model][cp]") {
  const SoftwareStack torch = LoadSoftwareStack("torchtitan");
  SoftwareStack one_call = torch;   // Transformer Engine's kind: one call on the gathered K,V
  one_call.cp_allgather_ring_loop = false;
  ModelSpec m = testing::Llama2_7b();
  m.num_kv_heads = 8;
  const double S = 65536;
  const LayerCostModel loop_lcm = MakeLayerCostModel(m, testing::NominalH100Rates(), torch, static_cast<int64_t>(S));
  const LayerCostModel one_lcm = MakeLayerCostModel(m, testing::NominalH100Rates(), one_call, static_cast<int64_t>(S));
  const double ad = static_cast<double>(m.num_attention_heads * m.HeadDim());
  double previous = 0;
  for (int cp : {2, 4, 8}) {
    INFO("cp=" << cp);
    const double T = S / cp;
    const UnitCost loop = TransformerLayerCost(loop_lcm, CpConfig(cp, CpComm::kAllGather), T);
    const UnitCost one = TransformerLayerCost(one_lcm, CpConfig(cp, CpComm::kAllGather), T);
    // The same attention calls' work and kernel time.
    CHECK(loop.fwd_flops == one.fwd_flops);
    CHECK(loop.fwd.attention == one.fwd.attention);
    CHECK(loop.bwd.attention == one.bwd.attention);
    // Closed form: torchtitan repeats K,V to every head (a·d wide).
    const double out = T * ad, kv = 2 * T * ad;
    const double fwd = out * (torch.cp_merge_bytes_fixed + (cp - 1) * torch.cp_merge_bytes_per_step) +
                       kv * (cp - 1) * torch.cp_kv_pack_bytes_per_step;
    const double bwd = (out + kv) * (torch.cp_grad_bytes_fixed + cp * torch.cp_grad_bytes_per_step) +
                       kv * cp * torch.cp_dkv_pack_bytes_per_step;
    CHECK_THAT(loop.fwd_bytes - one.fwd_bytes, WithinRel(fwd, 1e-12));
    CHECK_THAT(loop.bwd_bytes - one.bwd_bytes, WithinRel(bwd, 1e-12));
    CHECK(loop.fwd.Total() > one.fwd.Total());
    // Fixed sequence: the loop's extra traffic per layer grows with cp.
    CHECK(fwd + bwd > previous);
    previous = fwd + bwd;
  }
}

TEST_CASE("cost_model: torch's all-gather CP: its merges cost time, its gathers hide, step time grows with cp",
          "[cost_model][cp]") {
  const ClusterSpec node = testing::Dgx(testing::H100(), 1);
  const SoftwareStack torch = LoadSoftwareStack("torchtitan");
  SoftwareStack no_traffic = torch;   // the same loop without its merge and pack traffic
  no_traffic.cp_merge_bytes_fixed = no_traffic.cp_merge_bytes_per_step = 0;
  no_traffic.cp_grad_bytes_fixed = no_traffic.cp_grad_bytes_per_step = 0;
  no_traffic.cp_kv_pack_bytes_per_step = no_traffic.cp_dkv_pack_bytes_per_step = 0;
  SoftwareStack one_call = torch;     // Transformer Engine's kind: blocking gather and reduce-scatter
  one_call.cp_allgather_ring_loop = false;
  const ModelSpec m = testing::Llama2_7b();
  double previous = 0;
  for (int cp : {2, 4, 8}) {
    INFO("cp=" << cp);
    const JobSpec job = testing::Job(8 / cp, 16384 * cp);   // 16K tokens per GPU, as torchtitan's Table 2
    const std::string cfg = "dp=" + std::to_string(8 / cp) + ",cp=" + std::to_string(cp) +
                            ",sharding=zero3,recompute=full,cp_comm=allgather";
    const ParallelConfig c = ParseParallelConfig(cfg);
    const Report loop = AnalyticalEvaluator(m, node, job, torch).Evaluate(c);
    const Report bare = AnalyticalEvaluator(m, node, job, no_traffic).Evaluate(c);
    const Report one = AnalyticalEvaluator(m, node, job, one_call).Evaluate(c);
    REQUIRE(loop.feasible);
    CHECK(loop.step_time.si() > bare.step_time.si());
    // The gather waits one attention call in torch; Transformer Engine's blocks.
    CHECK(DimExposed(loop, "cp") < DimExposed(one, "cp"));
    CHECK(loop.step_time.si() > previous);
    previous = loop.step_time.si();
  }
}
