#include <catch2/catch.hpp>

#include "cost_model/comm_plan.h"

using namespace parasim;

namespace {
CommPlanInputs Inputs(double tokens, double layer_params) {
  CommPlanInputs in;
  in.tokens = tokens;
  in.hidden = 4096;
  in.kv_width = 4096;
  in.layer_dense_params = layer_params;
  return in;
}
double BytesOf(const CommPlan& p, const char* what, CommPhase phase) {
  double b = 0;
  for (const auto& c : p.layer)
    if (c.what == what && c.phase == phase) b += c.size.si() * c.count;
  return b;
}
}  // namespace

TEST_CASE("cost_model: one GPU issues no collectives", "[cost_model]") {
  ParallelConfig c;
  const CommPlan p = BuildCommPlan(c, LoadSoftwareStack("pytorch-fsdp"), Inputs(8192, 2e8));
  CHECK(p.layer.empty());
  CHECK_FALSE(p.has_pp_send);
}

TEST_CASE("cost_model: zero2 gathers and reduce-scatters each layer, zero3 gathers twice", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  ParallelConfig c;
  c.dp = 64;
  c.sharding = ShardingMode::kZero2;
  CommPlan p = BuildCommPlan(c, s, Inputs(8192, 2e8));
  REQUIRE(p.layer.size() == 2);
  CHECK(p.layer[0].op == CollectiveOp::kAllGather);
  CHECK(p.layer[0].size.si() == 4e8);   // bf16 weights of the layer
  CHECK(p.layer[1].op == CollectiveOp::kReduceScatter);
  c.sharding = ShardingMode::kZero3;
  p = BuildCommPlan(c, s, Inputs(8192, 2e8));
  CHECK(p.layer.size() == 3);
}

TEST_CASE("cost_model: TP moves the same bytes with and without sequence parallelism", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  ParallelConfig c;
  c.tp = 4;
  const CommPlan ar = BuildCommPlan(c, s, Inputs(8192, 0));
  c.sequence_parallel = true;
  const CommPlan sp = BuildCommPlan(c, s, Inputs(8192, 0));
  const double act = 8192.0 * 4096 * 2;
  CHECK(BytesOf(ar, "tp_allreduce", CommPhase::kForward) == 2 * act);
  CHECK(BytesOf(sp, "tp_sp_allgather", CommPhase::kForward) == 2 * act);
  CHECK(BytesOf(sp, "tp_sp_reducescatter", CommPhase::kBackward) == 2 * act);
}

TEST_CASE("cost_model: hsdp reduces inside G-rank groups and all-reduces across replicas", "[cost_model]") {
  ParallelConfig c;
  c.dp = 64;
  c.sharding = ShardingMode::kHsdp;
  c.hsdp_group = 8;
  const CommPlan p = BuildCommPlan(c, LoadSoftwareStack("pytorch-fsdp"), Inputs(8192, 2e8));
  bool replica_allreduce = false;
  for (const auto& x : p.layer) {
    if (x.op == CollectiveOp::kAllReduce) {
      replica_allreduce = true;
      CHECK(x.sub.size == 8);     // 64 / 8 replicas
      CHECK(x.sub.stride == 8);
      CHECK(x.size.si() == 4e8 / 8);
    } else {
      CHECK(x.sub.size == 8);
      CHECK(x.sub.stride == 1);
    }
  }
  CHECK(replica_allreduce);
}

TEST_CASE("cost_model: DeepSpeed's pipe engine sends 1/tp of the boundary tensor and gathers it on receipt",
          "[cost_model]") {
  const SoftwareStack ds = LoadSoftwareStack("megatron-deepspeed");
  REQUIRE(ds.pp_partition_over_tp);
  ParallelConfig c;
  c.tp = 4;
  c.pp = 4;
  const double act = 8192.0 * 4096 * 2;
  const CommPlan p = BuildCommPlan(c, ds, Inputs(8192, 0));
  REQUIRE(p.has_pp_send);
  CHECK(p.pp_send.size.si() == act / 4);
  REQUIRE(p.has_pp_gather);
  CHECK(p.pp_gather.op == CollectiveOp::kAllGather);
  CHECK(p.pp_gather.dim == ParallelDim::kTp);
  CHECK(p.pp_gather.size.si() == act);
  CHECK(p.pp_meta_count == 1);
  CHECK(p.pp_meta.size.si() == 8.0 * (4 + 6));   // int64 [ndim, 3 sizes, parts, parts + 1 offsets]
  // Megatron-Core sends the whole tensor from every tp rank (no SP): no gather.
  const CommPlan mc = BuildCommPlan(c, LoadSoftwareStack("megatron-core"), Inputs(8192, 0));
  CHECK(mc.pp_send.size.si() == act);
  CHECK_FALSE(mc.has_pp_gather);
  // With SP the tensor is already split; without tp there is nothing to split.
  c.sequence_parallel = true;
  CHECK_FALSE(BuildCommPlan(c, ds, Inputs(8192, 0)).has_pp_gather);
  c.sequence_parallel = false;
  c.tp = 1;
  const CommPlan one = BuildCommPlan(c, ds, Inputs(8192, 0));
  CHECK_FALSE(one.has_pp_gather);
  CHECK(one.pp_send.size.si() == act);
}

TEST_CASE("cost_model: fp32 training moves 4-byte activations through TP and the pipeline", "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  ParallelConfig c;
  c.tp = 4;
  c.pp = 2;
  const CommPlan bf16 = BuildCommPlan(c, s, Inputs(8192, 0));
  s.activation_bytes = 4;
  const CommPlan fp32 = BuildCommPlan(c, s, Inputs(8192, 0));
  CHECK(BytesOf(fp32, "tp_allreduce", CommPhase::kForward) == 2 * BytesOf(bf16, "tp_allreduce", CommPhase::kForward));
  CHECK(fp32.pp_send.size.si() == 2 * bf16.pp_send.size.si());
}

TEST_CASE("cost_model: an MoE model's dense layers dispatch nothing over EP", "[cost_model][moe]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  ParallelConfig c;
  c.dp = 8;
  c.ep = 8;
  CommPlanInputs all = Inputs(8192, 2e8);
  all.experts_per_token = 8;
  CommPlanInputs deepseek = all;
  deepseek.moe_layer_fraction = 58.0 / 61.0;   // DeepSeek-V3: first 3 of 61 layers dense
  const double a2a_all = BytesOf(BuildCommPlan(c, s, all), "ep_alltoall", CommPhase::kForward);
  const double a2a_ds = BytesOf(BuildCommPlan(c, s, deepseek), "ep_alltoall", CommPhase::kForward);
  // tokens × top-k × h × 2 B, dispatch + combine.
  CHECK(a2a_all == 8192.0 * 8 * 4096 * 2 * 2);
  CHECK_THAT(a2a_ds, Catch::Matchers::WithinRel(a2a_all * 58.0 / 61.0, 1e-12));
  // A dense model (top-k 0) has no all-to-all at all.
  CHECK(BytesOf(BuildCommPlan(c, s, Inputs(8192, 2e8)), "ep_alltoall", CommPhase::kForward) == 0);
}
