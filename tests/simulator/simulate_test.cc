#include "simulator/simulate.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

JobSpec Job(int64_t batch, int64_t seq) {
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = seq;
  return job;
}

// A DP-only step by hand: `layers` units of forward f and backward b (all
// GEMM), FSDP gathers g before each forward and reductions r after each
// backward (or, for ddp, AllReduce buckets with the last micro-batch), no
// interference, no optimizer unless given.
StepWorkload HandWorkload(int dp, int layers, int micro_batches, double f, double b, double g, double r,
                          ShardingMode sharding, double optimizer_s = 0) {
  StepWorkload wl;
  wl.config.dp = dp;
  wl.config.sharding = sharding;
  wl.config.prefetch = 1;
  wl.num_micro_batches = micro_batches;
  wl.sharding = sharding;
  wl.prefetch_depth = 1;
  wl.comm_interference = 1.0;
  wl.world_size = dp;
  wl.tokens_per_step = 4096LL * dp * micro_batches;
  wl.model_flops_per_step = Flops(1e15);
  wl.hardware_flops_per_step = Flops(1e15);
  wl.power = PowerStates{Watts(700), Watts(500), Watts(300), Watts(100)};
  StageWork st;
  for (int i = 0; i < layers; ++i) {
    LayerWork w;
    w.name = StrCat("layer ", i);
    w.layer_index = i;
    w.forward_time = w.forward_matmul_time = Seconds(f);
    w.backward_time = w.backward_matmul_time = Seconds(b);
    if (sharding != ShardingMode::kDdp) {
      WorkloadCollective gather;
      gather.op = CollectiveOp::kAllGather;
      gather.size = MB(100);
      gather.phase = CommPhase::kForwardPrefetch;
      gather.blocking = false;
      gather.duration = Seconds(g);
      gather.what = "fsdp_allgather";
      w.collectives.push_back(gather);
    }
    WorkloadCollective reduce;
    reduce.op = sharding == ShardingMode::kDdp ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
    reduce.size = MB(200);
    reduce.phase = CommPhase::kGradientReduce;
    reduce.blocking = false;
    reduce.every_micro_batch = sharding != ShardingMode::kDdp;
    reduce.duration = Seconds(r);
    reduce.what = "grad_reduce";
    w.collectives.push_back(reduce);
    st.layers.push_back(w);
  }
  st.optimizer_time = Seconds(optimizer_s);
  st.memory_peak = GiB(40);
  wl.stages.push_back(st);
  return wl;
}

ClusterSpec H100Nodes(int nodes) { return LoadCluster("dgx-h100", nodes); }

TEST_CASE("simulator: FSDP with free communication exposes none and runs compute back to back",
          "[simulator]") {
  // Expectation: gathers and reductions take 0 s, so the step is the sum of
  // compute: m·L·(f + b) + optimizer = 2·8·(3 + 6) ms + 5 ms = 149 ms.
  StepWorkload wl = HandWorkload(16, 8, 2, 3e-3, 6e-3, 0, 0, ShardingMode::kZero2, 5e-3);
  auto fidelity = GENERATE(Fidelity::kSimulated, Fidelity::kFull);
  SimulationOptions opt;
  opt.fidelity = fidelity;
  SimulationResult r = SimulateStep(wl, H100Nodes(2), opt);
  REQUIRE_THAT(r.report.exposed_comm.si(), WithinAbs(0.0, 1e-15));
  REQUIRE_THAT(r.report.step_time.si(), WithinRel(0.149, 1e-12));
  REQUIRE_THAT(r.report.compute.si(), WithinRel(0.149, 1e-12));
}

TEST_CASE("simulator: FSDP with free compute takes the sum of its communication", "[simulator]") {
  // Expectation: compute takes 0 s; every gather and reduction shares the one
  // DP stream, so the step is m·L·(g + r) = 2·8·(2 + 4) ms = 96 ms, all exposed.
  StepWorkload wl = HandWorkload(16, 8, 2, 0, 0, 2e-3, 4e-3, ShardingMode::kZero2);
  auto fidelity = GENERATE(Fidelity::kSimulated, Fidelity::kFull);
  SimulationOptions opt;
  opt.fidelity = fidelity;
  SimulationResult r = SimulateStep(wl, H100Nodes(2), opt);
  REQUIRE_THAT(r.report.step_time.si(), WithinRel(0.096, 1e-9));
  REQUIRE_THAT(r.report.comm.si(), WithinRel(0.096, 1e-9));
  REQUIRE_THAT(r.report.exposed_comm.si(), WithinRel(0.096, 1e-9));
}

TEST_CASE("simulator: FSDP prefetch hides gathers shorter than the previous layer", "[simulator]") {
  // Expectation (depth 1, one micro-batch): only the first two gathers are
  // issued before compute; gather 0 (2 ms) is exposed, the rest hide under
  // 3 ms forwards. Backward reductions (4 ms) hide under 6 ms backwards except
  // the last: step = 2 + 8·3 + 8·6 + 4 = 78 ms, exposed 6 ms.
  StepWorkload wl = HandWorkload(16, 8, 1, 3e-3, 6e-3, 2e-3, 4e-3, ShardingMode::kZero2);
  SimulationResult r = SimulateStep(wl, H100Nodes(2), SimulationOptions{});
  REQUIRE_THAT(r.report.step_time.si(), WithinRel(0.078, 1e-9));
  REQUIRE_THAT(r.report.exposed_comm.si(), WithinRel(0.006, 1e-9));
}

TEST_CASE("simulator: a straggler in a DP-only job slows the step by its extra compute", "[simulator]") {
  // DDP, one micro-batch, L = 8 layers of f = 3 ms, b = 6 ms; AllReduce
  // buckets of 4 ms after each backward; optimizer 5 ms. Every bucket waits
  // for the slowest rank. Expectation: base = L(f+b) + r + opt = 72 + 4 + 5 =
  // 81 ms; rank 5 at 1.2× → its compute stretches by 20%: +0.2·(72 + 5) =
  // +15.4 ms (the last bucket starts when it finishes its backward).
  StepWorkload wl = HandWorkload(16, 8, 1, 3e-3, 6e-3, 0, 4e-3, ShardingMode::kDdp, 5e-3);
  auto fidelity = GENERATE(Fidelity::kSimulated, Fidelity::kFull);
  SimulationOptions opt;
  opt.fidelity = fidelity;
  const double base = SimulateStep(wl, H100Nodes(2), opt).report.step_time.si();
  REQUIRE_THAT(base, WithinRel(0.081, 1e-9));
  opt.stragglers.push_back(ParseStraggler("rank=5,slowdown=1.2"));
  SimulationResult slow = SimulateStep(wl, H100Nodes(2), opt);
  REQUIRE_THAT(slow.report.step_time.si() - base, WithinRel(0.2 * 0.077, 1e-9));
  if (fidelity == Fidelity::kFull) {
    // Everyone else waits for rank 5 at every bucket: their exposed comm grows.
    REQUIRE(slow.ranks.size() == 16);
    REQUIRE(slow.ranks[0].exposed_comm > slow.ranks[5].exposed_comm);
  }
}

struct AgreementCase {
  const char* model;
  int nodes;
  const char* config;
};

const AgreementCase kAgreementCases[] = {
    {"llama2-7b", 4, "dp=32,sharding=zero2"},
    {"llama2-7b", 4, "dp=32,sharding=zero3,prefetch=2"},
    {"llama2-7b", 4, "dp=32,sharding=ddp"},
    {"llama2-7b", 4, "dp=32,sharding=zero1"},
    {"llama2-7b", 4, "dp=32,sharding=hsdp:8"},
    {"llama2-7b", 4, "dp=8,tp=4,sp=on,sharding=zero1"},
    {"llama2-7b", 4, "dp=8,tp=4,sp=off,sharding=zero2"},
    {"llama2-13b", 4, "dp=4,tp=2,pp=4,sharding=zero1"},
    {"llama2-13b", 4, "dp=4,tp=2,pp=4,sharding=zero1,schedule=gpipe"},
    {"llama2-13b", 4, "dp=4,tp=2,pp=4,vpp=2,schedule=interleaved,sharding=zero1"},
    {"llama2-7b", 4, "dp=8,tp=2,cp=2,sharding=zero2"},
    {"llama2-7b", 4, "dp=4,tp=2,cp=4,sharding=zero2,cp_comm=a2a"},
    {"llama2-7b", 4, "dp=4,tp=2,cp=4,sharding=zero2,cp_comm=allgather"},
    {"llama2-7b", 4, "dp=2,tp=2,cp=8,sharding=zero2,cp_comm=a2a+p2p,cp_a2a_size=2"},
    {"llama2-7b", 4, "dp=2,tp=2,cp=8,sharding=zero2,cp_comm=a2a+p2p,cp_a2a_size=4"},
    {"mixtral-8x7b", 8, "dp=16,ep=8,tp=4,sharding=zero1"},
    {"llama2-7b", 4, "dp=32,sharding=zero2,recompute=full"},
    {"llama2-7b", 4, "dp=4,tp=2,pp=4,sharding=zero1,recompute=full,recompute_layers=3"},
    {"llama2-7b", 4, "dp=8,pp=4,vpp=2,schedule=interleaved,sharding=zero1,recompute=full,recompute_layers=4"},
    // Recompute re-runs the CP ring (full) and its attention blocks (full, selective).
    {"llama2-7b", 4, "dp=2,tp=2,cp=8,sharding=zero2,recompute=full"},
    {"llama2-7b", 4, "dp=2,tp=2,cp=8,sharding=zero2,recompute=selective"},
    {"llama2-7b", 4, "dp=4,cp=8,sharding=zero2,recompute=full"},
    {"llama2-7b", 4, "dp=4,tp=2,cp=4,sharding=zero2,cp_comm=a2a,recompute=full"},
    {"llama2-7b", 4, "dp=4,tp=2,cp=4,sharding=zero2,cp_comm=allgather,recompute=full"},
    {"llama2-7b", 4, "dp=2,tp=2,cp=8,sharding=zero2,cp_comm=a2a+p2p,cp_a2a_size=2,recompute=full"},
};

TEST_CASE("simulator: tier B agrees with tier A within 5% without contention or asymmetry", "[simulator]") {
  // Tier A's closed-form overlap rules and tier B's event replay of the same
  // workload must agree where nothing contends (DESIGN.md §3).
  for (const AgreementCase& k : kAgreementCases) {
    INFO(k.model << " " << k.config);
    AnalyticalEvaluator eval(LoadModel(k.model), H100Nodes(k.nodes), Job(64, 4096));
    ParallelConfig c = ParseParallelConfig(k.config);
    Report a = eval.Evaluate(c);
    SimulationResult b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{});
    REQUIRE(b.report.fidelity == Fidelity::kSimulated);
    REQUIRE_THAT(b.report.step_time.si(), WithinRel(a.step_time.si(), 0.05));
    REQUIRE_THAT(b.report.compute.si(), WithinRel(a.compute.si(), 0.05));
  }
}

TimeBreakdownEntry CpEntry(const Report& r) {
  for (const TimeBreakdownEntry& e : r.by_dimension) {
    if (e.name == "cp") return e;
  }
  return {};
}

TEST_CASE("simulator: full and attention-only selective recompute re-run the CP ring in both tiers", "[simulator]") {
  // Megatron-Core's full recompute re-runs each layer's forward in backward,
  // Transformer Engine's ring attention with it: the ring's forward steps
  // (F per layer) run twice, its backward steps (Bw) once. With cp_comm=p2p
  // the ring is the cp dimension's only traffic, so the cp totals must grow
  // by exactly (2F + Bw) / (F + Bw), and no tier may expose more than it sends.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
  const ParallelConfig none = ParseParallelConfig("dp=2,tp=2,cp=8,sharding=zero2");
  const ParallelConfig full = ParseParallelConfig("dp=2,tp=2,cp=8,sharding=zero2,recompute=full");
  const ParallelConfig selective = ParseParallelConfig("dp=2,tp=2,cp=8,sharding=zero2,recompute=selective");
  REQUIRE(eval.stack().sac_matmul_recompute_fraction == 0);
  double f = 0, bw = 0;
  const StepWorkload workload = eval.BuildWorkload(none);   // held: the loop reads into it
  for (const WorkloadCollective& c : workload.stages[0].layers[1].collectives) {
    if (c.dim != ParallelDim::kCp) continue;
    REQUIRE_FALSE(c.blocking);
    (c.phase == CommPhase::kForward ? f : bw) += c.count * c.duration.si();
  }
  REQUIRE(f > 0);
  REQUIRE(bw > f);
  const double ratio = (2 * f + bw) / (f + bw);
  for (Fidelity fidelity : {Fidelity::kAnalytical, Fidelity::kSimulated}) {
    INFO(ToString(fidelity));
    auto report = [&](const ParallelConfig& c) {
      if (fidelity == Fidelity::kAnalytical) return eval.Evaluate(c);
      return SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
    };
    const TimeBreakdownEntry a = CpEntry(report(none)), b = CpEntry(report(full));
    REQUIRE_THAT(b.total.si() / a.total.si(), WithinRel(ratio, 1e-9));
    REQUIRE(a.exposed.si() <= a.total.si() * (1 + 1e-12));
    REQUIRE(b.exposed.si() <= b.total.si() * (1 + 1e-12));
    // The recomputed ring hides no better than the forward's: exposure grows.
    REQUIRE(b.exposed.si() > a.exposed.si());
    // Attention-only selective recompute re-runs the attention core, the ring
    // inside it with it: the same cp traffic as full recompute.
    const TimeBreakdownEntry sel = CpEntry(report(selective));
    REQUIRE_THAT(sel.total.si(), WithinRel(b.total.si(), 1e-12));
    REQUIRE(sel.exposed.si() <= sel.total.si() * (1 + 1e-12));
  }
}

TEST_CASE("simulator: op-level SAC keeps the attention output, so its CP ring runs once", "[simulator]") {
  // torchtitan's SelectiveAC saves the attention output: backward re-runs
  // no attention and no ring, so the cp traffic is recompute=none's.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096), LoadSoftwareStack("torchtitan"));
  REQUIRE(eval.stack().sac_matmul_recompute_fraction > 0);
  const ParallelConfig none = ParseParallelConfig("dp=2,tp=2,cp=8,sharding=zero2");
  const ParallelConfig sac = ParseParallelConfig("dp=2,tp=2,cp=8,sharding=zero2,recompute=selective");
  for (Fidelity fidelity : {Fidelity::kAnalytical, Fidelity::kSimulated}) {
    INFO(ToString(fidelity));
    auto report = [&](const ParallelConfig& c) {
      if (fidelity == Fidelity::kAnalytical) return eval.Evaluate(c);
      return SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
    };
    const TimeBreakdownEntry a = CpEntry(report(none)), b = CpEntry(report(sac));
    REQUIRE_THAT(b.total.si(), WithinRel(a.total.si(), 1e-12));
    REQUIRE_THAT(b.exposed.si(), WithinRel(a.exposed.si(), 0.01));
  }
}

TEST_CASE("simulator: the CP ring hides under the same attention blocks in both tiers", "[simulator]") {
  // Each ring step hides under one block of the attention core (the
  // backward's own; the recomputed forward's ring under the forward's), in
  // tier A's closed form and in tier B's replay. Where the ring is exposed
  // (cp = 8 spans nodes), hiding it under GEMMs or under a block shrunk by
  // the recomputed forward moved the tiers 1.5% to 16% apart. Both tiers
  // slow the blocks beside a ring step by the NCCL interference factor; with
  // short NVLink steps (cp = 8 without tp) tier A leaving it out put its cp
  // exposure 6% above tier B's.
  const char* configs[] = {
      "dp=2,tp=2,cp=8,sharding=zero2",
      "dp=2,tp=2,cp=8,sharding=zero2,recompute=selective",
      "dp=2,tp=2,cp=8,sharding=zero2,recompute=full",
      "dp=2,tp=2,cp=8,sharding=zero2,cp_comm=a2a+p2p,cp_a2a_size=2,recompute=full",
      "dp=4,cp=8,sharding=zero2",
      "dp=4,cp=8,sharding=zero2,recompute=full",
  };
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
  for (const char* config : configs) {
    INFO(config);
    const ParallelConfig c = ParseParallelConfig(config);
    const Report a = eval.Evaluate(c);
    const Report b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
    REQUIRE(CpEntry(a).exposed.si() > 0.05 * a.step_time.si());   // the ring matters here
    REQUIRE_THAT(b.step_time.si(), WithinRel(a.step_time.si(), 0.01));
    REQUIRE_THAT(CpEntry(b).exposed.si(), WithinRel(CpEntry(a).exposed.si(), 0.01));
  }
}

TEST_CASE("simulator: both tiers slow the attention beside the CP ring by the NCCL share", "[simulator]") {
  // TE's ring (flash_attn_p2p_communicate: isend/irecv on the cp group) runs
  // NCCL SendRecv kernels beside each attention block. With the NCCL SM and
  // HBM shares at zero nothing slows; with them the blocks take longer, so
  // compute grows and the ring hides better, by the same amounts in both tiers.
  SoftwareStack free_comm = LoadSoftwareStack("megatron-core");
  free_comm.nccl_channels = 0;
  free_comm.nccl_memory_passes = 0;
  const SoftwareStack busy = LoadSoftwareStack("megatron-core");
  const ParallelConfig c = ParseParallelConfig("dp=4,cp=8,sharding=zero2");   // the ring on NVLink
  Report a[2], b[2];
  for (int i = 0; i < 2; ++i) {
    AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096), i == 0 ? free_comm : busy);
    a[i] = eval.Evaluate(c);
    b[i] = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
    INFO(i);
    REQUIRE_THAT(b[i].step_time.si(), WithinRel(a[i].step_time.si(), 0.005));
    REQUIRE_THAT(CpEntry(b[i]).exposed.si(), WithinRel(CpEntry(a[i]).exposed.si(), 0.01));
  }
  for (const Report* r : {a, b}) {
    REQUIRE(r[1].compute.si() > r[0].compute.si());
    REQUIRE(CpEntry(r[1]).exposed.si() < CpEntry(r[0]).exposed.si());
    REQUIRE_THAT(CpEntry(r[1]).total.si(), WithinRel(CpEntry(r[0]).total.si(), 1e-12));
  }
}

TEST_CASE("simulator: tier B agrees with tier A on the torchtitan stack", "[simulator]") {
  // torchtitan reduce-scatters fp32 gradients (comm_grad_bytes 4): the DP
  // stream runs beside most of each unit, blocking TP collectives and ring
  // waits included. Tier A once slowed those too (no kernel runs there) and
  // sat 3.7% above tier B on dp=2,tp=2,cp=8.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096), LoadSoftwareStack("torchtitan"));
  const char* configs[] = {
      "dp=32,sharding=zero2",
      "dp=32,sharding=zero3",
      "dp=32,sharding=zero2,recompute=selective",
      "dp=8,tp=4,sharding=zero2",
      "dp=8,tp=2,cp=2,sharding=zero2",
      "dp=4,tp=2,cp=4,sharding=zero3",
      "dp=4,cp=8,sharding=zero2",
      "dp=2,tp=2,cp=8,sharding=zero2",
      "dp=2,tp=2,cp=8,sharding=zero2,recompute=full",
  };
  for (const char* config : configs) {
    INFO(config);
    const ParallelConfig c = ParseParallelConfig(config);
    const Report a = eval.Evaluate(c);
    const Report b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
    REQUIRE_THAT(b.step_time.si(), WithinRel(a.step_time.si(), 0.01));
    REQUIRE_THAT(b.compute.si(), WithinRel(a.compute.si(), 0.02));
    REQUIRE_THAT(b.exposed_comm.si(), WithinRel(a.exposed_comm.si(), 0.01));
  }
}

TEST_CASE("simulator: tier B follows tier A's TP overlap and host-synchronous pipeline sends", "[simulator]") {
  // The recorded TP collectives carry only their exposed share, and
  // nanotron's metadata messages ride in each pipeline send.
  SoftwareStack overlap = LoadSoftwareStack("megatron-core");
  overlap.tp_comm_overlap = 0.875;
  const SoftwareStack nanotron = LoadSoftwareStack("nanotron");
  const struct {
    const SoftwareStack* stack;
    const char* model;
    const char* config;
  } cases[] = {{&overlap, "llama2-7b", "dp=8,tp=4,sp=on,sharding=zero1"},
               {&nanotron, "llama2-13b", "dp=4,tp=2,pp=4,sharding=zero1"}};
  for (const auto& k : cases) {
    INFO(k.stack->name << " " << k.config);
    AnalyticalEvaluator eval(LoadModel(k.model), H100Nodes(4), Job(64, 4096), *k.stack);
    const ParallelConfig c = ParseParallelConfig(k.config);
    const Report a = eval.Evaluate(c);
    const SimulationResult b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{});
    REQUIRE_THAT(b.report.step_time.si(), WithinRel(a.step_time.si(), 0.05));
  }
}

TEST_CASE("simulator: tier C agrees with tier B within 5% when nothing contends", "[simulator]") {
  for (const AgreementCase& k : kAgreementCases) {
    INFO(k.model << " " << k.config);
    AnalyticalEvaluator eval(LoadModel(k.model), H100Nodes(k.nodes), Job(64, 4096));
    StepWorkload wl = eval.BuildWorkload(ParseParallelConfig(k.config));
    SimulationOptions opt;
    SimulationResult b = SimulateStep(wl, eval.cluster(), opt);
    opt.fidelity = Fidelity::kFull;
    SimulationResult c = SimulateStep(wl, eval.cluster(), opt);
    REQUIRE(c.report.fidelity == Fidelity::kFull);
    REQUIRE(static_cast<int>(c.ranks.size()) == wl.world_size / wl.config.tp);  // one lane per TP group
    REQUIRE_THAT(c.report.step_time.si(), WithinRel(b.report.step_time.si(), 0.05));
  }
}

TEST_CASE("simulator: background load on the fabric slows tier C, never speeds it", "[simulator]") {
  // DP ring over 4 nodes crosses the NICs; taking 60% of every NIC link
  // leaves the ring 40% of its bandwidth, so inter-node collectives slow down.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
  StepWorkload wl = eval.BuildWorkload(ParseParallelConfig("dp=32,sharding=zero3"));
  SimulationOptions opt;
  opt.fidelity = Fidelity::kFull;
  const double quiet = SimulateStep(wl, eval.cluster(), opt).report.step_time.si();
  opt.background.push_back(ParseBackgroundLoad("class=nic,fraction=0.6"));
  SimulationResult busy = SimulateStep(wl, eval.cluster(), opt);
  REQUIRE(busy.report.step_time.si() > quiet * 1.001);
  REQUIRE(busy.report.exposed_comm.si() > 0);
}

TEST_CASE("simulator: SimulateConfig reports tier A's memory and a trace with one event per op",
          "[simulator]") {
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), H100Nodes(4), Job(64, 4096));
  ParallelConfig c = ParseParallelConfig("dp=4,tp=2,pp=4,sharding=zero1");
  SimulationOptions opt;
  opt.trace = true;
  SimulationResult r = SimulateConfig(eval, c, opt);
  Report a = eval.Evaluate(c);
  REQUIRE(r.report.feasible);
  REQUIRE(r.report.memory_per_gpu.si() == a.memory_per_gpu.si());
  REQUIRE_THAT(r.report.mfu * r.report.step_time.si(), WithinRel(a.mfu * a.step_time.si(), 1e-12));
  REQUIRE(r.report.power_per_gpu.si() > 0);
  REQUIRE(r.report.tokens_per_joule > 0);
  nlohmann::json doc = nlohmann::json::parse(r.trace_json);
  int64_t complete = 0;
  std::set<int> pids, power_pids;
  for (const auto& ev : doc["traceEvents"]) {
    for (const char* key : {"ph", "ts", "dur", "pid", "tid"}) REQUIRE(ev.contains(key));
    if (ev["ph"] == "X") {
      ++complete;
      pids.insert(ev["pid"].get<int>());
    }
    if (ev["ph"] == "C") power_pids.insert(ev["pid"].get<int>());
  }
  REQUIRE(complete == r.activities);   // tier B: one op per activity
  REQUIRE(pids.size() == 4);           // one process per pipeline stage
  REQUIRE(power_pids.size() == 4);     // a power track per GPU (role)
  // Deterministic: the same inputs give the same bytes.
  REQUIRE(SimulateConfig(eval, c, opt).trace_json == r.trace_json);
}

TEST_CASE("simulator: bad simulation options name the flag", "[simulator]") {
  StepWorkload wl = HandWorkload(16, 2, 1, 1e-3, 2e-3, 1e-3, 1e-3, ShardingMode::kZero2);
  SimulationOptions opt;
  opt.stragglers.push_back(Straggler{16, 1.2});
  REQUIRE_THROWS_WITH(SimulateStep(wl, H100Nodes(2), opt), Catch::Contains("--straggler.rank"));
  opt.stragglers.clear();
  opt.background.push_back(BackgroundLoad{LinkClass::kNic, 0.5});
  REQUIRE_THROWS_WITH(SimulateStep(wl, H100Nodes(2), opt), Catch::Contains("--fidelity full"));
  REQUIRE_THROWS_WITH(ParseStraggler("rank=3,slow=2"), Catch::Contains("--straggler.slow"));
  REQUIRE_THROWS_WITH(ParseStraggler("slowdown=1.5"), Catch::Contains("--straggler.rank"));
  REQUIRE_THROWS_WITH(ParseStraggler("rank=x"), Catch::Contains("not a number"));
  REQUIRE_THROWS_WITH(ParseBackgroundLoad("class=wifi,fraction=0.1"), Catch::Contains("valid: nvlink"));
  REQUIRE_THROWS_WITH(ParseBackgroundLoad("class=nic,fraction=1.5"), Catch::Contains("[0, 1)"));
  Straggler s = ParseStraggler("rank=17,slowdown=1.2");
  REQUIRE(s.rank == 17);
  REQUIRE(s.slowdown == 1.2);
}

TEST_CASE("simulator: survey", "[.survey]") {
  struct Case { const char* model; int nodes; int64_t batch; const char* config; };
  const Case cases[] = {
      {"llama2-7b", 4, 64, "dp=32,sharding=zero2"},
      {"llama2-7b", 4, 64, "dp=32,sharding=zero3"},
      {"llama2-7b", 4, 64, "dp=32,sharding=ddp"},
      {"llama2-7b", 4, 64, "dp=32,sharding=zero1"},
      {"llama2-7b", 4, 64, "dp=32,sharding=hsdp:8"},
      {"llama2-7b", 4, 64, "dp=8,tp=4,sp=on,sharding=zero1"},
      {"llama2-7b", 4, 64, "dp=8,tp=4,sp=off,sharding=zero1"},
      {"llama2-13b", 4, 64, "dp=4,tp=2,pp=4,sharding=zero1"},
      {"llama2-13b", 4, 64, "dp=4,tp=2,pp=4,sharding=zero1,schedule=gpipe"},
      {"llama2-13b", 4, 64, "dp=4,tp=2,pp=4,vpp=2,schedule=interleaved,sharding=zero1"},
      {"llama2-13b", 4, 64, "dp=4,tp=2,pp=4,schedule=zb-h1,sharding=zero1"},
      {"llama2-7b", 4, 64, "dp=8,tp=2,cp=2,sharding=zero2"},
      {"mixtral-8x7b", 8, 64, "dp=16,ep=8,tp=4,sharding=zero1"},
      {"llama2-7b", 4, 64, "dp=32,sharding=zero2,recompute=full"},
  };
  for (const Case& k : cases) {
    ModelSpec model = LoadModel(k.model);
    ClusterSpec cluster = LoadCluster("dgx-h100", k.nodes);
    AnalyticalEvaluator eval(model, cluster, Job(k.batch, 4096));
    ParallelConfig c = ParseParallelConfig(k.config);
    Report a = eval.Evaluate(c);
    StepWorkload wl = eval.BuildWorkload(c);
    SimulationOptions opt;
    SimulationResult b = SimulateStep(wl, cluster, opt);
    opt.fidelity = Fidelity::kFull;
    SimulationResult cc = SimulateStep(wl, cluster, opt);
    opt.tier_c = TierCSchedule::kCoarse;
    SimulationResult coarse = SimulateStep(wl, cluster, opt);
    WARN(k.model << " " << k.config << ": A " << a.step_time.si() << " B " << b.report.step_time.si() << " C "
                 << cc.report.step_time.si() << " | B/A " << b.report.step_time / a.step_time << " C/B "
                 << cc.report.step_time / b.report.step_time << " Ccoarse/B "
                 << coarse.report.step_time / b.report.step_time << " steps " << cc.network_steps << " events "
                 << cc.events << " | expA " << a.exposed_comm.si() << " expB "
                 << b.report.exposed_comm.si() << " bubA " << a.bubble.si() << " bubB " << b.report.bubble.si()
                 << " | acts B " << b.activities << " C " << cc.activities << " feasible " << a.feasible);
    // The tiers replay the same step (memory fit aside: some cases are there for
    // timing only): finite, and within a factor of two of each other.
    INFO(k.model << " " << k.config);
    CHECK((std::isfinite(b.report.step_time.si()) && b.report.step_time > Seconds(0)));
    CHECK((b.report.step_time / a.step_time > 0.5 && b.report.step_time / a.step_time < 2.0));
    CHECK((cc.report.step_time / b.report.step_time > 0.5 && cc.report.step_time / b.report.step_time < 2.0));
  }
}

}  // namespace
}  // namespace parasim::simulator

namespace parasim::simulator {
namespace {

TEST_CASE("simulator: tier B keeps the FSDP weak-scaling trends of seed findings F1 and F2", "[simulator]") {
  // Paper set-up: Llama-2-7B, zero2, local batch 2, H100 nodes, 128 → 2048
  // GPUs. Expectation (F1, F2 directions): exposed communication grows
  // monotonically with the ring and is under 10% of the step at 128 GPUs;
  // per-GPU throughput and power fall; tier B tracks tier A within 2%.
  double prev_exposed = 0, prev_tokens = 1e300, prev_power = 1e300;
  for (int gpus : {128, 512, 2048}) {
    INFO(gpus << " GPUs");
    AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(gpus / 8), Job(2 * gpus, 4096));
    ParallelConfig c = ParseParallelConfig(StrCat("dp=", gpus, ",sharding=zero2,mbs=2"));
    Report a = eval.Evaluate(c);
    Report b = SimulateConfig(eval, c, SimulationOptions{}).report;
    REQUIRE_THAT(b.tokens_per_s_per_gpu, WithinRel(a.tokens_per_s_per_gpu, 0.02));
    REQUIRE_THAT(b.power_per_gpu.si(), WithinRel(a.power_per_gpu.si(), 0.02));
    if (gpus == 128) REQUIRE(b.exposed_comm_fraction < 0.10);
    REQUIRE(b.exposed_comm_fraction > prev_exposed);
    REQUIRE(b.tokens_per_s_per_gpu < prev_tokens);
    REQUIRE(b.power_per_gpu.si() < prev_power);
    prev_exposed = b.exposed_comm_fraction;
    prev_tokens = b.tokens_per_s_per_gpu;
    prev_power = b.power_per_gpu.si();
  }
}

}  // namespace
}  // namespace parasim::simulator

namespace parasim::simulator {
namespace {

// Tokens/s per GPU of one config, tier A and tier B.
struct BothTiers {
  double a = 0, b = 0;
};
BothTiers Throughput(const std::string& model, const std::string& cluster, int gpus, int64_t batch, int64_t seq,
                     const std::string& config) {
  const AnalyticalEvaluator eval(LoadModel(model), LoadCluster(cluster, gpus / 8), Job(batch, seq));
  const ParallelConfig c = ParseParallelConfig(config);
  return {eval.Evaluate(c).tokens_per_s_per_gpu, SimulateConfig(eval, c, SimulationOptions{}).report.tokens_per_s_per_gpu};
}

TEST_CASE("simulator: tier B reaches tier A's verdicts on the seed comparisons", "[simulator]") {
  // The configs `parasim validate` compares (the paper-space winners of F6,
  // F8 and F10); tier B replays them as events and must order them the same way.
  SECTION("F6: TP beats FSDP at 2048 H100") {
    const BothTiers fsdp = Throughput("llama2-7b", "dgx-h100", 2048, 4096, 4096, "dp=2048,mbs=2,sharding=zero2");
    const BothTiers tp = Throughput("llama2-7b", "dgx-h100", 2048, 4096, 4096, "dp=1024,tp=2,sp=on,mbs=4,sharding=zero2");
    CHECK(tp.a > 1.2 * fsdp.a);
    CHECK(tp.b > 1.2 * fsdp.b);
    CHECK_THAT(tp.b / fsdp.b, WithinRel(tp.a / fsdp.a, 0.05));
  }
  SECTION("F10: CP loses to TP at 4k on 256 H100") {
    const BothTiers cp = Throughput("llama2-7b", "dgx-h100", 256, 512, 4096, "dp=128,cp=2,mbs=4,sharding=zero2");
    const BothTiers tp = Throughput("llama2-7b", "dgx-h100", 256, 512, 4096, "dp=128,tp=2,sp=on,mbs=4,sharding=zero2");
    CHECK(cp.a < tp.a);
    CHECK(cp.b < tp.b);
    CHECK_THAT(cp.b / tp.b, WithinRel(cp.a / tp.a, 0.03));
  }
  SECTION("F8: 8,192 tokens per GPU as 2k x 4, 4k x 2, 8k x 1 sequences") {
    for (int64_t seq : {2048, 4096, 8192}) {
      const int64_t per_gpu = 8192 / seq;
      const BothTiers t = Throughput("llama2-7b", "dgx-h100", 256, 256 * per_gpu, seq,
                                     StrCat("dp=256,mbs=", per_gpu, ",sharding=zero2"));
      INFO(seq << ": tier A " << t.a << ", tier B " << t.b);
      CHECK_THAT(t.b, WithinRel(t.a, 0.03));
    }
  }
}

}  // namespace
}  // namespace parasim::simulator

namespace parasim::simulator {
namespace {

SimulationResult TierC(const StepWorkload& wl, const ClusterSpec& cluster, TierCSchedule schedule,
                       std::vector<Straggler> stragglers = {}, bool trace = false) {
  SimulationOptions opt;
  opt.fidelity = Fidelity::kFull;
  opt.tier_c = schedule;
  opt.stragglers = std::move(stragglers);
  opt.trace = trace;
  return SimulateStep(wl, cluster, opt);
}

TEST_CASE("simulator: tier C step replay agrees with tier A within 5% without contention", "[simulator]") {
  // Each step takes latency/K + bandwidth/K of the collective model's time,
  // so a collective alone takes exactly the model's time: tier C equals tier
  // B where no two flow sets share a link; the 5% is tier B's own distance
  // from tier A's closed-form overlap rules (the tier B test above).
  for (const char* config : {"dp=32,sharding=zero2", "dp=32,sharding=zero3,prefetch=2", "dp=32,sharding=ddp"}) {
    INFO(config);
    AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
    const ParallelConfig c = ParseParallelConfig(config);
    const StepWorkload wl = eval.BuildWorkload(c);
    const SimulationResult step = TierC(wl, eval.cluster(), TierCSchedule::kStep);
    REQUIRE(step.step_level);
    REQUIRE_THAT(step.report.step_time.si(), WithinRel(eval.Evaluate(c).step_time.si(), 0.05));
    REQUIRE_THAT(step.report.step_time.si(),
                 WithinRel(SimulateStep(wl, eval.cluster(), SimulationOptions{}).report.step_time.si(), 1e-9));
  }
}

TEST_CASE("simulator: tier C step-level and coarse agree when nothing contends", "[simulator]") {
  // Pure data parallelism: one ring per collective, no other traffic. Step
  // level is K·(α + β) with α, β the model's latency and bandwidth over K;
  // coarse is α·K + β·K: equal up to rounding. The step replay has K events
  // per link class and step where coarse has one per collective.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
  const StepWorkload wl = eval.BuildWorkload(ParseParallelConfig("dp=32,sharding=zero2"));
  const SimulationResult step = TierC(wl, eval.cluster(), TierCSchedule::kStep);
  const SimulationResult coarse = TierC(wl, eval.cluster(), TierCSchedule::kCoarse);
  REQUIRE_FALSE(coarse.step_level);
  REQUIRE_THAT(step.report.step_time.si(), WithinRel(coarse.report.step_time.si(), 1e-9));
  REQUIRE_THAT(step.report.exposed_comm.si(), WithinRel(coarse.report.exposed_comm.si(), 1e-6));
  REQUIRE(step.network_steps > 20 * coarse.network_steps);
}

TEST_CASE("simulator: DP and TP sharing NICs run slower in tier C than their isolated predictions", "[simulator]") {
  // tp = 16 on 8-GPU nodes: each TP ring crosses two nodes (GPU 7 -> 8 and
  // 15 -> 0 leave through their NICs), and the DP rings {g, g + 16} leave
  // through every GPU's NIC. The model prices each collective alone (tier B);
  // in tier C a TP AllReduce step and a DP gather/reduce step in flight
  // together split those NICs max-min (half each while both move, the engine
  // test's 1 + β/(α + β) per shared step), so the step is strictly slower,
  // and by less than all of the critical rank's communication again.
  AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(4), Job(64, 4096));
  const StepWorkload wl = eval.BuildWorkload(ParseParallelConfig("dp=2,tp=16,sp=on,sharding=zero2"));
  const SimulationResult b = SimulateStep(wl, eval.cluster(), SimulationOptions{});
  const SimulationResult c = TierC(wl, eval.cluster(), TierCSchedule::kStep);
  const SimulationResult coarse = TierC(wl, eval.cluster(), TierCSchedule::kCoarse);
  INFO("B " << b.report.step_time.si() << " C step " << c.report.step_time.si() << " C coarse "
            << coarse.report.step_time.si());
  REQUIRE(c.report.step_time.si() > b.report.step_time.si() * 1.002);
  REQUIRE(c.report.step_time.si() < b.report.step_time.si() + b.report.comm.si());
  REQUIRE(coarse.report.step_time.si() > b.report.step_time.si() * 1.002);
  // Without the DP traffic (ddp buckets only at the step end, no gathers
  // beside TP) the overlap, and so the slowdown, shrinks.
}

TEST_CASE("simulator: tier C's no-neighbour fast path gives the reference path's results", "[simulator]") {
  // Flows that could contend but run with no neighbour skip the max-min
  // solver (flow_contention.h); the reference puts every such flow through
  // it. Same physics, so every output agrees to rounding: FSDP beside TP on
  // NVLink, TP across nodes sharing NICs with DP, a pipeline with a
  // straggler and background load, and the coarse schedule.
  struct Case {
    const char* config;
    int nodes;
    TierCSchedule schedule;
    std::vector<Straggler> stragglers;
    std::vector<BackgroundLoad> background;
  };
  const std::vector<Case> cases = {
      {"dp=16,tp=2,sp=on,mbs=2,sharding=zero2", 4, TierCSchedule::kStep, {}, {}},
      {"dp=2,tp=16,sp=on,sharding=zero2", 4, TierCSchedule::kStep, {}, {}},
      {"dp=4,tp=2,pp=2,sp=on,sharding=zero1,mbs=1", 2, TierCSchedule::kStep, {Straggler{3, 1.15}},
       {BackgroundLoad{LinkClass::kNic, 0.3}}},
      {"dp=16,tp=2,sp=on,mbs=2,sharding=zero2", 4, TierCSchedule::kCoarse, {}, {}},
  };
  for (const Case& c : cases) {
    INFO(c.config << (c.schedule == TierCSchedule::kStep ? " step" : " coarse"));
    AnalyticalEvaluator eval(LoadModel("llama2-7b"), H100Nodes(c.nodes), Job(64, 4096));
    const StepWorkload wl = eval.BuildWorkload(ParseParallelConfig(c.config));
    SimulationOptions opt;
    opt.fidelity = Fidelity::kFull;
    opt.tier_c = c.schedule;
    opt.stragglers = c.stragglers;
    opt.background = c.background;
    const SimulationResult fast = SimulateStep(wl, eval.cluster(), opt);
    opt.dynamic_contention = false;
    const SimulationResult reference = SimulateStep(wl, eval.cluster(), opt);
    REQUIRE_THAT(fast.report.step_time.si(), WithinRel(reference.report.step_time.si(), 1e-12));
    REQUIRE_THAT(fast.report.exposed_comm.si(), WithinRel(reference.report.exposed_comm.si(), 1e-12));
    REQUIRE(fast.ranks.size() == reference.ranks.size());
    for (size_t r = 0; r < fast.ranks.size(); ++r) {
      INFO("rank " << r);
      const double scale = reference.report.step_time.si();
      REQUIRE_THAT(fast.ranks[r].comm.si(), WithinAbs(reference.ranks[r].comm.si(), 1e-12 * scale));
      REQUIRE_THAT(fast.ranks[r].exposed_comm.si(), WithinAbs(reference.ranks[r].exposed_comm.si(), 1e-12 * scale));
      REQUIRE_THAT(fast.ranks[r].idle.si(), WithinAbs(reference.ranks[r].idle.si(), 1e-12 * scale));
      REQUIRE_THAT(fast.ranks[r].energy.si(), WithinRel(reference.ranks[r].energy.si(), 1e-12));
    }
  }
}

// End times (µs, ascending) of a rank's activities whose name starts with `name`, from the trace.
std::vector<double> EndsOf(const std::string& trace, int pid, const std::string& name) {
  std::vector<double> out;
  const nlohmann::json doc = nlohmann::json::parse(trace);
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X" && ev["pid"] == pid && ev["name"].get<std::string>().rfind(name, 0) == 0) {
      out.push_back(ev["ts"].get<double>() + ev["dur"].get<double>());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("simulator: a straggler delays every step of the ring after it, on every member", "[simulator]") {
  // DDP over 16 GPUs on 2 nodes: 8 layers of f = 3 ms, b = 6 ms; a 4 ms
  // AllReduce bucket after each backward (NVLS-tree on 2 nodes: 4 steps). Rank 5
  // computes 1.2x slower. The k-th bucket's first step needs rank 5's chunk,
  // which is ready 0.2 · (8f + k·b) late; in lock step every later step waits
  // for it, so on rank 0 (which was on time) the k-th bucket ends exactly
  // 0.2 · (24 + 6k) ms late (k = 1..8).
  StepWorkload wl = HandWorkload(16, 8, 1, 3e-3, 6e-3, 0, 4e-3, ShardingMode::kDdp, 5e-3);
  const SimulationResult base = TierC(wl, H100Nodes(2), TierCSchedule::kStep, {}, true);
  const SimulationResult slow = TierC(wl, H100Nodes(2), TierCSchedule::kStep, {Straggler{5, 1.2}}, true);
  REQUIRE(base.network_steps == 8 * 4);
  const std::vector<double> on_time = EndsOf(base.trace_json, 0, "grad_reduce");
  const std::vector<double> late = EndsOf(slow.trace_json, 0, "grad_reduce");
  REQUIRE(on_time.size() == 8);
  REQUIRE(late.size() == 8);
  for (int k = 1; k <= 8; ++k) {
    INFO("bucket " << k);
    REQUIRE_THAT(late[k - 1] - on_time[k - 1], WithinRel(0.2 * (24 + 6 * k) * 1e3, 1e-6));
  }
}

TEST_CASE("simulator: tier C size limits name the limit", "[simulator]") {
  StepWorkload big = HandWorkload(kTierCCoarseMaxGpus + 8, 1, 1, 1e-3, 1e-3, 1e-3, 1e-3, ShardingMode::kZero2);
  REQUIRE_THROWS_WITH(TierC(big, H100Nodes(2), TierCSchedule::kAuto), Catch::Contains("65536"));
  StepWorkload mid = HandWorkload(kTierCStepMaxGpus + 8, 1, 1, 1e-3, 1e-3, 1e-3, 1e-3, ShardingMode::kZero2);
  REQUIRE_THROWS_WITH(TierC(mid, H100Nodes(2), TierCSchedule::kStep), Catch::Contains("--tier-c coarse"));
}

}  // namespace
}  // namespace parasim::simulator
