// What Megatron runs, blocking, between a stage's last backward and its
// optimizer step beside the data-parallel sync and the tied pair: the tp
// all-reduce of the gradients every tp rank holds whole (comm_plan.h
// TpReplicatedGradCollective, stack.sp_grad_bytes), the clip-grad-norm
// all-reduce of one fp32 (GradNormCollective, stack.grad_norm_allreduce), and
// NeMo's distributed Adam's last bucket (stack.embedding_grads_after_backward).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cost_model/collective_cost.h"
#include "cost_model/comm_plan.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"
#include "report_dimensions.h"
#include "test_specs.h"
#include "topology/group_path.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

constexpr int64_t kHidden = 4096;
constexpr int64_t kLayers = 48;

// GPT-3 style: LayerNorm with biases, biased linears.
ModelSpec Model() {
  ModelSpec m = testing::Gpt(kHidden, kLayers, 32, 50304);
  m.norm_bias = true;
  m.linear_bias = true;
  return m;
}

ClusterSpec Cluster() { return testing::Dgx(testing::H100(), 8); }

AnalyticalEvaluator Make(const SoftwareStack& stack, const ModelSpec& m = Model()) {
  return AnalyticalEvaluator(m, Cluster(), testing::Job(128, 2048), stack);
}

SoftwareStack Without(SoftwareStack s) {
  s.sp_grad_bytes = 0;
  s.grad_norm_allreduce = false;
  return s;
}

// The collective `what` as the workload records it on `stage` (null when absent).
const WorkloadCollective* Find(const StepWorkload& wl, int stage, const std::string& what) {
  for (const LayerWork& l : wl.stages[stage].layers)
    for (const WorkloadCollective& c : l.collectives)
      if (c.what == what) return &c;
  return nullptr;
}

int Count(const StepWorkload& wl, const std::string& what) {
  int n = 0;
  for (const StageWork& s : wl.stages)
    for (const LayerWork& l : s.layers)
      for (const WorkloadCollective& c : l.collectives) n += c.what == what;
  return n;
}

double Time(CollectiveOp op, double bytes, const GroupPath& path) {
  const NcclFeatures f = NcclFeaturesFor(Cluster(), LoadSoftwareStack("megatron-core").nccl_version);
  return EstimateCollective(op, Bytes(bytes), path, f).time.si();
}

}  // namespace

TEST_CASE("step-end finalize: tp-replicated gradient elements, closed form", "[cost_model][step_end]") {
  const ModelSpec m = Model();
  const double h = kHidden;
  const ParallelConfig sp = ParseParallelConfig("dp=4,tp=8,pp=2,sp=on");
  // Two LayerNorms (weight + bias), the projection's and fc2's biases per
  // layer; the final LayerNorm on the last stage.
  CHECK(TpReplicatedGradElements(m, sp, 24, 0, false) == 24 * (2 * 2 * h + 2 * h));
  CHECK(TpReplicatedGradElements(m, sp, 24, 0, true) == 24 * (2 * 2 * h + 2 * h) + 2 * h);
  // RMSNorm without biases (Llama): one h per norm.
  ModelSpec llama = testing::Llama2_7b();
  CHECK(TpReplicatedGradElements(llama, sp, 16, 0, true) == 16 * 2 * 4096.0 + 4096.0);
  // MoE layers add the router (E·h), and their fc2 bias is the experts'.
  ModelSpec moe = m;
  moe.num_experts = 8;
  moe.experts_per_token = 2;
  moe.moe_ffn_hidden_size = 4 * kHidden;
  CHECK(TpReplicatedGradElements(moe, sp, 24, 24, false) == 24 * (2 * 2 * h + h + 8 * h));
  // Nothing without sequence parallelism (no q/k norms) or at tp = 1.
  CHECK(TpReplicatedGradElements(m, ParseParallelConfig("dp=4,tp=8,pp=2"), 24, 0, true) == 0);
  CHECK(TpReplicatedGradElements(m, ParseParallelConfig("dp=32,pp=2"), 24, 0, true) == 0);
  // q/k norms are reduced with or without it (Megatron-Core's name rule).
  ModelSpec qk = llama;
  qk.qk_norm = true;
  CHECK(TpReplicatedGradElements(qk, ParseParallelConfig("dp=4,tp=8,pp=2"), 16, 0, true) == 16 * 2 * 128.0);
}

TEST_CASE("step-end finalize: the collectives' bytes, groups and times", "[cost_model][step_end]") {
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=8,pp=2,sp=on,sharding=zero1");
  const StepWorkload wl = Make(LoadSoftwareStack("megatron-core")).BuildWorkload(c);
  const double h = kHidden;
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    const WorkloadCollective* tp = Find(wl, s, "tp_replicated_grads");
    REQUIRE(tp != nullptr);
    CHECK(tp->op == CollectiveOp::kAllReduce);
    CHECK(tp->phase == CommPhase::kStepEnd);
    CHECK(tp->blocking);
    CHECK(tp->dim == ParallelDim::kTp);
    const double elements = 24 * 6 * h + (s == 1 ? 2 * h : 0.0);
    CHECK(tp->size.si() == elements * 4);   // the fp32 main_grad
    CHECK_THAT(tp->duration.si(),
               WithinRel(Time(CollectiveOp::kAllReduce, elements * 4, ResolveGroupPath(Cluster(), c, ParallelDim::kTp)),
                         1e-12));
    const WorkloadCollective* norm = Find(wl, s, "grad_norm");
    REQUIRE(norm != nullptr);
    CHECK(norm->op == CollectiveOp::kAllReduce);
    CHECK(norm->phase == CommPhase::kStepEnd);
    CHECK(norm->blocking);
    CHECK(norm->size.si() == 4);
    // The distributed optimizer reduces the norm over every rank.
    CHECK(norm->dim == ParallelDim::kDp);
    const GroupPath world = ResolveGroupPath(Cluster(), ParseParallelConfig("dp=64"), ParallelDim::kDp);
    REQUIRE(world.ranks == 64);
    CHECK_THAT(norm->duration.si(), WithinRel(Time(CollectiveOp::kAllReduce, 4, world), 1e-12));
  }
  CHECK(Count(wl, "tp_replicated_grads") == 2);
  CHECK(Count(wl, "grad_norm") == 2);
}

TEST_CASE("step-end finalize: the grad-norm group without a sharded optimizer", "[cost_model][step_end]") {
  WorkloadCollective w;
  bool world = true;
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  REQUIRE(GradNormCollective(ParseParallelConfig("dp=4,tp=8,pp=2,sharding=ddp"), s, &w, &world));
  CHECK_FALSE(world);   // the model-parallel group, tp·pp
  CHECK(w.dim == ParallelDim::kPp);
  REQUIRE(GradNormCollective(ParseParallelConfig("dp=8,tp=8,sharding=ddp"), s, &w, &world));
  CHECK(w.dim == ParallelDim::kTp);
  // A model-parallel group of one rank reduces nothing; a sharded optimizer
  // still reduces over every rank.
  CHECK_FALSE(GradNormCollective(ParseParallelConfig("dp=64,sharding=ddp"), s, &w, &world));
  REQUIRE(GradNormCollective(ParseParallelConfig("dp=64,sharding=zero1"), s, &w, &world));
  CHECK(world);
  CHECK_FALSE(GradNormCollective(ParseParallelConfig("dp=1,sharding=zero1"), s, &w, &world));
  // Its time: the tp·pp ranks' all-reduce, more ranks, no less time than tp's alone.
  const StepWorkload wl = Make(s).BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=2,sp=on,sharding=ddp"));
  const WorkloadCollective* norm = Find(wl, 0, "grad_norm");
  REQUIRE(norm != nullptr);
  const GroupPath mp = ResolveGroupPath(Cluster(), ParseParallelConfig("dp=64"), ParallelDim::kDp, SubGroup{16, 1});
  REQUIRE(mp.ranks == 16);
  CHECK_THAT(norm->duration.si(), WithinRel(Time(CollectiveOp::kAllReduce, 4, mp), 1e-12));
}

TEST_CASE("step-end finalize: off where the stack runs none, tp = 1 or no sp", "[cost_model][step_end]") {
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=8,pp=2,sp=on,sharding=zero1");
  for (const char* name : {"torchtitan", "pytorch-fsdp", "pytorch-fsdp2", "deepspeed-zero", "megatron-deepspeed"}) {
    INFO(name);
    const SoftwareStack s = LoadSoftwareStack(name);
    CHECK(s.sp_grad_bytes == 0);
    CHECK_FALSE(s.grad_norm_allreduce);
    CHECK_FALSE(s.embedding_grads_after_backward);
  }
  CHECK(LoadSoftwareStack("megatron-core").sp_grad_bytes == 4);
  CHECK(LoadSoftwareStack("megatron-core").grad_norm_allreduce);
  CHECK(LoadSoftwareStack("megatron-lm-2022").sp_grad_bytes == 4);
  CHECK(LoadSoftwareStack("megatron-lm-2022").grad_norm_allreduce);
  CHECK(LoadSoftwareStack("megatron-lm-2021").sp_grad_bytes == 0);   // no sequence parallelism in that code
  CHECK_FALSE(LoadSoftwareStack("megatron-core").embedding_grads_after_backward);
  // nanotron: sync_tied_weights_gradients all-reduces the tp-tied norm
  // weights' fp32 gradients under tp_mode REDUCE_SCATTER (sp) only; its
  // clipping all-reduce is not priced (docs/DECISIONS.md "nanotron's step end").
  CHECK(LoadSoftwareStack("nanotron").sp_grad_bytes == 4);
  CHECK_FALSE(LoadSoftwareStack("nanotron").grad_norm_allreduce);
  const AnalyticalEvaluator nanotron = Make(LoadSoftwareStack("nanotron"));
  const StepWorkload nano = nanotron.BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=2,sp=on"));
  CHECK(Count(nano, "tp_replicated_grads") == 2);
  CHECK(Count(nano, "grad_norm") == 0);
  CHECK(Count(nanotron.BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=2,sp=off")), "tp_replicated_grads") == 0);
  const AnalyticalEvaluator core = Make(LoadSoftwareStack("megatron-core"));
  CHECK(Count(core.BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=2,sharding=zero1")), "tp_replicated_grads") == 0);
  CHECK(Count(core.BuildWorkload(ParseParallelConfig("dp=32,pp=2,sharding=zero1")), "tp_replicated_grads") == 0);
  CHECK(Count(core.BuildWorkload(c), "tp_replicated_grads") == 2);
}

TEST_CASE("step-end finalize: priced blocking, under tp and dp, exposed in full", "[cost_model][step_end]") {
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=8,pp=2,sp=on,sharding=zero1");
  const SoftwareStack with = LoadSoftwareStack("megatron-core");
  const Report on = Make(with).Evaluate(c);
  const Report off = Make(Without(with)).Evaluate(c);
  const StepWorkload wl = Make(with).BuildWorkload(c);
  const double tp0 = Find(wl, 0, "tp_replicated_grads")->duration.si();
  const double tp1 = Find(wl, 1, "tp_replicated_grads")->duration.si();
  const double norm = Find(wl, 0, "grad_norm")->duration.si();
  REQUIRE(tp1 > tp0);   // the final norm
  REQUIRE(norm > 0);
  // The critical stage pays its own, all exposed, each under its dimension.
  const double dtp = testing::DimExposed(on, "tp") - testing::DimExposed(off, "tp");
  CHECK((std::abs(dtp - tp0) <= 1e-9 * tp0 || std::abs(dtp - tp1) <= 1e-9 * tp1));
  CHECK_THAT(testing::DimTotal(on, "tp") - testing::DimTotal(off, "tp"), WithinRel(dtp, 1e-9));
  CHECK_THAT(testing::DimExposed(on, "dp") - testing::DimExposed(off, "dp"), WithinRel(norm, 1e-9));
  CHECK_THAT(testing::DimTotal(on, "dp") - testing::DimTotal(off, "dp"), WithinRel(norm, 1e-9));
  CHECK_THAT(testing::DimExposed(on, "pp"), WithinRel(testing::DimExposed(off, "pp"), 1e-12));
  CHECK_THAT(on.exposed_comm.si() - off.exposed_comm.si(), WithinRel(dtp + norm, 1e-9));
  for (const auto& d : on.by_dimension) {
    INFO(d.name);
    CHECK(d.exposed.si() <= d.total.si() * (1 + 1e-12));
  }
  CHECK(on.step_time.si() > off.step_time.si());
  CHECK(on.step_time.si() <= off.step_time.si() + (tp1 + norm) * (1 + 1e-9));
}

TEST_CASE("step-end finalize: NeMo's last bucket reduces the ends after the backward", "[cost_model][step_end]") {
  SoftwareStack nemo = LoadSoftwareStack("megatron-core");
  nemo.embedding_grads_after_backward = true;
  const SoftwareStack core = LoadSoftwareStack("megatron-core");
  auto dp_reductions = [](const StepWorkload& wl, int stage, const std::string& what) {
    std::vector<const WorkloadCollective*> out;
    for (const LayerWork& l : wl.stages[stage].layers)
      for (const WorkloadCollective& w : l.collectives)
        if (w.what == what && w.op == CollectiveOp::kReduceScatter) out.push_back(&w);
    return out;
  };
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=8,pp=2,sp=on,sharding=zero1");
  const StepWorkload a = Make(core).BuildWorkload(c);
  const StepWorkload b = Make(nemo).BuildWorkload(c);
  for (const auto& [stage, what] : {std::pair<int, std::string>{0, "dp_embedding"}, {1, "dp_lm_head"}}) {
    INFO(what);
    const auto before = dp_reductions(a, stage, what);
    const auto after = dp_reductions(b, stage, what);
    REQUIRE(before.size() == 1);
    REQUIRE(after.size() == 1);
    CHECK(before[0]->phase == CommPhase::kGradientReduce);
    CHECK_FALSE(before[0]->blocking);
    CHECK(after[0]->phase == CommPhase::kStepEnd);
    CHECK(after[0]->blocking);
    CHECK(after[0]->size.si() == before[0]->size.si());
    CHECK(after[0]->duration.si() == before[0]->duration.si());
  }
  // The layers' buckets are untouched.
  for (const LayerWork& l : b.stages[0].layers)
    for (const WorkloadCollective& w : l.collectives)
      if (w.what == "dp_dense" && w.op == CollectiveOp::kReduceScatter) CHECK(w.phase == CommPhase::kGradientReduce);
  // It hides less: dp exposed no lower, the totals unchanged. The step no
  // faster but for the recurrences' pricing of the first stage's embedding
  // reduction, which ran after its backward before too (its tail and the
  // slowdown of what it ran beside): within 1e-5.
  const Report ra = Make(core).Evaluate(c);
  const Report rb = Make(nemo).Evaluate(c);
  CHECK(rb.step_time.si() >= ra.step_time.si() * (1 - 1e-5));
  CHECK(testing::DimExposed(rb, "dp") >= testing::DimExposed(ra, "dp"));
  CHECK_THAT(testing::DimTotal(rb, "dp"), WithinRel(testing::DimTotal(ra, "dp"), 1e-12));
  for (const auto& d : rb.by_dimension) {
    INFO(d.name);
    CHECK(d.exposed.si() <= d.total.si() * (1 + 1e-12));
  }
  // pp = 1 without sequence parallelism: NeMo's last bucket fills in the
  // backward as the others; nothing moves.
  const ParallelConfig flat = ParseParallelConfig("dp=8,tp=8,sharding=zero1");
  CHECK(Make(nemo).Evaluate(flat).step_time.si() == Make(core).Evaluate(flat).step_time.si());
}
