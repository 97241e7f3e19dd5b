#include <catch2/catch.hpp>

#include <algorithm>

#include "core/parallel_config.h"
#include "cost_model/layer_cost.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;


TEST_CASE("cost_model: context parallelism adds exactly the ring merge's HBM traffic", "[cost_model]") {
  const ModelSpec model = testing::Llama2_7b();
  const SoftwareStack stack = LoadSoftwareStack("pytorch-fsdp");
  const LayerCostModel m = MakeLayerCostModel(model, testing::NominalH100Rates(), stack, 4096);
  // Same tokens per GPU (2 × 4096 / cp), same kernels: only the merge differs.
  const double h = static_cast<double>(model.hidden_size);
  for (int cp : {2, 4, 8}) {
    const double T = 8192.0 / cp;
    ParallelConfig base = ParseParallelConfig("dp=1");
    ParallelConfig ring = ParseParallelConfig(StrCat("dp=1,cp=", cp));
    const UnitCost a = TransformerLayerCost(m, base, T);
    const UnitCost b = TransformerLayerCost(m, ring, T);
    // Llama-2-7B is multi-head: q, k, v and the output are T×h each.
    const double fwd = T * h * (stack.cp_merge_bytes_fixed + (cp - 1) * stack.cp_merge_bytes_per_step);
    const double bwd = 3.0 * T * h * (stack.cp_grad_bytes_fixed + cp * stack.cp_grad_bytes_per_step);
    CHECK_THAT(b.fwd_bytes - a.fwd_bytes, WithinRel(fwd, 1e-12));
    CHECK_THAT(b.bwd_bytes - a.bwd_bytes, WithinRel(bwd, 1e-12));
    CHECK_THAT(b.fwd.elementwise - a.fwd.elementwise, WithinRel(fwd / 3.0e12, 1e-9));
    // Forward FLOPs are the same work split differently (attention over the full keys).
    CHECK_THAT(b.fwd_flops, WithinRel(a.fwd_flops, 1e-12));
  }
  // More ring steps, more merging per token.
  const UnitCost c2 = TransformerLayerCost(m, ParseParallelConfig("dp=1,cp=2"), 2048);
  const UnitCost c4 = TransformerLayerCost(m, ParseParallelConfig("dp=1,cp=4"), 2048);
  CHECK(c4.fwd.elementwise > c2.fwd.elementwise);
  CHECK(c4.bwd.elementwise > c2.bwd.elementwise);
}

TEST_CASE("cost_model: eager DTensor dispatch of TP linears binds only when the GPU work is small", "[cost_model]") {
  const ModelSpec model = testing::Llama2_7b();
  const SoftwareStack eager = LoadSoftwareStack("pytorch-fsdp");
  const SoftwareStack megatron = LoadSoftwareStack("megatron-core");
  REQUIRE(eager.host_per_tp_linear_s > 0);
  REQUIRE(megatron.host_per_tp_linear_s == 0);
  const LayerCostModel me = MakeLayerCostModel(model, testing::NominalH100Rates(), eager, 4096);
  const LayerCostModel mm = MakeLayerCostModel(model, testing::NominalH100Rates(), megatron, 4096);
  // tp=8, one 4k sequence: ~1 ms of GPU work per layer forward, 7 linears × 0.34 ms of host.
  const ParallelConfig tp8 = ParseParallelConfig("dp=1,tp=8,sp=on");
  const UnitCost small = TransformerLayerCost(me, tp8, 4096);
  const double host_fwd = 7 * eager.host_per_tp_linear_s + eager.kernels_per_layer_forward * eager.host_per_kernel_s;
  const double busy_fwd = small.fwd.Total() - small.fwd.launch;
  REQUIRE(host_fwd > busy_fwd);
  CHECK_THAT(small.fwd.launch, WithinRel(eager.kernels_per_layer_forward * eager.kernel_gap_s + host_fwd - busy_fwd, 1e-9));
  CHECK(TransformerLayerCost(mm, tp8, 4096).fwd.launch < 0.1 * small.fwd.launch);
  // No TP, or enough work per GPU: the host runs ahead and costs nothing.
  const UnitCost tp1 = TransformerLayerCost(me, ParseParallelConfig("dp=1"), 8192);
  CHECK_THAT(tp1.fwd.launch, WithinRel(eager.kernels_per_layer_forward * eager.kernel_gap_s, 1e-9));
  const UnitCost big = TransformerLayerCost(me, ParseParallelConfig("dp=1,tp=2,sp=on"), 16384);
  CHECK_THAT(big.fwd.launch, WithinRel(eager.kernels_per_layer_forward * eager.kernel_gap_s, 1e-9));
}

TEST_CASE("cost_model: QK norm adds its Q/K read and write and two kernels", "[cost_model]") {
  ModelSpec model = testing::Llama2_7b();
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  const LayerCostModel plain = MakeLayerCostModel(model, testing::NominalH100Rates(), stack, 4096);
  model.qk_norm = true;
  const LayerCostModel qk = MakeLayerCostModel(model, testing::NominalH100Rates(), stack, 4096);
  const double T = 4096, ad = 4096, gd = 4096;
  for (int tp : {1, 4}) {
    const ParallelConfig c = ParseParallelConfig(StrCat("dp=1,tp=", tp, tp > 1 ? ",sp=on" : ""));
    const UnitCost a = TransformerLayerCost(plain, c, T);
    const UnitCost b = TransformerLayerCost(qk, c, T);
    // The rank's Q and K heads, read and written once forward, twice backward.
    const double fwd = T * (ad + gd) / tp * stack.norm_bytes_per_element;
    CHECK_THAT(b.fwd_bytes - a.fwd_bytes, WithinRel(fwd, 1e-12));
    CHECK_THAT(b.bwd_bytes - a.bwd_bytes, WithinRel(2 * fwd, 1e-12));
    CHECK(b.fwd.launch >= a.fwd.launch);
    CHECK(b.fwd_flops == a.fwd_flops);
  }
}

// Transformer Engine's ring (TransformerEngine v1.11, transformer_engine/pytorch/attention.py
// AttnFuncWithCPAndKVP2P, sbhd, fused attention, causal load balancing) at cp = 2, per rank and
// layer, counted from the source in elements of Q (= the output) and KV (k and v together),
// read + write bf16 (2 B each way):
//   forward  torch.cat(k, v) into the send buffer 4·KV; out = zeros_like(q) 2·Q; the off-diagonal
//            step's .contiguous() of half the KV (rank 1: kv[0]) 2·KV or half the Q (rank 0:
//            q[1]) 2·Q; flash_attn_fwd_out_correction per step (read out_per_step, read and
//            write out) 6·Q on the rows it covers: rank 1 both steps 12·Q, rank 0 9·Q.
//   backward the receive buffer's copy_(kv) 4·KV; rank 1: kv[0].contiguous() 2·KV, dq.copy_ 4·Q,
//            dq.add_ 6·Q, torch.cat(dk, dv) per step 2·KV + 4·KV, dkv[:,0].copy_ 2·KV + fill 1·KV,
//            dkv.add_ 6·KV; rank 0: q[1], out[1], dout[1].contiguous() 6·Q, dq fill + copy 3·Q,
//            dq[0] copy + dq[1] add 5·Q, cat 4·KV + 4·KV, dkv.copy_ 4·KV, dkv half add + half copy 5·KV.
// The ring is paced by the busier rank; the stack's merge and gradient bytes must cover it.
TEST_CASE("cost_model: megatron-core's CP ring bytes cover Transformer Engine's per-step copies at cp = 2",
          "[cost_model]") {
  ModelSpec model = testing::Llama2_7b();
  model.num_kv_heads = 8;   // Llama 3 8B's grouped K/V (8 groups of 32 heads)
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  const LayerCostModel m = MakeLayerCostModel(model, testing::NominalH100Rates(), stack, 8192);
  const double T = 4096;   // one 8192-token sequence over cp = 2
  const double Q = T * 4096, KV = T * 2 * 1024;
  const UnitCost a = TransformerLayerCost(m, ParseParallelConfig("dp=1"), T);
  const UnitCost b = TransformerLayerCost(m, ParseParallelConfig("dp=1,cp=2"), T);
  const double te_fwd = std::max(4 * KV + 2 * Q + 2 * KV + 12 * Q, 4 * KV + 2 * Q + 2 * Q + 9 * Q);
  const double te_bwd = std::max(4 * KV + 2 * KV + 4 * Q + 6 * Q + 6 * KV + 3 * KV + 6 * KV,
                                 4 * KV + 6 * Q + 3 * Q + 5 * Q + 8 * KV + 4 * KV + 5 * KV);
  const double model_fwd = b.fwd_bytes - a.fwd_bytes, model_bwd = b.bwd_bytes - a.bwd_bytes;
  CHECK(model_fwd >= 0.9 * te_fwd);
  CHECK(model_fwd <= 1.5 * te_fwd);
  CHECK(model_bwd >= te_bwd);
  // The attention work is the same pairs split in two calls per step (diagonal causal on
  // s/cp, off-diagonal non-causal on half of it): no FLOPs added or lost.
  CHECK_THAT(b.fwd_flops, WithinRel(a.fwd_flops, 1e-12));
}
