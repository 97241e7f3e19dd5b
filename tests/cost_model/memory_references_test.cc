// The memory model against measured peaks (tests/data/memory_sailor_*.csv:
// 36 Megatron-DeepSpeed runs on GH200 and consumer GPUs, nvidia-smi memory;
// each row names its source). The error summary is docs/accuracy.md's
// "## Memory" table; this test fails when the median error rises by more than
// 2 points above the recorded one or the worst passes the 20%.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/memory.h"
#include "core/statistics.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/cost_model/nanotron_sweep.h"
#include "tests/cost_model/sailor_models.h"
#include "tests/cost_model/torchtitan_rows.h"

using namespace parasim;

namespace {

// The models: tests/cost_model/sailor_models.h (one definition with the
// throughput test). Sailor's GPT-Neo pipe has no head at all
// (gpt_neo_model.py ends in a LayerNorm whose output goes to the loss); a
// ModelSpec cannot say so, so it keeps a tied head: only GPT-Neo N2_D1 (one
// micro-batch) peaks on that stage.
using testing::SailorModel;

struct MemoryRow {
  std::string run;
  bool suspect = false;   // the source row is inconsistent (the CSV says why): reported, not scored
  double predicted = 0, measured = 0;
  std::string breakdown;  // the peak stage's components, GiB (PARASIM_PRINT_MEMORY_TABLE)
  double Error() const { return predicted / measured - 1.0; }
};

// The components of a report's peak stage, GiB, as text (PARASIM_PRINT_MEMORY_BREAKDOWN).
std::string BreakdownText(const Report& rep) {
  std::string text;
  char part[64];
  for (const auto& [name, bytes] : rep.memory_breakdown_bytes) {
    std::snprintf(part, sizeof part, " %s %.2f", name.c_str(), bytes / (1 << 30));
    text += part;
  }
  return text;
}

// `bytes` of a stage's estimate less the stack's NCCL reserve and CUDA context
// (per GPU, the same on every stage): what the caching allocator reserves.
double ReservedPool(const Report& rep, double bytes) {
  for (const auto& [name, part] : rep.memory_breakdown_bytes)
    if (name == "reserve" || name == "cuda_context") bytes -= part;
  return bytes;
}

// The |error| of every scored row (suspect rows are reported, not scored);
// prints the rows as accuracy.md's table when PARASIM_PRINT_MEMORY_TABLE is set.
std::vector<double> ScoredErrors(const std::vector<MemoryRow>& rows) {
  std::vector<double> abs_errors;
  for (const MemoryRow& row : rows) {
    if (std::getenv("PARASIM_PRINT_MEMORY_TABLE"))
      std::printf("| %s | %.2f | %.2f | %+.1f%%%s |\n", row.run.c_str(), row.predicted / (1 << 30),
                  row.measured / (1 << 30), 100 * row.Error(), row.suspect ? " (suspect row)" : "");
    if (std::getenv("PARASIM_PRINT_MEMORY_BREAKDOWN")) std::printf("    %s\n", row.breakdown.c_str());
    CHECK(row.predicted > 0);
    if (!row.suspect) abs_errors.push_back(std::fabs(row.Error()));
  }
  return abs_errors;
}

double Worst(const std::vector<double>& abs_errors) {
  return abs_errors.empty() ? 0.0 : *std::max_element(abs_errors.begin(), abs_errors.end());
}

std::vector<MemoryRow> PredictSailorRuns() {
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack stack = LoadSoftwareStack(root + "/tests/data/stacks/sailor-megatron-deepspeed-fp32.yaml");
  std::vector<MemoryRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/memory_sailor_megatron_deepspeed.csv")) {
    const ModelSpec model = SailorModel(r.at("model"));
    const int tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp")), dp = std::stoi(r.at("dp"));
    const int gpus_per_node = r.at("cluster") == "alps-gh200" ? 4 : 8;
    const int world = tp * pp * dp;
    const int nodes = std::max(1, (world + gpus_per_node - 1) / gpus_per_node);
    ClusterSpec cluster = LoadCluster(r.at("cluster"), nodes);
    cluster.gpus_per_node = std::min(gpus_per_node, world);   // small runs use part of a node
    JobSpec job;
    job.global_batch = std::stoll(r.at("gbs"));
    job.seq_len = 2048;
    job.stack = stack.name;
    std::string cfg = "dp=" + r.at("dp") + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") + ",mbs=" + r.at("mbs") +
                      ",sharding=ddp,recompute=none,sp=off,schedule=1f1b";
    if (!r.at("pp_layers").empty()) cfg += ",pp_layers=" + r.at("pp_layers");
    const Report rep = AnalyticalEvaluator(model, cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
    out.push_back({r.at("run"), !r.at("suspect").empty(), rep.memory_per_gpu.si(), std::stod(r.at("measured_bytes")),
                   BreakdownText(rep)});
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memory against 36 measured Megatron-DeepSpeed peaks (Sailor)", "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictSailorRuns();
  REQUIRE(rows.size() == 36);
  const std::vector<double> abs_errors = ScoredErrors(rows);
  CHECK(abs_errors.size() == 33);
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.017;
  CHECK(median <= kRecordedMedian + 0.02);
  // The worst row (GPT-Neo N8_D2, +30%: 8 GB below its dp-4 twin, which the
  // model matches) and the small-micro-batch GH200 rows (~2 GB under) exceed
  // the 20% target (docs/accuracy.md says why): bounded where they are.
  constexpr double kRecordedWorst = 0.306;
  CHECK(worst <= kRecordedWorst + 0.02);
}

namespace {

// torchtitan's published peaks (tests/data/memory_torchtitan_llama3_8b.csv):
// the allocator's reserved peak, so the prediction is the peak stage's
// estimate less the stack's NCCL reserve and CUDA context. Compiled rows run
// the `torchtitan` preset, eager rows tests/data/stacks/torchtitan-eager.yaml.
std::vector<MemoryRow> PredictTorchtitanRuns() {
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack compiled = LoadSoftwareStack("torchtitan");
  const SoftwareStack eager = LoadSoftwareStack(root + "/tests/data/stacks/torchtitan-eager.yaml");
  const ModelSpec model = LoadModel("llama3-8b");
  std::vector<MemoryRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/memory_torchtitan_llama3_8b.csv")) {
    const SoftwareStack& stack = r.at("compile") == "true" ? compiled : eager;
    const int gpus = std::stoi(r.at("gpus"));
    const ClusterSpec cluster = LoadCluster("dgx-h100", gpus / 8);
    JobSpec job;
    job.global_batch = gpus * std::stoll(r.at("local_batch"));
    job.seq_len = 8192;
    job.stack = stack.name;
    const std::string cfg = "dp=" + r.at("gpus") + ",tp=1,pp=1,mbs=" + r.at("local_batch") +
                            ",sharding=zero3,recompute=selective";
    const Report rep = AnalyticalEvaluator(model, cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
    out.push_back({"torchtitan " + r.at("reference"), false, ReservedPool(rep, rep.memory_per_gpu.si()),
                   std::stod(r.at("measured_gib")) * (1 << 30), BreakdownText(rep)});
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memory against torchtitan's published Llama 3.1 8B FSDP peaks", "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictTorchtitanRuns();
  REQUIRE(rows.size() == 4);
  const std::vector<double> abs_errors = ScoredErrors(rows);
  // The compiled runs (the `torchtitan` preset) are within 2%.
  CHECK(std::fabs(rows[1].Error()) <= 0.02);
  CHECK(std::fabs(rows[3].Error()) <= 0.02);
  // Eager SAC also keeps each layer's w2 output (sac_keeps_unread_outputs):
  // activations, so the same extra at 8 and at 128 GPUs, and no more than the
  // measured eager − compiled gap (5.4 and 5.0 GiB; the rest is not modelled).
  const double extra8 = rows[0].predicted - rows[1].predicted, extra128 = rows[2].predicted - rows[3].predicted;
  CHECK(extra8 > 0);
  CHECK_THAT(extra128, Catch::Matchers::WithinRel(extra8, 1e-9));
  CHECK(extra8 <= rows[0].measured - rows[1].measured);
  CHECK(extra128 <= rows[2].measured - rows[3].measured);
  // 8 → 128 GPUs shards the states 16× thinner: the measured drop (15.4 GiB) and the predicted one agree.
  CHECK_THAT(rows[0].predicted - rows[2].predicted, Catch::Matchers::WithinRel(rows[0].measured - rows[2].measured, 0.1));
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.010, kRecordedWorst = 0.024;
  CHECK(Median(abs_errors) <= kRecordedMedian + 0.02);
  CHECK(Worst(abs_errors) <= kRecordedWorst + 0.02);
}

namespace {

// torchtitan's Float8, long-context and 2D/3D/4D peaks
// (tests/data/memory_torchtitan_perf_tables.csv), priced as they ran
// (tests/cost_model/torchtitan_rows.h); predicted = the allocator's
// reserved pool (the estimate less the stack's reserve and CUDA context).
std::vector<MemoryRow> PredictTorchtitanTableRuns(const std::string& csv = "memory_torchtitan_perf_tables.csv") {
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack compiled = LoadSoftwareStack("torchtitan");
  const SoftwareStack eager = LoadSoftwareStack(root + "/tests/data/stacks/torchtitan-eager.yaml");
  std::vector<MemoryRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/" + csv)) {
    const Report rep = testing::EvaluateTorchtitanTableRow(r, compiled, eager);
    out.push_back({"torchtitan " + r.at("reference"), false, ReservedPool(rep, rep.memory_per_gpu.si()),
                   std::stod(r.at("measured_gib")) * (1 << 30),
                   BreakdownText(rep) + " stage " + std::to_string(rep.memory_peak_stage)});
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memory against torchtitan's Float8 and 2D/3D/4D peaks", "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictTorchtitanTableRuns();
  REQUIRE(rows.size() == 14);
  const std::vector<double> abs_errors = ScoredErrors(rows);
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Float8 with FSDP float8 all-gather never needs more than the bf16 run
  // (measured: 0.2 GiB less at 8 and at 128 GPUs).
  const std::vector<MemoryRow> bf16 = PredictTorchtitanRuns();
  CHECK(rows[0].predicted <= bf16[1].predicted);
  CHECK(rows[1].predicted <= bf16[3].predicted);
  // Table 2 keeps b·s/cp = 32768 tokens per GPU: measured within 0.7% of each other, predicted within 2%.
  for (int i = 3; i < 6; ++i) CHECK_THAT(rows[i].predicted, Catch::Matchers::WithinRel(rows[2].predicted, 0.02));
  // Table 5: torch pipelining keeps its boundary tensors per stage, so the
  // interleaved rank (two stages) holds more than the 1F1B one; measured the
  // reverse (+9.8 GiB for 1F1B), which no source read explains (DECISIONS).
  REQUIRE(rows[9].run.find("interleaved") != std::string::npos);
  CHECK(rows[9].predicted > rows[8].predicted);
  // Table 6 (same tokens per GPU): the measured peak grows with cp; the prediction never falls.
  for (int i = 11; i < 14; ++i) CHECK(rows[i].predicted >= rows[i - 1].predicted);
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.073, kRecordedWorst = 0.174;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
}

TEST_CASE("cost_model: memory against torchao's float8 torchtitan benchmark peaks", "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictTorchtitanTableRuns("memory_torchao_float8_llama3_8b.csv");
  REQUIRE(rows.size() == 3);
  const double worst = Worst(ScoredErrors(rows));
  // The three recipes measure within 0.3% of each other; under op-level SAC
  // and with the bf16 embedding the largest FSDP unit, the model keeps them equal.
  CHECK_THAT(rows[1].predicted, Catch::Matchers::WithinRel(rows[0].predicted, 0.003));
  CHECK(rows[2].predicted == rows[0].predicted);
  INFO("worst |error| " << 100 * worst << "%");
  constexpr double kRecordedWorst = 0.025;
  CHECK(worst <= kRecordedWorst + 0.02);
}

namespace {

// Megatron-LM's own report_memory lines from public training logs
// (tests/data/memory_megatron_logs.csv; each row names its log, the rank that
// printed it and the shape, layout and flags it ran with). `max reserved` is
// the caching allocator's reserved peak on that rank (MiB: torch bytes / 2^20),
// so the prediction is the rank's pipeline stage estimate less the stack's
// reserve and CUDA context, as for torchtitan.
// One row of a Megatron CSV (tests/data/memory_megatron_*.csv: the run's
// shape, layout, flags and stack) priced as it ran.
struct MegatronRowEval {
  SoftwareStack stack;
  Report rep;
};

MegatronRowEval EvaluateMegatronCsvRow(const std::map<std::string, std::string>& r) {
  const std::string root = PARASIM_SOURCE_DIR;
  // A preset name, or a stack file under tests/data/stacks (the run's flags that differ from the preset).
  const std::string& stack_ref = r.at("stack");
  const bool stack_file = stack_ref.size() > 5 && stack_ref.substr(stack_ref.size() - 5) == ".yaml";
  const SoftwareStack stack = LoadSoftwareStack(stack_file ? root + "/tests/data/stacks/" + stack_ref : stack_ref);
  ModelSpec model;
  model.name = r.at("run");
  model.source = r.at("source");
  model.num_layers = std::stoll(r.at("layers"));
  model.hidden_size = std::stoll(r.at("hidden"));
  model.num_attention_heads = std::stoll(r.at("heads"));
  model.num_kv_heads = std::stoll(r.at("kv_heads"));
  model.ffn_hidden_size = std::stoll(r.at("ffn"));
  model.vocab_size = std::stoll(r.at("vocab"));   // as padded by Megatron (make_vocab_size_divisible_by · tp)
  model.mlp = r.at("mlp") == "swiglu" ? MlpKind::kSwiGlu : MlpKind::kGelu;
  model.norm = r.at("norm") == "rmsnorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  model.norm_bias = model.norm == NormKind::kLayerNorm;
  model.position = r.at("position") == "rope" ? PositionKind::kRope : PositionKind::kLearned;
  model.max_position_embeddings = std::stoll(r.at("max_positions"));
  model.tied_embeddings = r.at("tied") == "true";
  model.qk_norm = r.at("qk_norm") == "true";
  model.qkv_bias = model.linear_bias = r.at("linear_bias") == "true";
  const int gpus = std::stoi(r.at("gpus")), gpus_per_node = std::stoi(r.at("gpus_per_node"));
  ClusterSpec cluster = LoadCluster(r.at("cluster"), (gpus + gpus_per_node - 1) / gpus_per_node);
  // Nodes of 4 (Leonardo Booster) are their own NVLink domain; the fabric
  // does not enter the memory estimate.
  cluster.gpus_per_node = cluster.intra_node.nvlink_domain_size = gpus_per_node;
  JobSpec job;
  job.global_batch = std::stoll(r.at("gbs"));
  job.seq_len = std::stoll(r.at("seq_len"));
  job.stack = stack.name;
  if (r.at("precision") == "fp8") job.precision = Precision::kFp8;   // bf16 and fp16: both 2-byte
  const int pp = std::stoi(r.at("pp")), vpp = std::stoi(r.at("vpp"));
  std::string cfg = "dp=" + r.at("dp") + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") + ",cp=" + r.at("cp") +
                    ",mbs=" + r.at("mbs") + ",sharding=" + r.at("sharding") + ",recompute=" + r.at("recompute") +
                    ",sp=" + r.at("sp");
  if (pp > 1) cfg += vpp > 1 ? ",schedule=interleaved,vpp=" + r.at("vpp") : ",schedule=1f1b";
  Report rep = AnalyticalEvaluator(model, cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
  return {stack, std::move(rep)};
}

std::vector<MemoryRow> PredictMegatronLogRuns() {
  const std::string root = PARASIM_SOURCE_DIR;
  std::vector<MemoryRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/memory_megatron_logs.csv")) {
    const Report rep = EvaluateMegatronCsvRow(r).rep;
    const int pp = std::stoi(r.at("pp"));
    INFO(r.at("run") << ": " << rep.infeasible_reason);
    REQUIRE(rep.memory_bytes_per_stage.size() == static_cast<size_t>(pp));
    const int stage = std::stoi(r.at("stage"));
    // The breakdown is the peak stage's; its reserve and context are per GPU, the same on every stage.
    out.push_back({r.at("run") + " (rank " + r.at("rank") + ")", false,
                   ReservedPool(rep, rep.memory_bytes_per_stage.at(stage)),
                   std::stod(r.at("measured_max_reserved_mib")) * (1 << 20),
                   BreakdownText(rep) + " (peak stage " + std::to_string(rep.memory_peak_stage) + ")"});
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memory against Megatron-LM report_memory peaks from public logs", "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictMegatronLogRuns();
  REQUIRE(rows.size() == 9);
  const std::vector<double> abs_errors = ScoredErrors(rows);
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Per pipeline stage the prediction falls as the measurement does (PP4:
  // 4, 3, 2, 1 micro-batches in flight; the last stage adds the loss).
  REQUIRE(rows[5].run.find("pp4 stage 0") != std::string::npos);
  CHECK(rows[5].predicted > rows[6].predicted);
  CHECK(rows[6].predicted > rows[7].predicted);
  CHECK(rows[5].measured > rows[6].measured);
  CHECK(rows[6].measured > rows[7].measured);
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  // The worst row is GPT-345M TP4 (allocator slack over small transients: docs/accuracy.md).
  constexpr double kRecordedMedian = 0.035, kRecordedWorst = 0.102;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
}

namespace {

// Megatron-Core's CI memory figures (tests/data/memory_megatron_ci_allocated.csv):
// the golden "mem-max-allocated-bytes" of Megatron-LM's functional tests,
// torch.cuda's allocated peak on the last global rank (the last pipeline
// stage). The model's transient parts carry the allocator's fragmentation;
// the allocated peak has none, so the prediction is the stage's estimate less
// the reserve and CUDA context, with the transient parts taken back to
// allocated bytes where the measured stage is the peak stage (whose breakdown
// the report gives). Elsewhere the pool is used and the row says so.
double AllocatedStagePeak(const Report& rep, const SoftwareStack& stack, int stage, bool* exact) {
  const double pool = ReservedPool(rep, rep.memory_bytes_per_stage.at(stage));
  *exact = stage == rep.memory_peak_stage;
  if (!*exact) return pool;
  double transient = 0;
  for (const auto& [name, bytes] : rep.memory_breakdown_bytes)
    if (name == "gathered_weights" || name == "grad_temporaries" || name == "activations" || name == "logits" ||
        name == "optimizer_temporaries" || name == "pipeline_buffers")
      transient += bytes;
  return pool - transient * (1.0 - 1.0 / stack.fragmentation);
}

std::vector<MemoryRow> PredictMegatronCiRuns() {
  const std::string root = PARASIM_SOURCE_DIR;
  std::vector<MemoryRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/memory_megatron_ci_allocated.csv")) {
    const MegatronRowEval e = EvaluateMegatronCsvRow(r);
    INFO(r.at("run") << ": " << e.rep.infeasible_reason);
    REQUIRE(e.rep.memory_bytes_per_stage.size() == static_cast<size_t>(std::stoi(r.at("pp"))));
    bool exact = false;
    const double predicted = AllocatedStagePeak(e.rep, e.stack, std::stoi(r.at("stage")), &exact);
    out.push_back({r.at("run") + (exact ? "" : " (pool: not the peak stage)"), false, predicted,
                   std::stod(r.at("measured_max_allocated_bytes")),
                   BreakdownText(e.rep) + " (peak stage " + std::to_string(e.rep.memory_peak_stage) + ")"});
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memory against Megatron-Core's CI allocated peaks (Megatron-LM functional tests)",
          "[cost_model][memory]") {
  const std::vector<MemoryRow> rows = PredictMegatronCiRuns();
  REQUIRE(rows.size() == 11);
  const std::vector<double> abs_errors = ScoredErrors(rows);
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Full recompute of every layer keeps one layer's inputs instead of its
  // activations: below the same tp1·dp8 shape without it, as measured (2.36 vs 4.38 GiB).
  REQUIRE(rows[7].run.find("full recompute") != std::string::npos);
  CHECK(rows[7].predicted < rows[2].predicted);
  CHECK(rows[7].measured < rows[2].measured);
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  // The interleaved rows hold 2·(p − r − 1) + (v − 1)·p + 1 chunks on the last
  // rank (Megatron-Core since 4295be1a), not every chunk at m = p: with the
  // older all-warm-up rule the same runs were over-predicted (+3.9%, +13.9%; the
  // distributed-optimizer twin of the second +14.8%).
  REQUIRE(rows[1].run.find("vpp8") != std::string::npos);
  REQUIRE(rows[4].run.find("vpp3") != std::string::npos);
  CHECK(std::fabs(rows[1].Error()) <= 0.02);
  CHECK(std::fabs(rows[4].Error()) <= 0.04);
  REQUIRE(rows[8].run.find("vpp3 mbs4 unfused dist-opt") != std::string::npos);
  CHECK(std::fabs(rows[8].Error()) <= 0.04);
  // The distributed optimizer shards the fp32 states over dp 2: the same
  // activations, less optimizer memory (measured −0.20 GiB, predicted −0.20).
  CHECK(rows[8].predicted < rows[4].predicted);
  CHECK(rows[8].measured < rows[4].measured);
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.014, kRecordedWorst = 0.038;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
}

TEST_CASE("cost_model: Megatron-Core's interleaved warm-up has no all-chunks case at m = pp since 2024-11",
          "[cost_model][memory]") {
  // pp 4, v 3, m 4: the last rank warms up 2·0 + 2·4 = 8 chunks and holds 9
  // (3 micro-batches' worth of its layers), the first 2·3 + 8 = 14 > 12, capped: all 12.
  CHECK(InterleavedMicroBatchesInFlight(4, 4, 3, 3, false) == 3.0);
  CHECK(InterleavedMicroBatchesInFlight(4, 4, 3, 0, false) == 4.0);
  CHECK(InterleavedMicroBatchesInFlight(4, 4, 3, 3, true) == 4.0);   // before 4295be1a
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack now = LoadSoftwareStack(root + "/tests/data/stacks/megatron-core-2025-interleaved-warmup.yaml");
  CHECK_FALSE(now.pp_interleaved_full_warmup);
}

namespace {

// The Ultra-Scale Playbook's nanotron sweep (tests/data/
// throughput_hf_ultrascale_nanotron_h100.csv, priced as
// tests/cost_model/nanotron_sweep.h maps each run): peak_mem_gb is
// global rank 0's torch.cuda.max_memory_reserved() / 2^30 after step 3
// (nanotron a756526 helpers.py create_table_log "Mem Res (GB)"; the CSV
// header says how), so the prediction is pipeline stage 0's estimate less
// the stack's reserve and CUDA context. Runs with more pipeline stages than
// layers (not expressible) are reported, not scored.
struct NanotronMemoryRow {
  testing::NanotronRun run;
  bool expressible = false;
  bool fits = false;   // the estimate fits the GPU (every run here trained on 80 GB)
  MemoryRow row;
  // The same log line's torch.cuda.max_memory_allocated(): nanotron's
  // log_memory (a756526 src/nanotron/logging.py) resets the peaks right after
  // step 3's pipeline pass (trainer.py training_step), so it is the allocated
  // peak from the end of backward through the gradient sync, clipping,
  // optimizer step and ZeRO-1 all-gather to the log: stage 0's
  // allocated_after_backward (no activations, no allocator pool).
  MemoryRow allocated;
};

std::vector<NanotronMemoryRow> PredictNanotronSweepRuns() {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  std::vector<NanotronMemoryRow> out;
  for (const testing::NanotronRun& run : testing::ReadNanotronSweep()) {
    const Report rep = testing::EvaluateNanotronRun(run, stack);
    char name[160];
    std::snprintf(name, sizeof name, "%s kv%d n%d dp%d tp%d pp%d mbs%d zero%d", run.model.c_str(), run.kv_heads,
                  run.nodes, run.dp, run.tp, run.pp, run.mbs, run.zero);
    NanotronMemoryRow r{run, !rep.memory_bytes_per_stage.empty(), rep.feasible, {}};
    r.row.run = name;
    r.row.suspect = run.suspect || !r.expressible;
    r.row.measured = run.peak_mem_gib * (1 << 30);
    r.row.predicted = r.expressible ? ReservedPool(rep, rep.memory_bytes_per_stage.front()) : 0;
    r.row.breakdown = BreakdownText(rep) + " (peak stage " + std::to_string(rep.memory_peak_stage) + ")";
    r.allocated.run = name;
    r.allocated.suspect = r.row.suspect;
    r.allocated.measured = run.peak_alloc_gib * (1 << 30);
    r.allocated.predicted = r.expressible ? rep.memory_allocated_after_backward_per_stage.front() : 0;
    out.push_back(std::move(r));
  }
  return out;
}

// Signed median error, median and worst |error| of a group, as accuracy.md's tables print them.
void PrintNanotronGroups(const char* title, const std::map<std::string, std::vector<double>>& groups) {
  std::printf("%s\n| group | runs | median error | median abs error | worst abs error |\n", title);
  for (const auto& [group, errors] : groups) {
    std::vector<double> abs_errors;
    for (double e : errors) abs_errors.push_back(std::fabs(e));
    std::printf("| %s | %zu | %+.1f%% | %.1f%% | %.1f%% |\n", group.c_str(), errors.size(), 100 * Median(errors),
                100 * Median(abs_errors), 100 * Worst(abs_errors));
  }
}

// The signed error of every scored row in `rows` (the MemoryRow `pick`
// selects), grouped by mbs, tp, pp, ZeRO stage, nodes and model; prints the
// groups as accuracy.md's tables when PARASIM_PRINT_MEMORY_TABLE is set.
std::vector<double> NanotronAbsErrors(const std::vector<NanotronMemoryRow>& rows,
                                      const MemoryRow NanotronMemoryRow::*pick, const char* what) {
  std::vector<double> abs_errors;
  std::map<std::string, std::map<std::string, std::vector<double>>> groups;
  for (const NanotronMemoryRow& r : rows) {
    const MemoryRow& row = r.*pick;
    if (std::getenv("PARASIM_PRINT_MEMORY_ROWS"))
      std::printf("row %s | %s | %.2f | %.2f | %+.1f%%%s |%s\n", what, row.run.c_str(), row.predicted / (1 << 30),
                  row.measured / (1 << 30), 100 * row.Error(), row.suspect ? " (not scored)" : "",
                  r.row.breakdown.c_str());
    if (row.suspect) continue;
    INFO(row.run);
    REQUIRE(std::isfinite(row.Error()));
    const double error = row.Error();
    abs_errors.push_back(std::fabs(error));
    const auto bucket = [](int v) { return v >= 16 ? std::string(">=16") : "=" + std::to_string(v); };
    groups["by mbs"]["mbs" + bucket(r.run.mbs)].push_back(error);
    groups["by tp"]["tp" + bucket(r.run.tp)].push_back(error);
    groups["by pp"]["pp" + bucket(r.run.pp)].push_back(error);
    groups["by zero"]["zero=" + std::to_string(r.run.zero)].push_back(error);
    groups["by nodes"]["nodes" + bucket(r.run.nodes)].push_back(error);
    groups["by model"][r.run.model + " kv" + std::to_string(r.run.kv_heads)].push_back(error);
  }
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE")) {
    std::printf("nanotron sweep, %s:\n", what);
    for (const auto& [title, by] : groups) PrintNanotronGroups(title.c_str(), by);
  }
  return abs_errors;
}

}  // namespace

TEST_CASE("cost_model: memory against the nanotron sweep's measured reserved peaks", "[cost_model][memory]") {
  const std::vector<NanotronMemoryRow> rows = PredictNanotronSweepRuns();
  REQUIRE(rows.size() == 1758);
  const std::vector<double> abs_errors = NanotronAbsErrors(rows, &NanotronMemoryRow::row, "reserved");
  int over_capacity = 0;
  for (const NanotronMemoryRow& r : rows)   // every scored run trained on 80 GB: scored as an error, not skipped
    if (!r.row.suspect && !r.fits) ++over_capacity;
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE"))
    std::printf("nanotron sweep: %zu scored, median |error| %.1f%%, worst %.1f%%, predicted over the GPU %d\n",
                abs_errors.size(), 100 * median, 100 * worst, over_capacity);
  // 18 suspect rows and the one run with more stages than layers are reported, not scored.
  CHECK(abs_errors.size() == 1739);
  CHECK(over_capacity == 0);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.078, kRecordedWorst = 1.933;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
}

TEST_CASE("cost_model: nanotron's ZeRO-1 buffers past the GPU: the pool is the larger of peak and buffers, "
          "every other run unchanged",
          "[cost_model][memory]") {
  // Per scored ZeRO-1 run, `roomy` prices it on a GPU too large to release
  // anything (stage 0 its peak stage, whose breakdown gives the buffers'
  // added segments and the forward/backward peak). Where that sum fits the
  // GPU the pool is the sum; where it passes it, the states plus the larger
  // of the peak and the buffers.
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  REQUIRE(stack.optimizer_temp_bytes == 0);   // optimizer_temporaries holds the buffers alone
  const auto part = [](const Report& rep, const char* name) {
    for (const auto& [n, bytes] : rep.memory_breakdown_bytes)
      if (n == name) return bytes;
    return 0.0;
  };
  std::vector<double> released_errors;
  int unchanged = 0, pending_released = 0;
  for (const NanotronMemoryRow& r : PredictNanotronSweepRuns()) {
    if (r.row.suspect || r.run.zero != 1) continue;
    ClusterSpec cluster = LoadCluster("aws-p5", r.run.nodes);
    const double device = cluster.gpu.hbm_capacity.si();
    const Report with = testing::EvaluateNanotronRunOn(r.run, stack, cluster);
    cluster.gpu.hbm_capacity = GB(1e6);
    const Report roomy = testing::EvaluateNanotronRunOn(r.run, stack, cluster);
    INFO(r.row.run);
    const double pool = with.memory_bytes_per_stage.front(), sum = roomy.memory_bytes_per_stage.front();
    if (sum <= device) {
      CHECK(pool == sum);
      ++unchanged;
      continue;
    }
    REQUIRE(roomy.memory_peak_stage == 0);
    // The buffers' failed cudaMalloc releases the activations' segments: the
    // states plus the larger of the forward/backward peak (pending
    // reduce-scatter inputs included, pp = 1 with tp > 1) and the buffers.
    const double buffers = part(roomy, "optimizer_temporaries");
    const double peak = part(roomy, "activations") + part(roomy, "logits") + part(roomy, "gathered_weights") +
                        part(roomy, "grad_temporaries") + part(roomy, "pending_collective_inputs");
    const double released = sum - buffers - peak + std::max(peak, buffers);
    if (buffers == 0 || released > device) {
      // Still past the GPU: the allocator frees the pending inputs as well,
      // and the pool is the one without them.
      REQUIRE(part(roomy, "pending_collective_inputs") > 0);
      SoftwareStack bare = stack;
      bare.tp_pending_collective_inputs = 0;
      CHECK(pool == testing::EvaluateNanotronRunOn(r.run, bare, LoadCluster("aws-p5", r.run.nodes))
                        .memory_bytes_per_stage.front());
      CHECK(pool <= device);
      ++pending_released;
      continue;
    }
    CHECK_THAT(pool, Catch::Matchers::WithinRel(released, 1e-12));
    CHECK(pool <= device);
    released_errors.push_back(std::fabs(r.row.Error()));
  }
  // docs/accuracy.md, nanotron section: 10 runs pass the GPU with the buffers; median |error| 3.9 %
  // (12.4 % when the pool stopped at the GPU).
  CHECK(unchanged + pending_released + released_errors.size() == 1224);   // every scored ZeRO-1 run
  INFO(pending_released << " runs past the GPU by their pending reduce-scatter inputs");
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE"))
    std::printf("ZeRO-1 release: %zu runs, median |error| %.1f%%; %d past the GPU by pending inputs alone\n",
                released_errors.size(), 100 * Median(released_errors), pending_released);
  REQUIRE(released_errors.size() == 14);
  INFO("released runs' median |error| " << 100 * Median(released_errors) << "%");
  CHECK(Median(released_errors) <= 0.04 + 0.02);
}

TEST_CASE("cost_model: nanotron's kept TP all-gather buffers are two tokens x hidden bf16 tensors with tp > 1",
          "[cost_model][memory]") {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  REQUIRE(stack.tp_gather_buffers == 2);
  testing::NanotronRun run;
  run.model = "nanotron-1b";
  run.kv_heads = 32;
  run.nodes = 1;
  run.mbs = 2;
  const auto part = [](const Report& rep, const std::string& name) {
    for (const auto& [n, bytes] : rep.memory_breakdown_bytes)
      if (n == name) return bytes;
    return 0.0;
  };
  for (int tp : {1, 4}) {
    run.tp = tp;
    run.dp = 8 / tp;
    run.grad_acc = 128 / run.dp;
    const Report rep = testing::EvaluateNanotronRun(run, stack);
    INFO("tp " << tp << ": " << rep.infeasible_reason);
    REQUIRE(rep.feasible);
    // 2 buffers x (mbs 2 x 4,096 tokens) x hidden 2,048 x 2 B; none without tp.
    CHECK(part(rep, "kept_buffers") == (tp > 1 ? 2.0 * 2 * 4096 * 2048 * 2 : 0.0));
    // The allocated peak after backward is below the stage's allocated peak (activations freed).
    CHECK(rep.memory_allocated_after_backward_per_stage.front() <
          ReservedPool(rep, rep.memory_bytes_per_stage.front()));
  }
}

TEST_CASE("cost_model: nanotron's pending reduce-scatter inputs: two tokens x hidden blocks per layer, pp = 1, "
          "tp > 1, reserved only",
          "[cost_model][memory]") {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  REQUIRE(stack.tp_pending_collective_inputs == 2);
  SoftwareStack without = stack;
  without.tp_pending_collective_inputs = 0;
  const auto part = [](const Report& rep, const std::string& name) {
    for (const auto& [n, bytes] : rep.memory_breakdown_bytes)
      if (n == name) return bytes;
    return 0.0;
  };
  testing::NanotronRun run;
  run.model = "nanotron-1b";   // 16 layers, hidden 2,048
  run.kv_heads = 32;
  run.nodes = 2;
  run.mbs = 2;
  for (const auto& [tp, pp] : std::vector<std::pair<int, int>>{{1, 1}, {4, 1}, {16, 1}, {4, 2}}) {
    run.tp = tp;
    run.pp = pp;
    run.dp = 16 / (tp * pp);
    run.grad_acc = 128 / run.dp;
    const Report with = testing::EvaluateNanotronRun(run, stack), base = testing::EvaluateNanotronRun(run, without);
    INFO("tp " << tp << " pp " << pp);
    REQUIRE(with.feasible);
    // 2 blocks x 16 layers x (mbs 2 x 4,096 tokens) x hidden 2,048 x 2 B, only without a pipeline and with tp.
    const double expected = tp > 1 && pp == 1 ? 2.0 * 16 * 2 * 4096 * 2048 * 2 : 0.0;
    CHECK(part(with, "pending_collective_inputs") == expected);
    CHECK_THAT(with.memory_bytes_per_stage.front() - base.memory_bytes_per_stage.front(),
               Catch::Matchers::WithinAbs(expected, 1.0));
    // Freed blocks, never allocated: the allocated peak after backward does not move.
    CHECK(with.memory_allocated_after_backward_per_stage.front() ==
          base.memory_allocated_after_backward_per_stage.front());
  }
}

TEST_CASE("cost_model: nanotron's multi-head attention keeps the packed qkv copy (2·a·d per token more)",
          "[cost_model][memory]") {
  SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  REQUIRE(stack.query_keeps_packed_qkv);
  const ModelSpec mha = testing::NanotronModel("nanotron-1b", 32);
  const ModelSpec gqa = testing::NanotronModel("nanotron-1b", 8);
  const double ad = static_cast<double>(mha.num_attention_heads * mha.HeadDim());
  CHECK(PackedQkvKeptBytes(mha, stack) == 2.0 * ad * 2.0);   // k and v thirds, bf16
  CHECK(PackedQkvKeptBytes(gqa, stack) == 0.0);              // separate q, k, v copies
  const ActivationPerToken with_mha = LayerActivationPerToken(mha, stack);
  const ActivationPerToken with_gqa = LayerActivationPerToken(gqa, stack);
  stack.query_keeps_packed_qkv = false;
  // Split over tp like the rest of the attention; nothing else moves.
  CHECK(with_mha.split - LayerActivationPerToken(mha, stack).split == 4.0 * ad);
  CHECK(with_mha.replicated == LayerActivationPerToken(mha, stack).replicated);
  CHECK(with_gqa.split == LayerActivationPerToken(gqa, stack).split);
}

TEST_CASE("cost_model: nanotron's loss reserves 10 B per local vocab element (bf16 segment beside two fp32)",
          "[cost_model][memory]") {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  const double tokens = 2 * 4096, vocab = 131072;
  for (int tp : {1, 4})   // no vocab-parallel figure of its own: the same per element at any tp
    CHECK(LossBytes(stack, tokens, vocab, tp) == tokens * vocab / tp * (2.0 + 4.0 + 4.0));
}

TEST_CASE("cost_model: nanotron's tp = 1 reserved peaks grow with the micro-batch as the activations counted",
          "[cost_model][memory]") {
  // Stage 0 of a tp = 1, pp > 1 run holds no loss and no TP buffers: per
  // layout, the least-squares slope over the micro-batch of the measured
  // reserved peak against that of the prediction (docs/DECISIONS.md
  // "nanotron's memory as the sweep measured it": 1.074x before the packed
  // q,k,v copy and the 1.05 slack were settled).
  std::map<std::string, std::vector<const NanotronMemoryRow*>> layouts;
  const std::vector<NanotronMemoryRow> rows = PredictNanotronSweepRuns();
  for (const NanotronMemoryRow& r : rows) {
    if (r.row.suspect || r.run.tp != 1 || r.run.pp == 1) continue;
    layouts[r.run.model + " kv" + std::to_string(r.run.kv_heads) + " n" + std::to_string(r.run.nodes) + " pp" +
            std::to_string(r.run.pp) + " zero" + std::to_string(r.run.zero)]
        .push_back(&r);
  }
  const auto slope = [](const std::vector<const NanotronMemoryRow*>& g, bool measured) {
    double mx = 0, my = 0;
    for (const auto* r : g) {
      mx += r->run.mbs;
      my += measured ? r->row.measured : r->row.predicted;
    }
    mx /= g.size();
    my /= g.size();
    double sxy = 0, sxx = 0;
    for (const auto* r : g) {
      sxy += (r->run.mbs - mx) * ((measured ? r->row.measured : r->row.predicted) - my);
      sxx += (r->run.mbs - mx) * (r->run.mbs - mx);
    }
    return sxx > 0 ? sxy / sxx : 0.0;
  };
  std::vector<double> ratios;
  for (const auto& [layout, g] : layouts) {
    const double predicted = slope(g, false);
    if (predicted > 0) ratios.push_back(slope(g, true) / predicted);
  }
  REQUIRE(ratios.size() >= 25);
  const double median = Median(ratios);
  INFO(ratios.size() << " layouts, median measured/predicted slope " << median);
  CHECK(median >= 0.95);
  CHECK(median <= 1.05);
}

TEST_CASE("cost_model: nanotron's tp > 1, pp = 1 reserved peaks grow with the micro-batch as counted, pending "
          "reduce-scatter inputs included",
          "[cost_model][memory]") {
  // Per pp = 1, tp > 1 layout, the least-squares slope over the micro-batch
  // of the measured reserved peak against that of the prediction (docs/
  // DECISIONS.md "nanotron's pending reduce-scatter inputs": median 1.23
  // without them, the degraded-fabric jobs that held none included).
  std::map<std::string, std::vector<std::pair<double, double>>> layouts;   // (mbs, measured or predicted)
  std::map<std::string, std::vector<std::pair<double, double>>> predicted;
  for (const NanotronMemoryRow& r : PredictNanotronSweepRuns()) {
    if (r.row.suspect || r.run.tp == 1 || r.run.pp != 1) continue;
    const std::string key = r.run.model + " kv" + std::to_string(r.run.kv_heads) + " n" +
                            std::to_string(r.run.nodes) + " dp" + std::to_string(r.run.dp) + " tp" +
                            std::to_string(r.run.tp) + " zero" + std::to_string(r.run.zero);
    layouts[key].emplace_back(r.run.mbs, r.row.measured);
    predicted[key].emplace_back(r.run.mbs, r.row.predicted);
  }
  const auto slope = [](const std::vector<std::pair<double, double>>& g) {
    double mx = 0, my = 0;
    for (const auto& [x, y] : g) {
      mx += x;
      my += y;
    }
    mx /= g.size();
    my /= g.size();
    double sxy = 0, sxx = 0;
    for (const auto& [x, y] : g) {
      sxy += (x - mx) * (y - my);
      sxx += (x - mx) * (x - mx);
    }
    return sxx > 0 ? sxy / sxx : 0.0;
  };
  std::vector<double> ratios;
  for (const auto& [layout, g] : layouts) {
    if (g.size() < 2) continue;
    const double p = slope(predicted.at(layout));
    if (p > 0) ratios.push_back(slope(g) / p);
  }
  REQUIRE(ratios.size() >= 100);
  const double median = Median(ratios);
  INFO(ratios.size() << " layouts, median measured/predicted slope " << median);
  CHECK(median >= 0.90);
  CHECK(median <= 1.05);
}

TEST_CASE("cost_model: memory against the nanotron sweep's measured allocated peaks after backward",
          "[cost_model][memory]") {
  // The tensors the model counts (states, kept buffers, step temporaries),
  // without activations and without the caching allocator's pool: separates
  // counting errors from the reserved-minus-allocated gap.
  const std::vector<NanotronMemoryRow> rows = PredictNanotronSweepRuns();
  const std::vector<double> abs_errors = NanotronAbsErrors(rows, &NanotronMemoryRow::allocated, "allocated");
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE"))
    std::printf("nanotron sweep, allocated after backward: %zu scored, median |error| %.1f%%, worst %.1f%%\n",
                abs_errors.size(), 100 * median, 100 * worst);
  CHECK(abs_errors.size() == 1739);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  // Recorded in docs/accuracy.md "## Memory": the regression bound is that + 2 points.
  constexpr double kRecordedMedian = 0.002, kRecordedWorst = 0.237;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
  // At tp = 1 (no kept TP buffers; states counted to the byte) the measured
  // allocated peak sat a constant 64-85 MB above the model: PyTorch's two
  // cuBLAS workspaces (2 x 32 MiB = 67.1 MB on H100). With them counted the
  // median remainder is within 16 MiB either way.
  std::vector<double> tp1_remainder;
  for (const NanotronMemoryRow& r : rows)
    if (r.expressible && !r.allocated.suspect && r.run.tp == 1)
      tp1_remainder.push_back(r.allocated.measured - r.allocated.predicted);
  REQUIRE(tp1_remainder.size() > 100);
  const double remainder = Median(tp1_remainder);
  INFO("tp = 1 median allocated remainder " << remainder / 1e6 << " MB");
  CHECK(std::fabs(remainder) <= 16.0 * 1024 * 1024);
}

TEST_CASE("cost_model: memory against every measured reference, combined", "[cost_model][memory]") {
  // docs/accuracy.md "## Memory" reports the median and worst |error| over
  // every scored row (Sailor's suspect rows left out).
  std::vector<double> abs_errors;
  for (const auto& rows : {PredictSailorRuns(), PredictTorchtitanRuns(), PredictTorchtitanTableRuns(),
                           PredictTorchtitanTableRuns("memory_torchao_float8_llama3_8b.csv"), PredictMegatronLogRuns(),
                           PredictMegatronCiRuns()})
    for (const MemoryRow& row : rows)
      if (!row.suspect) abs_errors.push_back(std::fabs(row.Error()));
  for (const NanotronMemoryRow& r : PredictNanotronSweepRuns())
    if (!r.row.suspect) abs_errors.push_back(std::fabs(r.row.Error()));
  REQUIRE(abs_errors.size() == 33 + 4 + 14 + 3 + 9 + 11 + 1739);
  const double median = Median(abs_errors), worst = Worst(abs_errors);
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE"))
    std::printf("combined: %zu rows, median |error| %.1f%%, worst %.1f%%\n", abs_errors.size(), 100 * median,
                100 * worst);
  INFO("median |error| " << 100 * median << "%, worst " << 100 * worst << "%");
  constexpr double kRecordedMedian = 0.076, kRecordedWorst = 1.933;
  CHECK(median <= kRecordedMedian + 0.02);
  CHECK(worst <= kRecordedWorst + 0.02);
}

TEST_CASE("cost_model: memory in the judged regime (sequence >= 16K or micro-batch >= 4), by reference",
          "[cost_model][memory]") {
  // Issue 13's regime: the signed error of every scored row with a sequence
  // of 16K or more or a micro-batch of 4 or more, grouped by reference (stack).
  const std::string root = PARASIM_SOURCE_DIR;
  std::map<std::string, std::vector<double>> groups;
  const auto add = [&](const std::string& group, const std::vector<MemoryRow>& rows, const std::string& csv,
                       const char* mbs_col, const char* micro_col, const char* seq_col, long long seq_default) {
    const auto raw = testing::ReadCsv(root + "/tests/data/" + csv);
    REQUIRE(raw.size() == rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const long long mbs = std::stoll(raw[i].at(mbs_col)) / (micro_col ? std::stoll(raw[i].at(micro_col)) : 1);
      const long long seq = seq_col ? std::stoll(raw[i].at(seq_col)) : seq_default;
      if (!rows[i].suspect && (seq >= 16384 || mbs >= 4)) groups[group].push_back(rows[i].Error());
    }
  };
  add("Sailor (Megatron-DeepSpeed fp32, nvidia-smi)", PredictSailorRuns(), "memory_sailor_megatron_deepspeed.csv",
      "mbs", nullptr, nullptr, 2048);
  add("torchtitan tables (reserved)", PredictTorchtitanTableRuns(), "memory_torchtitan_perf_tables.csv", "local_batch",
      "microbatches", "seq_len", 0);
  add("torchao float8 (torchtitan, reserved)", PredictTorchtitanTableRuns("memory_torchao_float8_llama3_8b.csv"),
      "memory_torchao_float8_llama3_8b.csv", "local_batch", "microbatches", "seq_len", 0);
  add("Megatron-LM logs (reserved)", PredictMegatronLogRuns(), "memory_megatron_logs.csv", "mbs", nullptr, "seq_len",
      0);
  add("Megatron-Core CI (allocated)", PredictMegatronCiRuns(), "memory_megatron_ci_allocated.csv", "mbs", nullptr,
      "seq_len", 0);
  for (const NanotronMemoryRow& r : PredictNanotronSweepRuns())   // sequence 4,096 throughout
    if (!r.row.suspect && r.run.mbs >= 4) groups["nanotron sweep (reserved)"].push_back(r.row.Error());
  std::vector<double> all;
  for (const auto& [group, errors] : groups) all.insert(all.end(), errors.begin(), errors.end());
  groups["all references"] = all;
  if (std::getenv("PARASIM_PRINT_MEMORY_TABLE")) PrintNanotronGroups("judged regime (s >= 16K or mbs >= 4):", groups);
  CHECK(groups.at("Megatron-Core CI (allocated)").size() == 9);
  CHECK(groups.at("torchtitan tables (reserved)").size() == 12);
  for (double e : all) CHECK(std::isfinite(e));
}
