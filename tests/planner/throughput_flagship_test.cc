// Predicted / measured training throughput of published flagship runs (issue
// 13; docs/accuracy.md "Throughput ratios: flagship runs"): BLOOM-176B, MT-NLG
// 530B, Megatron-LM's GPT-3 175B and MegaScale's Megatron-LM baseline (175B
// and 530B) on A100, Nemotron-4 340B and Llama 3 405B on H100, 256 to 16,384
// GPUs, tp 4-8, pp 8-35, cp up to 16 (tests/data/throughput_flagship_runs.csv,
// whose header cites each source and every assumption). Each row is priced
// through tier A at the layout its paper prints, on the stack and cluster
// presets closest to the run (the row's fabric where it differs from the
// preset; a stack file under tests/data/stacks where the run's framework
// version is no preset's). ratio = predicted / measured tokens/s per GPU
// (> 1: the model is too fast); for rows published as model TFLOP/s it is
// taken on TFLOP/s at
// parasim's 6N + 12Lhs basis. Nothing here feeds back into the model. The test
// fails when a priced row cannot be evaluated and when the median |ratio - 1|
// gets more than 2 points worse than the committed table.
// PARASIM_PRINT_THROUGHPUT_TABLE=1 prints the rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "core/statistics.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/planner/nemo_recipe_pricing.h"

using namespace parasim;

namespace {

using Row = std::map<std::string, std::string>;

// The two A100-era models without a parasim preset, as their sources give
// them: Megatron GPT (GELU 4h MLP, LayerNorm). All of them tie the word
// embeddings to the LM head (Megatron's GPT model and BLOOM share the
// weight); at pp > 1 the last stage holds its own copy, which parasim counts,
// and the two copies' gradients are all-reduced between the first and last
// stage every step (stack.tied_grad_bytes).
ModelSpec FlagshipModel(const std::string& name) {
  ModelSpec m;
  m.name = name;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  if (name == "bloom-176b") {   // bigscience tr11-176B-ml README "Architecture"
    m.source = "bigscience-workshop/bigscience train/tr11-176B-ml/README.md";
    m.num_layers = 70;
    m.hidden_size = 14336;
    m.num_attention_heads = 112;
    m.vocab_size = 250880;
    m.position = PositionKind::kAlibi;
  } else if (name == "mt-nlg-530b" || name == "megatron-gpt3-175b") {   // GPT-2 BPE padded to 51,200
    const bool mtnlg = name == "mt-nlg-530b";
    m.source = mtnlg ? "Smith et al. 2022, arXiv:2201.11990" : "NVIDIA/Megatron-LM examples/pretrain_gpt3_175B.sh";
    m.num_layers = mtnlg ? 105 : 96;
    m.hidden_size = mtnlg ? 20480 : 12288;
    m.num_attention_heads = mtnlg ? 128 : 96;
    m.vocab_size = 51200;
    m.position = PositionKind::kLearned;
    m.max_position_embeddings = 2048;
  } else if (name == "megascale-gpt-175b" || name == "megascale-gpt-530b") {
    // Jiang et al. 2024 (MegaScale, arXiv:2402.15627) Table 1 and section
    // 6.1: vocabulary 64,000, which Megatron-LM pads to a multiple of
    // 128 x tp 8 (--make-vocab-size-divisible-by 128): 64,512. GELU MLP,
    // learned positions: Megatron-LM's GPT model at the paper's commit
    // 285068c8 (its only position embedding then).
    const bool big = name == "megascale-gpt-530b";
    m.source = "Jiang et al. 2024, arXiv:2402.15627, Table 1";
    m.num_layers = big ? 105 : 96;
    m.hidden_size = big ? 20480 : 12288;
    m.num_attention_heads = big ? 160 : 128;
    m.vocab_size = 64512;
    m.position = PositionKind::kLearned;
    m.max_position_embeddings = 2048;
  } else {
    return testing::NemoModel(name);   // nemotron-340b, or a parasim preset (llama3-405b)
  }
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = 4 * m.hidden_size;
  m.tied_embeddings = true;
  return m;
}

// Narayanan et al. 2021 (arXiv:2104.04473) eq. 3 per token, recompute
// forward counted: 96 l h² (1 + s/(6h) + V/(16 l h)).
double MegatronHardwareFlopsPerToken(const ModelSpec& m, double seq) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size),
               v = static_cast<double>(m.vocab_size);
  return 96 * l * h * h * (1 + seq / (6 * h) + v / (16 * l * h));
}

// The same without the recompute forward (model FLOPs): 72 l h² (1 +
// s/(6h) + V/(12 l h)), with the vocabulary the source prints.
double MegatronModelFlopsPerToken(double layers, double hidden, double vocab, double seq) {
  return 72 * layers * hidden * hidden * (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden));
}

// MegaScale's MFU: model FLOPs per token by the formula above with its
// printed 64,000 vocabulary (Table 2's MFU and tokens/s agree under it, a
// test checks it), over the A100's dense bf16 peak, 312 TFLOP/s (NVIDIA A100
// datasheet; hw_profiles/gpus/a100-sxm.yaml).
constexpr double kA100PeakFlops = 312e12;
constexpr double kMegaScaleVocab = 64000;

// The row's measured tokens/s per GPU from what its source printed.
double MeasuredTokensPerGpu(const Row& r, const ModelSpec& m) {
  const double value = std::stod(r.at("published")), gpus = std::stod(r.at("gpus")),
               gbs = std::stod(r.at("gbs")), seq = std::stod(r.at("seq_len"));
  const std::string& unit = r.at("published_unit");
  if (unit == "s_per_iter") return gbs * seq / (value * gpus);
  if (unit == "megatron_hw_tflops") return value * 1e12 / MegatronHardwareFlopsPerToken(m, seq);
  if (unit == "mfu_a100_pct") {
    return value / 100 * kA100PeakFlops /
           MegatronModelFlopsPerToken(m.num_layers, m.hidden_size, kMegaScaleVocab, seq);
  }
  return 0;   // model_tflops: compared on TFLOP/s
}

// The row's stack: a preset, or a stack file under tests/data/stacks (a
// framework version no preset describes).
SoftwareStack RowStack(const Row& r) {
  const std::string& name = r.at("stack");
  if (std::optional<SoftwareStack> preset = FindSoftwareStackPreset(name)) return *preset;
  return LoadSoftwareStack(testing::DataPath("stacks/" + name));
}

Report PriceRow(const Row& r, int vp, std::string* cfg) {
  const int gpus = std::stoi(r.at("gpus")), tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp")),
            cp = std::stoi(r.at("cp"));
  JobSpec job;
  job.global_batch = std::stoll(r.at("gbs"));
  job.seq_len = std::stoll(r.at("seq_len"));
  job.precision = Precision::kBf16;
  job.stack = r.at("stack");
  *cfg = "dp=" + std::to_string(gpus / (tp * pp * cp)) + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") +
         ",cp=" + r.at("cp") + ",mbs=" + r.at("mbs") + ",sharding=" + r.at("sharding") +
         ",recompute=" + r.at("recompute") + ",sp=" + r.at("sp") + ",vpp=" + std::to_string(vp) +
         ",schedule=" + (vp > 1 ? "interleaved" : "1f1b");
  if (!r.at("pp_layers").empty()) *cfg += ",pp_layers=" + r.at("pp_layers");
  if (!r.at("cp_comm").empty()) *cfg += ",cp_comm=" + r.at("cp_comm");
  ClusterSpec cluster = LoadCluster(r.at("cluster"), (gpus + 7) / 8);
  // The run's own inter-node fabric where it differs from the preset's.
  if (std::stoi(r.at("nics_per_node")) > 0) {
    cluster.inter_node.nics_per_node = std::stoi(r.at("nics_per_node"));
    cluster.inter_node.nic_bandwidth = Gbps(std::stod(r.at("nic_gbps")));
  }
  // fp16 rows (MT-NLG): priced at bf16 rates (the A100's fp16 and bf16 peaks
  // are equal) on a stack file that says what the fp16 path does differently
  // (tests/data/stacks/megatron-deepspeed-fp16.yaml).
  const SoftwareStack stack = RowStack(r);
  return AnalyticalEvaluator(FlagshipModel(r.at("model")), cluster, job, stack).Evaluate(ParseParallelConfig(*cfg));
}

// The row at its stated vp, or (vp "best": not stated) the fastest of the
// interleavings a tuned run would try, as planner/published_runs.cc does for
// Megatron-LM Table 1: feasible ones first; when parasim finds none fits
// (the run did), the fastest of all, so that the ratio still measures time
// and the memory miss is reported beside it. The first of equal picks wins.
Report PriceRowAtBestVp(const Row& r, std::string* cfg) {
  if (r.at("vp") != "best") return PriceRow(r, std::stoi(r.at("vp")), cfg);
  Report best;
  bool have = false;
  for (int vp : {1, 2, 3, 4, 6, 8}) {
    std::string c;
    Report rep = PriceRow(r, vp, &c);
    if (rep.tokens_per_s_per_gpu <= 0) continue;
    const bool better = !have || (rep.feasible && !best.feasible) ||
                        (rep.feasible == best.feasible && rep.tokens_per_s_per_gpu > best.tokens_per_s_per_gpu);
    if (better) {
      best = std::move(rep);
      *cfg = c;
      have = true;
    }
  }
  if (!have) return PriceRow(r, 1, cfg);   // none priced: the plain schedule says why
  return best;
}

std::string Bucket(const char* name, int degree) { return std::string(name) + "=" + std::to_string(degree); }

// A priced row against its measurement.
struct ScoredRow {
  Report rep;
  std::string cfg;
  double measured_tokens = 0;   // tokens/s per GPU
  double ratio = 0;             // predicted / measured
};

ScoredRow ScoreRow(const Row& r) {
  const int gpus = std::stoi(r.at("gpus")), tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp")),
            cp = std::stoi(r.at("cp"));
  REQUIRE(gpus % (tp * pp * cp) == 0);
  REQUIRE((r.at("precision") == "bf16" || r.at("precision") == "fp16"));
  REQUIRE_NOTHROW(RowStack(r));
  ScoredRow s;
  s.rep = PriceRowAtBestVp(r, &s.cfg);
  INFO(r.at("model") << " on " << gpus << " GPUs " << s.cfg << ": " << s.rep.infeasible_reason);
  REQUIRE(s.rep.tokens_per_s_per_gpu > 0);
  REQUIRE(std::isfinite(s.rep.tokens_per_s_per_gpu));
  if (r.at("published_unit") == "model_tflops") {
    s.ratio = s.rep.tflops_per_gpu / std::stod(r.at("published"));
    s.measured_tokens = s.rep.tokens_per_s_per_gpu / s.ratio;
  } else {
    s.measured_tokens = MeasuredTokensPerGpu(r, FlagshipModel(r.at("model")));
    REQUIRE(s.measured_tokens > 0);
    s.ratio = s.rep.tokens_per_s_per_gpu / s.measured_tokens;
  }
  REQUIRE(std::isfinite(s.ratio));
  return s;
}

}  // namespace

TEST_CASE("planner: flagship runs' printed throughputs agree with each other under their FLOP formulas",
          "[planner]") {
  // BLOOM: 150 TFLOP/s by eq. 3 and the README's 105 s per iteration
  // (2048 x 2048 tokens on 384 GPUs) are the same speed within 1%.
  const ModelSpec bloom = FlagshipModel("bloom-176b");
  CHECK(150e12 / MegatronHardwareFlopsPerToken(bloom, 2048) == Approx(2048.0 * 2048 / (105 * 384)).epsilon(0.01));
  // MT-NLG: 60.1 / 50.2 / 44.4 s per iteration are the paper's 126 / 121 /
  // 113 TFLOP/s by eq. 3 (recompute counted) within 1%.
  const ModelSpec mtnlg = FlagshipModel("mt-nlg-530b");
  const double per_token = MegatronHardwareFlopsPerToken(mtnlg, 2048);
  const double kNodes[] = {280, 350, 420}, kSeconds[] = {60.1, 50.2, 44.4}, kTflops[] = {126, 121, 113};
  for (int i = 0; i < 3; ++i) {
    INFO(kNodes[i] << " nodes");
    CHECK(1920.0 * 2048 / (kSeconds[i] * kNodes[i] * 8) * per_token / 1e12 == Approx(kTflops[i]).epsilon(0.01));
  }
  // Megatron-LM's GPT-3 175B: "around 32 seconds" per iteration of 1536 x
  // 2048 tokens on 1024 GPUs is its 138 TFLOP/s within 1%.
  const ModelSpec gpt3 = FlagshipModel("megatron-gpt3-175b");
  CHECK(1536.0 * 2048 / (32 * 1024) * MegatronHardwareFlopsPerToken(gpt3, 2048) / 1e12 == Approx(138).epsilon(0.01));
  // Llama 3: 430 TFLOP/s is the printed 43% BF16 MFU of the H100's 989.
  CHECK(430.0 / 989.4 == Approx(0.43).epsilon(0.02));
  // MegaScale Table 2, Megatron-LM rows (GPUs, batch, s per iteration,
  // tokens/s, MFU %): each iteration time gives the printed throughput within
  // 0.5%, and the throughput gives the printed MFU within 0.5% under model
  // FLOPs (eq. 3 without the recompute forward, V = 64,000) over 312 TFLOP/s.
  // (Its "Aggregate PFlops/s" column disagrees with MFU × 312 × GPUs for
  // 256, 512 and 1,024 GPUs by 2-8%; the other three columns agree.)
  struct Table2Row {
    double gpus, gbs, seconds, tokens_per_s, mfu_pct;
  };
  const Table2Row kTable2[] = {{256, 768, 40.0, 39.3e3, 53.0},     {512, 768, 21.2, 74.1e3, 49.9},
                               {768, 768, 15.2, 103.8e3, 46.7},    {1024, 768, 11.9, 132.7e3, 44.7},
                               {3072, 6144, 29.02, 433.6e3, 48.7}, {6144, 6144, 14.78, 851.6e3, 47.8},
                               {8192, 6144, 12.24, 1027.9e3, 43.3}, {12288, 6144, 8.57, 1466.8e3, 41.2}};
  const double megascale_flops = MegatronModelFlopsPerToken(96, 12288, kMegaScaleVocab, 2048);
  for (const Table2Row& row : kTable2) {
    INFO(row.gpus << " GPUs");
    CHECK(row.gbs * 2048 / row.seconds == Approx(row.tokens_per_s).epsilon(0.005));
    CHECK(row.tokens_per_s * megascale_flops / (row.gpus * kA100PeakFlops) * 100 == Approx(row.mfu_pct).epsilon(0.005));
  }
}

TEST_CASE("planner: predicted/measured throughput on published flagship runs", "[planner]") {
  const auto csv = testing::ReadCsv(testing::DataPath("throughput_flagship_runs.csv"));
  REQUIRE(csv.size() == 24);
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  std::map<std::string, std::vector<double>> by_group;
  std::vector<double> ratios;
  int not_expressible = 0, infeasible = 0;
  for (const auto& r : csv) {
    const std::string what = r.at("model") + " on " + r.at("gpus") + " GPUs";
    if (testing::SkipInexpressible(r, what, print, "not expressible", &not_expressible)) continue;
    const int gpus = std::stoi(r.at("gpus")), tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp"));
    const ScoredRow scored = ScoreRow(r);
    const Report& rep = scored.rep;
    const std::string& cfg = scored.cfg;
    const double ratio = scored.ratio, measured_tokens = scored.measured_tokens;
    infeasible += !rep.feasible;
    ratios.push_back(ratio);
    by_group[r.at("cluster") + "," + Bucket("tp", tp) + "," + Bucket("pp", pp)].push_back(ratio);
    if (print) {
      const double step = rep.step_time.si();
      std::printf("| %s | %d | %s | %.1f | %.1f | %s | %.3f | step %.2f s: compute %.2f, bubble %.2f, "
                  "exposed comm %.2f",
                  r.at("model").c_str(), gpus, cfg.c_str(), measured_tokens, rep.tokens_per_s_per_gpu,
                  rep.feasible ? "yes" : "no", ratio, step, rep.compute.si(), rep.bubble.si(), rep.exposed_comm.si());
      for (const auto& e : rep.by_dimension) {
        std::printf(", %s %.2f/%.2f", e.name.c_str(), e.total.si(), e.exposed.si());
      }
      std::printf(" | mem %.1f GB %s |\n", rep.memory_per_gpu.si() / 1e9,
                  rep.feasible ? "" : rep.infeasible_reason.c_str());
      testing::PrintMemoryBreakdown(rep, "  memory GB:");
    }
  }
  CHECK(not_expressible == 1);
  REQUIRE(ratios.size() == 23);
  const std::vector<double> errors = testing::AbsDeviations(ratios);
  if (print) {
    for (const auto& [g, v] : by_group) std::printf("| %s | %zu | %.3f |\n", g.c_str(), v.size(), Median(v));
    std::printf("all: %zu rows (%d infeasible in parasim), median ratio %.3f, median |ratio - 1| %.1f%%\n",
                ratios.size(), infeasible, Median(ratios), 100 * Median(errors));
  }
  // Committed in docs/accuracy.md "Throughput ratios: flagship runs"
  // (0.085 before Megatron-Core's data-parallel collectives went chunk by
  // chunk, 0.115 before the steady state's pipeline p2p hid under the passes).
  CHECK(Median(errors) <= 0.110 + 0.02);
}

// MegaScale's Megatron-LM baseline, 175B at tp 8, pp 8, vp 6 (Jiang et al.
// 2024, Table 2): strong scaling at a fixed global batch, 256 -> 1,024 GPUs
// at 768 sequences and 3,072 -> 12,288 at 6,144. What matters here is the
// drop in throughput per GPU with scale, not its level: the test fails when
// parasim's predicted drop from 256 to 12,288 GPUs moves more than 2 points
// further from the measured one than the committed table
// (docs/accuracy.md "Throughput ratios: flagship runs"), and checks that the
// prediction falls with GPUs at each fixed batch (fewer micro-batches per
// pipeline, the same fill and drain, a larger gradient all-reduce ring).
TEST_CASE("planner: MegaScale's Megatron-LM baseline, strong scaling of a 175B model to 12,288 GPUs", "[planner]") {
  const auto csv = testing::ReadCsv(testing::DataPath("throughput_flagship_runs.csv"));
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  std::map<int, std::vector<std::pair<int, ScoredRow>>> by_batch;   // gbs -> (gpus, row), in CSV order
  for (const auto& r : csv) {
    if (r.at("model") != "megascale-gpt-175b" || r.at("published_unit") != "s_per_iter") continue;
    ScoredRow s = ScoreRow(r);
    INFO(r.at("gpus") << " GPUs: " << s.rep.infeasible_reason);
    CHECK(s.rep.feasible);   // 80 GB A100s ran it
    by_batch[std::stoi(r.at("gbs"))].emplace_back(std::stoi(r.at("gpus")), std::move(s));
  }
  REQUIRE(by_batch.size() == 2);
  REQUIRE(by_batch[768].size() == 4);
  REQUIRE(by_batch[6144].size() == 4);
  for (const auto& [gbs, rows] : by_batch) {
    for (size_t row_idx = 1; row_idx < rows.size(); ++row_idx) {
      const auto& [fewer_gpus, fewer] = rows[row_idx - 1];
      const auto& [more_gpus, more] = rows[row_idx];
      INFO("batch " << gbs << ": " << fewer_gpus << " -> " << more_gpus << " GPUs");
      REQUIRE(more_gpus > fewer_gpus);
      CHECK(more.rep.tokens_per_s_per_gpu <= fewer.rep.tokens_per_s_per_gpu);
    }
  }
  const ScoredRow& first = by_batch[768].front().second;
  const ScoredRow& last = by_batch[6144].back().second;
  const double measured_drop = 1 - last.measured_tokens / first.measured_tokens;
  const double predicted_drop = 1 - last.rep.tokens_per_s_per_gpu / first.rep.tokens_per_s_per_gpu;
  if (print) {
    std::printf("| GPUs | batch | measured tok/s/GPU | predicted | ratio |\n");
    for (const auto& [gbs, rows] : by_batch) {
      for (const auto& [gpus, s] : rows) {
        std::printf("| %d | %d | %.1f | %.1f | %.3f |\n", gpus, gbs, s.measured_tokens, s.rep.tokens_per_s_per_gpu,
                    s.ratio);
      }
      const ScoredRow &a = rows.front().second, &b = rows.back().second;
      std::printf("batch %d, %d -> %d GPUs: measured drop %.1f%%, predicted %.1f%%\n", gbs, rows.front().first,
                  rows.back().first, 100 * (1 - b.measured_tokens / a.measured_tokens),
                  100 * (1 - b.rep.tokens_per_s_per_gpu / a.rep.tokens_per_s_per_gpu));
    }
    std::printf("256 -> 12,288 GPUs: measured drop %.1f%%, predicted %.1f%%\n", 100 * measured_drop,
                100 * predicted_drop);
  }
  CHECK(measured_drop > 0);
  CHECK(predicted_drop > 0);
  CHECK(std::abs(predicted_drop - measured_drop) <= 0.052 + 0.02);
}
