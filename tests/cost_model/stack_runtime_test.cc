// How a stack runs its communication and host work: TP overlapped with
// GEMMs (userbuffers; the column-parallel backward), host-synchronous
// pipeline sends, host time per micro-batch.
#include <catch2/catch.hpp>

#include <string>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"
#include "tests/cost_model/nanotron_sweep.h"
#include "tests/cost_model/sailor_models.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

const TimeBreakdownEntry& Entry(const std::vector<TimeBreakdownEntry>& list, const char* name) {
  for (const auto& e : list)
    if (e.name == name) return e;
  FAIL("no entry " << name);
  return list.front();
}

Report Run(const SoftwareStack& s, const ClusterSpec& cluster, const char* model, const JobSpec& job,
           const char* config) {
  return AnalyticalEvaluator(LoadModel(model), cluster, job, s).Evaluate(ParseParallelConfig(config));
}

}  // namespace

TEST_CASE("cost_model: TP overlap hides TP time, never more than the GEMMs beside it", "[cost_model][stack]") {
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const JobSpec job = testing::Job(64, 4096);
  const char* cfg = "dp=8,tp=4,sp=on,sharding=zero1";
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  s.tp_backward_overlap = false;   // userbuffers only (the next test case has the other overlap)
  const Report blocking = Run(s, c, "llama2-7b", job, cfg);
  CHECK(Entry(blocking.by_dimension, "tp").exposed.si() == Entry(blocking.by_dimension, "tp").total.si());
  s.tp_comm_overlap = 0.875;
  const Report overlapped = Run(s, c, "llama2-7b", job, cfg);
  const double tp_total = Entry(overlapped.by_dimension, "tp").total.si();
  CHECK(tp_total == Entry(blocking.by_dimension, "tp").total.si());   // the same bytes move
  CHECK(Entry(overlapped.by_dimension, "tp").exposed.si() < Entry(blocking.by_dimension, "tp").exposed.si());
  CHECK(overlapped.step_time < blocking.step_time);
  // Megatron and torchtitan overlap only sequence-parallel TP.
  const Report no_sp = Run(s, c, "llama2-7b", job, "dp=8,tp=4,sp=off,sharding=zero1");
  CHECK(Entry(no_sp.by_dimension, "tp").exposed.si() == Entry(no_sp.by_dimension, "tp").total.si());

  // A slow TP fabric: everything overlappable, yet no more hidden than the GEMM time.
  ClusterSpec slow = c;
  slow.gpu.nvlink_bandwidth = GBps(10);
  s.tp_comm_overlap = 1;
  s.tp_overlap_gemm_slowdown = 0;
  const Report capped = Run(s, slow, "llama2-7b", job, cfg);
  const double hidden = Entry(capped.by_dimension, "tp").total.si() - Entry(capped.by_dimension, "tp").exposed.si();
  CHECK(hidden > 0);
  CHECK(hidden <= Entry(capped.by_op, "gemm").total.si() * (1 + 1e-12));
  CHECK(capped.step_time.si() >= capped.compute.si());
  // The SMs the overlap takes are paid for: a slowdown never speeds the step.
  s.tp_overlap_gemm_slowdown = 0.069;
  CHECK(Run(s, slow, "llama2-7b", job, cfg).step_time >= capped.step_time);
}

TEST_CASE("cost_model: the column-parallel backward hides its TP collectives beside its GEMMs, less NCCL's SMs",
          "[cost_model][stack]") {
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const JobSpec job = testing::Job(64, 4096);
  SoftwareStack blocking = LoadSoftwareStack("megatron-core");
  REQUIRE(blocking.tp_backward_overlap);
  REQUIRE(blocking.tp_comm_overlap == 0);
  blocking.tp_backward_overlap = false;
  SoftwareStack async = blocking;
  async.tp_backward_overlap = true;
  // NCCL's kernel holds nccl_channels of the SMs beside the GEMM.
  const double share = static_cast<double>(async.nccl_channels) / c.gpu.sm_count;
  const int layers = LoadModel("llama2-7b").num_layers;

  // Without SP, per layer: 2 all-reduces forward, 2 backward (QKV's and
  // fc1's dgrad, beside their wgrad GEMMs), and the embedding's forward and
  // the head's backward all-reduce, all of s·b·h. On NVLink at tp 2 each
  // all-reduce is shorter than its wgrad GEMM: all hidden, each costing
  // share of itself. (At tp 4 QKV's wgrad is a little shorter than its
  // all-reduce, which then shows past it.)
  const char* no_sp = "dp=16,tp=2,sp=off,sharding=zero1";
  const Report b = Run(blocking, c, "llama2-7b", job, no_sp);
  const Report a = Run(async, c, "llama2-7b", job, no_sp);
  const double total = Entry(b.by_dimension, "tp").total.si();
  CHECK(Entry(a.by_dimension, "tp").total.si() == total);   // the same collectives
  CHECK(Entry(b.by_dimension, "tp").exposed.si() == total);
  const double backward = total * 2 * layers / (4 * layers + 2);
  const double hidden = total - Entry(a.by_dimension, "tp").exposed.si();
  CHECK_THAT(hidden, WithinRel((1 - share) * backward, 1e-9));
  CHECK(a.step_time < b.step_time);

  // With SP the backward all-gathers each column-parallel layer's saved
  // input again beside its dgrad GEMM: more TP time moves, less is exposed.
  const char* sp = "dp=8,tp=4,sp=on,sharding=zero1";
  const Report bs = Run(blocking, c, "llama2-7b", job, sp);
  const Report as = Run(async, c, "llama2-7b", job, sp);
  CHECK(Entry(as.by_dimension, "tp").total > Entry(bs.by_dimension, "tp").total);
  CHECK(Entry(as.by_dimension, "tp").exposed < Entry(bs.by_dimension, "tp").exposed);
  CHECK(as.step_time < bs.step_time);

  // A slow TP fabric: each collective outlasts its GEMM, which hides no more
  // than itself; the overlap never makes the step slower than blocking.
  ClusterSpec slow = c;
  slow.gpu.nvlink_bandwidth = GBps(10);
  const Report bslow = Run(blocking, slow, "llama2-7b", job, no_sp);
  const Report aslow = Run(async, slow, "llama2-7b", job, no_sp);
  const double hidden_slow =
      Entry(bslow.by_dimension, "tp").exposed.si() - Entry(aslow.by_dimension, "tp").exposed.si();
  CHECK(hidden_slow > 0);
  CHECK(hidden_slow < Entry(aslow.by_op, "gemm").total.si() / 3);   // the QKV and fc1 wgrads only
  CHECK(aslow.step_time <= bslow.step_time);
}

TEST_CASE("cost_model: host-synchronous pipeline sends never beat asynchronous ones", "[cost_model][stack]") {
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const JobSpec job = testing::Job(64, 4096);
  const char* cfg = "dp=4,tp=2,pp=4,sharding=zero1";
  const SoftwareStack sync = LoadSoftwareStack("nanotron");
  REQUIRE(sync.pp_host_synchronous);
  SoftwareStack async = sync;
  async.pp_host_synchronous = false;
  const Report a = Run(async, c, "llama2-13b", job, cfg);
  const Report s = Run(sync, c, "llama2-13b", job, cfg);
  // Two metadata messages before every tensor, each paying its latency.
  CHECK(Entry(s.by_dimension, "pp").total > Entry(a.by_dimension, "pp").total);
  CHECK(s.step_time > a.step_time);
  // Host time per micro-batch shows only when the host cannot run ahead.
  SoftwareStack async_host = async;
  async_host.host_per_micro_batch_s = 1e-3;
  CHECK(Run(async_host, c, "llama2-13b", job, cfg).step_time == a.step_time);
}

TEST_CASE("cost_model: Megatron-LM's 2021-2023 pipeline exchanges synchronize the host, Megatron-Core's do not",
          "[cost_model][stack]") {
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const JobSpec job = testing::Job(64, 4096);
  const char* cfg = "dp=4,tp=2,pp=4,sharding=ddp";
  for (const char* name : {"megatron-lm-2021", "megatron-core"}) {
    INFO(name);
    SoftwareStack s = LoadSoftwareStack(name);
    const bool sync = std::string(name) == "megatron-lm-2021";
    CHECK(s.pp_host_synchronous == sync);
    const Report quiet = Run(s, c, "llama2-13b", job, cfg);
    s.host_per_micro_batch_s = 1e-3;
    const Report busy = Run(s, c, "llama2-13b", job, cfg);
    // torch.cuda.synchronize() after every exchange: the host's own time shows.
    CHECK((busy.step_time > quiet.step_time) == sync);
  }
}

TEST_CASE("cost_model: host time per micro-batch scales with the micro-batches the pipeline runs",
          "[cost_model][stack]") {
  // 1F1B: step = m·worst + the other stages once; every stage gains h per
  // micro-batch, so the step gains (m + pp − 1)·h.
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const SoftwareStack base = LoadSoftwareStack("nanotron");
  SoftwareStack slow = base;
  const double h = 2e-3;
  slow.host_per_micro_batch_s = h;
  for (int64_t batch : {32, 64, 128}) {
    const JobSpec job = testing::Job(batch, 4096);
    const int pp = 4, m = static_cast<int>(batch / 4);   // dp = 4, mbs = 1
    const Report a = Run(base, c, "llama2-13b", job, "dp=4,tp=2,pp=4,sharding=zero1");
    const Report b = Run(slow, c, "llama2-13b", job, "dp=4,tp=2,pp=4,sharding=zero1");
    INFO("batch " << batch);
    CHECK_THAT(b.step_time.si() - a.step_time.si(), WithinRel((m + pp - 1) * h, 1e-6));
  }
}

// nanotron's CPU time per layer (52 µs per counted kernel, calibrated on the
// Ultra-Scale sweep's one-node tp 2-8 runs): where a layer's GPU work is
// shorter the step is host-bound, so at fixed tokens it grows with the
// number of micro-batches; where the GPU work is longer the host hides.
TEST_CASE("cost_model: nanotron is host-bound at tp 8, micro-batch 1, and not at tp 1",
          "[cost_model][stack]") {
  const SoftwareStack s = LoadSoftwareStack("nanotron");
  const ClusterSpec one_node = LoadCluster("aws-p5", 1);
  JobSpec job;
  job.global_batch = 256;
  job.seq_len = 4096;
  job.stack = s.name;
  const ModelSpec model = testing::NanotronModel("nanotron-1b", 32);   // the sweep's 1B shape
  auto run = [&](const char* config) {
    const Report r = AnalyticalEvaluator(model, one_node, job, s).Evaluate(ParseParallelConfig(config));
    INFO(config << ": " << r.infeasible_reason);
    REQUIRE(r.feasible);
    return r;
  };
  const Report tp8_mbs1 = run("dp=1,tp=8,mbs=1,sharding=ddp,sp=on");
  const Report tp8_mbs16 = run("dp=1,tp=8,mbs=16,sharding=ddp,sp=on");
  const Report tp1_mbs1 = run("dp=8,tp=1,mbs=1,sharding=ddp");
  const Report tp1_mbs2 = run("dp=8,tp=1,mbs=2,sharding=ddp");
  // Host-bound: every micro-batch pays at least the CPU time of its layers,
  // 66 counted kernels per layer (22 forward, 44 backward).
  const double layers = static_cast<double>(model.num_layers);
  const double host_floor = 256.0 * layers * 3.0 * s.kernels_per_layer_forward * s.host_per_kernel_s;
  CHECK(tp8_mbs1.step_time.si() >= host_floor);
  // The same tokens in 16 times fewer micro-batches: the host floor falls
  // 16-fold (the sweep measured 18.98 s against 4.66 s on its 1B shape).
  CHECK(tp8_mbs1.step_time.si() > 2.5 * tp8_mbs16.step_time.si());
  // tp 1: a layer's GPU work (a whole 4,096-token sequence) outlasts its host
  // time, so micro-batch 1 costs what micro-batch 2 does, within the small
  // per-micro-batch terms.
  CHECK(tp1_mbs1.step_time.si() < 1.1 * tp1_mbs2.step_time.si());
}

// Megatron-DeepSpeed's CPU time per layer on Grace (64 µs per counted kernel,
// calibrated on Sailor's Clariden runs, tests/data/stacks/sailor-megatron-
// deepspeed-fp32.yaml): OPT-350M at tp 4 on one GH200 node issues its layers
// slower than the GPU runs a 2,048-token micro-batch, so the step is
// host-bound at micro-batch 1; GPT-Neo 2.7B's 4-sequence micro-batches hide it.
TEST_CASE("cost_model: Sailor's fp32 Megatron-DeepSpeed is host-bound at tp 4, micro-batch 1",
          "[cost_model][stack]") {
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack s = LoadSoftwareStack(root + "/tests/data/stacks/sailor-megatron-deepspeed-fp32.yaml");
  SoftwareStack no_host = s;
  no_host.host_per_kernel_s = 0;
  JobSpec job;
  job.global_batch = 32;
  job.seq_len = 2048;
  job.precision = Precision::kFp32;
  job.stack = s.name;
  auto run = [&](const SoftwareStack& stack, const char* model, int nodes, const char* config) {
    ClusterSpec cluster = LoadCluster("alps-gh200", nodes);
    cluster.gpus_per_node = 4;   // Clariden: 4 GH200 per node
    const Report r =
        AnalyticalEvaluator(testing::SailorModel(model), cluster, job, stack).Evaluate(ParseParallelConfig(config));
    INFO(model << " " << config << ": " << r.infeasible_reason);
    REQUIRE(r.feasible);
    return r.step_time.si();
  };
  const double mbs1 = run(s, "opt-350m", 1, "dp=1,tp=4,mbs=1,sharding=ddp,recompute=none");
  const double mbs8 = run(s, "opt-350m", 1, "dp=1,tp=4,mbs=8,sharding=ddp,recompute=none");
  // Host floor: 32 micro-batches x 24 layers x 48 counted kernels (16 forward,
  // 32 backward) of CPU time each.
  const double host_floor = 32.0 * 24.0 * 3.0 * s.kernels_per_layer_forward * s.host_per_kernel_s;
  CHECK(mbs1 >= host_floor);
  CHECK(run(no_host, "opt-350m", 1, "dp=1,tp=4,mbs=1,sharding=ddp,recompute=none") < 0.5 * host_floor);
  // The same 32 sequences in 4 micro-batches of 8: the host floor falls 8-fold
  // and the GPU work, not the CPU, sets the step (Sailor measured 2.28 s at
  // mbs 1 against 0.66 s at mbs 8 on two nodes, pp 2).
  CHECK(mbs1 > 2.5 * mbs8);
  CHECK(mbs8 < 1.01 * run(no_host, "opt-350m", 1, "dp=1,tp=4,mbs=8,sharding=ddp,recompute=none"));
  // GPT-Neo 2.7B, micro-batch 4 on pp 2 x tp 4: the layer's GPU work outlasts
  // its host time, so the calibrated host time costs (almost) nothing.
  job.global_batch = 64;
  const char* neo = "dp=1,tp=4,pp=2,mbs=4,sharding=ddp,recompute=none,pp_layers=15:17";
  CHECK(run(s, "gpt-neo-2.7b", 2, neo) < 1.01 * run(no_host, "gpt-neo-2.7b", 2, neo));
}
