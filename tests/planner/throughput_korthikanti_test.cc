// Predicted / measured training throughput of Korthikanti et al. 2022
// (arXiv:2205.05198, Tables 3 and 5; docs/accuracy.md "Throughput ratios:
// sequence parallelism and selective recompute (Korthikanti 2022)"):
// Megatron-LM GPT 22B / 175B / 530B / 1T on Selene A100s, tp 8, pp 1 to 64,
// data-parallel size 1, each once with full recomputation and once with
// sequence parallelism + selective (attention-core) recomputation
// (tests/data/throughput_megatron_korthikanti2022.csv, whose header cites
// each number and every assumption). Each row is priced through tier A at its
// printed layout on dgx-a100 with the stack of the 2022 code
// (tests/data/stacks/megatron-lm-2022.yaml: megatron-lm-2021 with the
// column-parallel backward overlapped, as cfd2e21607 runs it). ratio =
// predicted / measured tokens/s per GPU (> 1: the model is too fast). Nothing
// here feeds back into the model. The test fails when a row cannot be
// evaluated or does not fit in memory, when the median |ratio - 1| gets more
// than 2 points worse than the committed table, and when the predicted
// full -> selective speed-up leaves its band around the measured one.
// PARASIM_PRINT_THROUGHPUT_TABLE=1 prints the rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
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

// A100 dense fp16 / bf16 tensor peak, the paper's MFU basis (NVIDIA A100
// datasheet: 312 TFLOP/s).
constexpr double kA100PeakFlops = 312e12;

// The paper's Megatron GPT: GELU 4h MLP, LayerNorm, learned positions, the
// padded GPT-2 vocabulary. The word embeddings double as the LM head; with
// pp > 1 the last stage keeps its own copy (parasim counts both copies of a
// tied model there) and the two copies' gradients are all-reduced between
// the first and last stage every step.
ModelSpec KorthikantiModel(const Row& r) {
  ModelSpec m;
  m.name = r.at("model");
  m.source = "Korthikanti et al. 2022, arXiv:2205.05198, Table 3";
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.position = PositionKind::kLearned;
  m.num_layers = std::stoi(r.at("layers"));
  m.hidden_size = std::stoi(r.at("hidden"));
  m.num_attention_heads = std::stoi(r.at("heads"));
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = 4 * m.hidden_size;
  m.vocab_size = std::stoi(r.at("vocab"));
  m.max_position_embeddings = std::stoi(r.at("seq_len"));
  m.tied_embeddings = true;
  return m;
}

// The paper's model FLOPs per iteration (no recomputation counted):
// 72 B s l h² (1 + s/(6h) + V/(12 l h)).
double PaperModelFlops(const Row& r) {
  const double b = std::stod(r.at("gbs")), s = std::stod(r.at("seq_len")), l = std::stod(r.at("layers")),
               h = std::stod(r.at("hidden")), v = std::stod(r.at("vocab"));
  return 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
}

double MeasuredTokensPerGpu(const Row& r) {
  return std::stod(r.at("gbs")) * std::stod(r.at("seq_len")) /
         (std::stod(r.at("iter_time_s")) * std::stod(r.at("gpus")));
}

std::string Config(const Row& r, int vp) {
  return "dp=" + r.at("dp") + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") + ",mbs=" + r.at("mbs") +
         ",sharding=ddp,recompute=" + r.at("recompute") + ",sp=" + r.at("sp") + ",vpp=" + std::to_string(vp) +
         ",schedule=" + (vp > 1 ? "interleaved" : "1f1b");
}

Report PriceRow(const Row& r, int vp) {
  JobSpec job;
  job.global_batch = std::stoll(r.at("gbs"));
  job.seq_len = std::stoll(r.at("seq_len"));
  job.precision = Precision::kBf16;   // fp16 rows: the A100's fp16 and bf16 rates are equal
  job.stack = testing::DataPath("stacks/megatron-lm-2022.yaml");
  const ClusterSpec cluster = LoadCluster("dgx-a100", std::stoi(r.at("gpus")) / 8);
  return AnalyticalEvaluator(KorthikantiModel(r), cluster, job, LoadSoftwareStack(job.stack))
      .Evaluate(ParseParallelConfig(Config(r, vp)));
}

// The interleavings the row's stages allow (vp divides the layers per stage).
std::vector<int> OtherInterleavings(const Row& r) {
  std::vector<int> out;
  const int pp = std::stoi(r.at("pp")), per_stage = std::stoi(r.at("layers")) / pp;
  if (pp == 1) return out;
  for (int vp = 2; vp <= per_stage; ++vp) {
    if (per_stage % vp == 0) out.push_back(vp);
  }
  return out;
}

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = testing::ReadCsv(testing::DataPath("throughput_megatron_korthikanti2022.csv"));
  return rows;
}

}  // namespace

TEST_CASE("planner: Korthikanti 2022 printed MFU and speed-ups agree with the paper's own formulas", "[planner]") {
  const auto& rows = Rows();
  REQUIRE(rows.size() == 8);
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const Row& full = rows[i];
    const Row& sel = rows[i + 1];
    INFO(sel.at("model"));
    REQUIRE(full.at("model") == sel.at("model"));
    REQUIRE(full.at("recompute") == "full");
    REQUIRE(sel.at("recompute") == "selective");
    REQUIRE(sel.at("sp") == "on");
    // The printed MFU is the paper's model FLOPs per iteration over the
    // present-work time on all GPUs at 312 TFLOP/s; the iteration times are
    // printed to two decimals (22B: 1.10 s, so 0.5% of rounding).
    const double gpus = std::stod(sel.at("gpus"));
    const double mfu = PaperModelFlops(sel) / (std::stod(sel.at("iter_time_s")) * gpus * kA100PeakFlops);
    // MFU is linear in the batch, so this pins the batch sizes the CSV records.
    CHECK(100 * mfu == Approx(std::stod(sel.at("mfu_pct"))).epsilon(0.006));
    // Table 5's throughput increase is the ratio of the two times, within
    // the rounding of two-decimal seconds (the paper's "29-32% faster").
    const double increase = 100 * (std::stod(full.at("iter_time_s")) / std::stod(sel.at("iter_time_s")) - 1);
    CHECK(increase == Approx(std::stod(sel.at("increase_pct"))).margin(0.5));
    CHECK(increase > 29);
    CHECK(increase < 32.5);
  }
}

TEST_CASE("planner: predicted/measured throughput on Korthikanti 2022 (sequence parallelism, selective recompute)",
          "[planner]") {
  const auto& rows = Rows();
  REQUIRE(rows.size() == 8);
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  std::vector<double> ratios;
  std::map<std::string, double> predicted_tokens;   // by model and recompute
  int infeasible = 0;
  for (const Row& r : rows) {
    const std::string what = r.at("model") + " recompute=" + r.at("recompute");
    REQUIRE(std::stoi(r.at("gpus")) == std::stoi(r.at("tp")) * std::stoi(r.at("pp")) * std::stoi(r.at("dp")));
    REQUIRE(std::stoi(r.at("vp")) == 1);
    const Report rep = PriceRow(r, 1);
    INFO(what << " " << Config(r, 1) << ": " << rep.infeasible_reason);
    REQUIRE(rep.tokens_per_s_per_gpu > 0);
    REQUIRE(std::isfinite(rep.tokens_per_s_per_gpu));
    infeasible += !rep.feasible;
    const double measured = MeasuredTokensPerGpu(r);
    const double ratio = rep.tokens_per_s_per_gpu / measured;
    REQUIRE(std::isfinite(ratio));
    ratios.push_back(ratio);
    predicted_tokens[r.at("model") + "/" + r.at("recompute")] = rep.tokens_per_s_per_gpu;
    if (print) {
      std::printf("| %s | %s | %s | %.2f | %.1f | %.1f | %s | %.3f | step %.2f s: compute %.2f, bubble %.2f, "
                  "exposed comm %.2f",
                  r.at("model").c_str(), r.at("gpus").c_str(), Config(r, 1).c_str(), std::stod(r.at("iter_time_s")),
                  measured, rep.tokens_per_s_per_gpu, rep.feasible ? "yes" : "no", ratio, rep.step_time.si(),
                  rep.compute.si(), rep.bubble.si(), rep.exposed_comm.si());
      for (const auto& e : rep.by_op) std::printf(", %s %.2f", e.name.c_str(), e.total.si());
      for (const auto& e : rep.by_dimension) std::printf(", %s %.2f/%.2f", e.name.c_str(), e.total.si(), e.exposed.si());
      std::printf(" | MFU %.1f%% | mem %.1f GB %s |\n", 100 * rep.mfu, rep.memory_per_gpu.si() / 1e9,
                  rep.feasible ? "" : rep.infeasible_reason.c_str());
      testing::PrintMemoryBreakdown(rep, "  memory GB:");
      for (int vp : OtherInterleavings(r)) {
        const Report alt = PriceRow(r, vp);
        std::printf("  vp %d: ratio %.3f, bubble %.2f s, feasible %s\n", vp, alt.tokens_per_s_per_gpu / measured,
                    alt.bubble.si(), alt.feasible ? "yes" : "no");
      }
    }
  }
  REQUIRE(ratios.size() == 8);
  const std::vector<double> errors = testing::AbsDeviations(ratios);
  if (print) {
    std::printf("all: %zu rows (%d infeasible in parasim), median ratio %.3f, median |ratio - 1| %.1f%%\n",
                ratios.size(), infeasible, Median(ratios), 100 * Median(errors));
  }
  // Every layout ran on 80 GB A100s, so each must fit in parasim too
  // (committed: the largest, 1T with sp + selective, at 69.0 GB).
  CHECK(infeasible == 0);
  // Committed in docs/accuracy.md "Throughput ratios: sequence parallelism
  // and selective recompute (Korthikanti 2022)".
  CHECK(Median(errors) <= 0.032 + 0.02);

  // Full -> selective speed-up, measured (Table 5) against predicted, model by
  // model. The physics behind it: selective recomputation drops the whole
  // forward re-run (a quarter of a full-recompute step's GEMM work) but keeps
  // the attention core's,
  // and sequence parallelism turns the TP all-reduces into the same volume of
  // all-gather + reduce-scatter while the recomputed forward's TP
  // communication disappears with it. The committed table predicts 33-35%
  // against the measured 29-32% (docs/accuracy.md says where the full rows
  // lose the difference). Band: within 10 points of the measured increase, a
  // third of it; a model that priced selective as full (0%) or dropped the
  // recomputed forward's cost from the full rows fails it.
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const std::string model = rows[i].at("model");
    const double measured = std::stod(rows[i].at("iter_time_s")) / std::stod(rows[i + 1].at("iter_time_s"));
    const double predicted = predicted_tokens.at(model + "/selective") / predicted_tokens.at(model + "/full");
    if (print) {
      std::printf("| %s | speed-up measured %.1f%% | predicted %.1f%% |\n", model.c_str(), 100 * (measured - 1),
                  100 * (predicted - 1));
    }
    INFO(model << ": measured " << measured << ", predicted " << predicted);
    CHECK(std::fabs(predicted - measured) <= 0.10);
  }
}
