// Predicted / measured training throughput on NVIDIA's MLPerf Training v3.1
// GPT-3 175B submissions on Eos (issue 13; docs/accuracy.md "Throughput
// ratios: MLPerf GPT-3 175B on Eos"): one layout, tp 4, pp 8, 12 interleaved
// chunks, micro-batch 1, FP8, NeMo 23.09, on 512 to 10,752 H100
// (tests/data/throughput_mlperf_gpt3_h100.csv). The data-parallel degree and
// the micro-batches per step change with the GPU count (128 at 512 GPUs, 8 at
// 10,752), so the table tests how the pipeline bubble and the data-parallel
// traffic grow as the model-parallel work per GPU stays fixed.
// Each row goes through tier A as its recipe sets it
// (tests/planner/nemo_recipe_pricing.h) with the megatron-core stack as the
// other NeMo tables price it (its TP: forward collectives blocking,
// the backward's overlapped with the dgrad/wgrad GEMMs), with the attention
// kernel the container ran (FlashAttention-2; see below). ratio = predicted /
// measured tokens/s per GPU (> 1: the model is too fast); measured = the
// median step time of the logs' train_step_timing lines. Nothing here feeds
// back into the model. The test fails when a row cannot be evaluated or does
// not fit in memory, when the median |ratio - 1| gets more than 2 points worse
// than the committed table, and when the predicted throughput gain from 512 to
// 10,752 GPUs drifts more than 2 points further from the measured one.
// PARASIM_PRINT_THROUGHPUT_TABLE=1 prints the rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/statistics.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/planner/nemo_recipe_pricing.h"

using namespace parasim;

namespace {

constexpr int kRows = 7;

double MeasuredTokensPerS(const std::map<std::string, std::string>& r) {
  return std::stod(r.at("tokens_per_step")) / std::stod(r.at("step_time_s"));
}

}  // namespace

TEST_CASE("planner: predicted/measured throughput on MLPerf v3.1 GPT-3 175B on Eos", "[planner]") {
  const auto csv = testing::ReadCsv(testing::DataPath("throughput_mlperf_gpt3_h100.csv"));
  REQUIRE(csv.size() == kRows);
  SoftwareStack stack = *FindSoftwareStackPreset("megatron-core");
  // NeMo 23.09's Megatron-Core predates Megatron-LM 4295be1a (2024-11-01): its
  // interleaved schedule ran every chunk forward first when m = p (the 8
  // micro-batches of the 1,280- and 1,344-node runs).
  stack.pp_interleaved_full_warmup = true;
  // Its optimizer is NeMo's distributed Adam (training_results_v3.1 NVIDIA/
  // benchmarks/gpt3/implementations/pytorch run_and_time.sh:
  // USE_DIST_OPTIMIZER=True -> optim=distributed_fused_adam, overlap_grad_sync
  // True) at NeMo bd0b818a: megatron_gpt_model.py configure_optimizers sets
  // _disable_overlap_grad_sync on the tied embedding (pp > 1) and the
  // sequence-parallel weights and puts them, with every weight outside the
  // layers, in the last bucket, which training_step syncs after the backward
  // (_finish_bucket_grad_sync), not Megatron-Core's DDP buckets.
  stack.embedding_grads_after_backward = true;
  // Its attention is FlashAttention-2, not cuDNN's: the container installs
  // flash-attn 2.0.8 (training_results_v3.1 NVIDIA/benchmarks/gpt3/
  // implementations/pytorch/Dockerfile), leaves NVTE_FLASH_ATTN=0 commented out
  // (config_common.sh), and its Transformer Engine (TE_REVISION 09ba8427,
  // transformer_engine/pytorch/attention.py, DotProductAttention.forward) takes
  // flash-attn before FusedAttention whenever both qualify. Later TE versions
  // prefer cuDNN on Hopper, which the preset prices.
  const SoftwareStack fsdp = *FindSoftwareStackPreset("pytorch-fsdp");
  for (auto& [arch, kernel] : stack.attention_by_arch) {
    if (arch != "hopper") continue;
    for (const auto& [a, k] : fsdp.attention_by_arch)
      if (a == "hopper") kernel = k;
    REQUIRE(kernel.name == "flash-attn-2");
  }
  // The recipes turn Transformer Engine's userbuffers TP overlap on; the
  // preset's TP (no userbuffers) is what the table scores. The preset's derived
  // overlap (docs/DECISIONS.md "TP overlap": 0.875 of the TP time hidden,
  // GEMMs 6.9% slower) is priced beside it, printed only.
  SoftwareStack overlapped = stack;
  overlapped.tp_comm_overlap = 0.875;
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  if (print)
    std::printf(
        "| GPUs | layout | step measured s | predicted s | tokens/s/GPU measured | predicted | ratio | ratio, TP "
        "overlap 0.875 | memory GB |\n");
  std::vector<double> ratios;
  std::map<int, std::pair<double, double>> by_gpus;  // gpus -> (measured, predicted) tokens/s in all
  std::map<int, std::pair<double, double>> steps;    // gpus -> (measured, predicted) step time, s
  for (const auto& r : csv) {
    const std::string what = r.at("system") + " (" + r.at("gpus") + " GPUs)";
    REQUIRE(r.at("expressible").empty());
    REQUIRE(r.at("precision") == "fp8-hybrid");
    REQUIRE(r.at("tp_comm_overlap") == "true");
    const int gpus = std::stoi(r.at("gpus"));
    REQUIRE(gpus % (std::stoi(r.at("tp")) * std::stoi(r.at("pp")) * std::stoi(r.at("cp"))) == 0);
    std::string cfg, cfg_overlap;
    const Report rep = testing::PriceNemoRecipeRow(r, Precision::kFp8, stack, &cfg);
    INFO(what << " " << cfg << ": " << rep.infeasible_reason);
    REQUIRE(rep.tokens_per_s_per_gpu > 0);
    CHECK(rep.feasible);  // the runs trained: the layout fits in 80 GB
    const Report rep_overlap = testing::PriceNemoRecipeRow(r, Precision::kFp8, overlapped, &cfg_overlap);
    REQUIRE(rep_overlap.tokens_per_s_per_gpu > 0);
    // Hiding TP time never makes the step slower by more than the GEMM
    // slowdown it costs; at tp = 4 on NVLink it must win.
    CHECK(rep_overlap.tokens_per_s_per_gpu > rep.tokens_per_s_per_gpu);
    const double measured = MeasuredTokensPerS(r) / gpus;
    const double ratio = rep.tokens_per_s_per_gpu / measured;
    REQUIRE(std::isfinite(ratio));
    ratios.push_back(ratio);
    REQUIRE(by_gpus.count(gpus) == 0);
    by_gpus[gpus] = {measured * gpus, rep.tokens_per_s_per_gpu * gpus};
    steps[gpus] = {std::stod(r.at("step_time_s")), rep.step_time.si()};
    if (print) {
      std::printf("| %d | %s | %.3f | %.3f | %.1f | %.1f | %.3f | %.3f | %.1f |\n", gpus, cfg.c_str(),
                  std::stod(r.at("step_time_s")), rep.step_time.si(), measured, rep.tokens_per_s_per_gpu, ratio,
                  rep_overlap.tokens_per_s_per_gpu / measured, rep.memory_per_gpu.si() / 1e9);
      std::printf("  step %.3f s, compute %.3f, exposed comm %.3f, bubble %.3f; comm (total/exposed):",
                  rep.step_time.si(), rep.compute.si(), rep.exposed_comm.si(), rep.bubble.si());
      for (const auto& e : rep.by_dimension) std::printf(" %s %.3f/%.3f", e.name.c_str(), e.total.si(), e.exposed.si());
      std::printf("\n");
    }
  }
  REQUIRE(ratios.size() == kRows);
  const double median_error = Median(testing::AbsDeviations(ratios));
  // Throughput gain from the smallest to the largest run, measured and predicted.
  const auto& [small_measured, small_predicted] = by_gpus.begin()->second;
  const auto& [large_measured, large_predicted] = by_gpus.rbegin()->second;
  const double measured_gain = large_measured / small_measured, predicted_gain = large_predicted / small_predicted;
  const double gain_error = std::fabs(predicted_gain / measured_gain - 1);
  if (print) {
    std::printf("median ratio %.3f, median |ratio - 1| %.1f%%\n", Median(ratios), 100 * median_error);
    // Step = a·m + c from the 8,192- (m = 16) and 10,240-GPU (m = 8) runs,
    // neighbours in data-parallel degree: a per micro-batch, c fixed per step.
    for (int i = 0; i < 2; ++i) {
      const double t16 = i == 0 ? steps.at(8192).first : steps.at(8192).second;
      const double t8 = i == 0 ? steps.at(10240).first : steps.at(10240).second;
      const double a = (t16 - t8) / 8;
      std::printf("%s: %.4f s per micro-batch, %.3f s fixed per step\n", i == 0 ? "measured" : "predicted", a,
                  t16 - 16 * a);
    }
    std::printf("%d -> %d GPUs: measured gain %.2fx, predicted %.2fx (predicted/measured %.3f)\n",
                by_gpus.begin()->first, by_gpus.rbegin()->first, measured_gain, predicted_gain,
                predicted_gain / measured_gain);
  }
  // Committed in docs/accuracy.md "Throughput ratios: MLPerf GPT-3 175B on Eos"
  // (since the steady state's pipeline p2p hides under the passes,
  // overlap_p2p_comm: 0.138 and 0.134 before; before the data-parallel
  // collectives went chunk by chunk: 0.040 and 0.136).
  CHECK(median_error <= 0.190 + 0.02);
  CHECK(gain_error <= 0.041 + 0.02);
}

TEST_CASE("planner: the MLPerf GPT-3 175B rows agree with themselves", "[planner]") {
  const auto csv = testing::ReadCsv(testing::DataPath("throughput_mlperf_gpt3_h100.csv"));
  REQUIRE(csv.size() == kRows);
  std::map<long long, std::vector<double>> steps;  // micro-batches per step -> step times
  for (const auto& r : csv) {
    INFO(r.at("system"));
    const long long gpus = std::stoll(r.at("gpus")), gbs = std::stoll(r.at("gbs")), mbs = std::stoll(r.at("mbs")),
                    seq = std::stoll(r.at("seq_len")), tp = std::stoll(r.at("tp")), pp = std::stoll(r.at("pp")),
                    cp = std::stoll(r.at("cp")), vp = std::stoll(r.at("vp")), dp = std::stoll(r.at("dp")),
                    accum = std::stoll(r.at("grad_accum"));
    CHECK(gpus == 8 * std::stoll(r.at("nodes")));  // DGX H100: 8 GPUs a node
    CHECK(dp * tp * pp * cp == gpus);
    // NeMo's compute_consumed_mllog_tokens asserts gbs = dp · mbs · micro-batches.
    CHECK(gbs == dp * mbs * accum);
    // The log's tokens per step (its "step" metadata) is the batch times the sequence.
    CHECK(std::stoll(r.at("tokens_per_step")) == gbs * seq);
    // Interleaving: 96 layers in pp · vp equal chunks, micro-batches a multiple of pp (Megatron-Core's rule).
    CHECK(96 % (pp * vp) == 0);
    CHECK(accum % pp == 0);
    // The step time is the median of the three runs', and the runs agree within 1%.
    std::vector<double> runs;
    for (const char* k : {"step_time_s_run0", "step_time_s_run1", "step_time_s_run2"}) runs.push_back(std::stod(r.at(k)));
    CHECK(std::stod(r.at("step_time_s")) == Approx(Median(runs)).epsilon(1e-9));
    for (double t : runs) CHECK(t == Approx(Median(runs)).epsilon(0.01));
    // Each run logs whole evaluation blocks of ceil(24576 / gbs) steps (custom.yaml val_check_interval).
    const long long block = (24576 + gbs - 1) / gbs;
    for (const char* k : {"steps_run0", "steps_run1", "steps_run2"}) CHECK(std::stoll(r.at(k)) % block == 0);
    // The log's throughput divides by the whole timed epoch (evaluation and the
    // slower first step after each included): below the step rate, by no more
    // than the ~10% an evaluation of ~1.8 s per ~10-20 s block costs.
    const double step_rate = MeasuredTokensPerS(r), logged = std::stod(r.at("log_throughput"));
    CHECK(logged < step_rate);
    CHECK(logged > 0.8 * step_rate);
    steps[accum].push_back(std::stod(r.at("step_time_s")));
  }
  // At fixed tp, pp and vp a step is micro-batches x the time of one plus a
  // part that does not grow with them (bubble, data-parallel exchange,
  // optimizer). The 16- and 8-micro-batch runs give both; they must predict
  // the 128-micro-batch runs' step, whose data-parallel degree (16, 24) is far
  // smaller, within 3%: the data describe one per-micro-batch cost.
  REQUIRE(steps.count(8) == 1);
  REQUIRE(steps.count(16) == 1);
  REQUIRE(steps.count(128) == 1);
  const double t16 = Median(steps.at(16)), t8 = Median(steps.at(8));
  const double per_micro_batch = (t16 - t8) / 8, fixed = t16 - 16 * per_micro_batch;
  CHECK(per_micro_batch > 0);
  CHECK(fixed > 0);
  for (double t : steps.at(128)) CHECK(128 * per_micro_batch + fixed == Approx(t).epsilon(0.03));
}
