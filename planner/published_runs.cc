#include "planner/published_runs.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.h"
#include "core/loaders.h"
#include "core/statistics.h"
#include "cost_model/evaluator.h"
#include "planner/parallel_for.h"

namespace parasim::planner {

const std::vector<PublishedRun>& MegatronTable1Runs() {
  // Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
  // GPU Clusters Using Megatron-LM", SC21, arXiv:2104.04473, Table 1 (the
  // same rows as tests/data/megatron_lm_a100_weak_scaling_narayanan2021.csv,
  // which a test compares field by field).
  // params_b, heads, hidden, layers, tp, pp, gpus, global batch, seq, vocab, TFLOP/s per GPU
  static const std::vector<PublishedRun> kRuns = {
      {1.7, 24, 2304, 24, 1, 1, 32, 512, 2048, 51200, 137},
      {3.6, 32, 3072, 30, 2, 1, 64, 512, 2048, 51200, 138},
      {7.5, 32, 4096, 36, 4, 1, 128, 512, 2048, 51200, 142},
      {18.4, 48, 6144, 40, 8, 1, 256, 1024, 2048, 51200, 135},
      {39.1, 64, 8192, 48, 8, 2, 512, 1536, 2048, 51200, 138},
      {76.1, 80, 10240, 60, 8, 4, 1024, 1792, 2048, 51200, 140},
      {145.6, 96, 12288, 80, 8, 8, 1536, 2304, 2048, 51200, 148},
      {310.1, 128, 16384, 96, 8, 16, 1920, 2160, 2048, 51200, 155},
      {529.6, 128, 20480, 105, 8, 35, 2520, 2520, 2048, 51200, 163},
      {1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 2048, 51200, 163},
  };
  return kRuns;
}

namespace {

// Their GPT: 4h GELU MLP, LayerNorm, learned positions up to the sequence length.
ModelSpec MegatronGpt(const PublishedRun& r) {
  ModelSpec m;
  m.name = StrCat("gpt-", r.params_b, "b");
  m.source = "Narayanan et al. 2021, Table 1";
  m.hidden_size = r.hidden;
  m.num_layers = r.layers;
  m.num_attention_heads = r.heads;
  m.num_kv_heads = r.heads;
  m.ffn_hidden_size = 4 * static_cast<int64_t>(r.hidden);
  m.vocab_size = r.vocab;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.position = PositionKind::kLearned;
  m.max_position_embeddings = r.seq_len;
  return m;
}

PublishedRunResult PredictRun(const PublishedRun& r, const AnalyticalEvaluator& ev) {
  PublishedRunResult out;
  out.run = r;
  out.published = r.tflops_per_gpu;
  const int dp = r.gpus / (r.tp * r.pp);
  for (int mbs : {1, 2, 4, 8}) {
    for (int vpp : {1, 2, 3, 4, 6, 8}) {
      if (vpp > 1 && r.pp == 1) continue;
      // Whole chunks only: the 2021 code builds a stage's layers / vpp layers
      // per chunk (NVIDIA/Megatron-LM de7dc40f88 megatron/model/transformer.py,
      // ParallelTransformer: num_layers // virtual_pipeline_model_parallel_size),
      // so a remainder would drop layers rather than split them unevenly.
      if (vpp > 1 && (r.layers % r.pp != 0 || r.layers / r.pp % vpp != 0)) continue;
      std::string cfg = StrCat("dp=", dp, ",tp=", r.tp, ",pp=", r.pp, ",mbs=", mbs,
                               ",sharding=ddp,recompute=full", r.tp > 1 ? ",sp=off" : "");
      if (vpp > 1) cfg += StrCat(",vpp=", vpp, ",schedule=interleaved");
      Report rep = ev.Evaluate(ParseParallelConfig(cfg));
      // Strictly better only: the first of equal picks wins, whatever the order of rows.
      if (rep.feasible && rep.hardware_tflops_per_gpu > out.predicted) {
        out.predicted = rep.hardware_tflops_per_gpu;
        out.report = std::move(rep);
        out.feasible = true;
      }
    }
  }
  if (out.feasible) {
    out.config = out.report.config.ToString();
    out.micro_batch = out.report.config.micro_batch;
    out.vpp = out.report.config.vpp;
  }
  out.error = out.predicted / out.published - 1.0;
  return out;
}

}  // namespace

std::vector<PublishedRunResult> RunMegatronTable1(int threads) {
  const std::vector<PublishedRun>& runs = MegatronTable1Runs();
  // Specs and evaluators are built here, on one thread; only Evaluate runs in parallel.
  std::vector<std::unique_ptr<AnalyticalEvaluator>> evaluators;
  for (const PublishedRun& r : runs) {
    JobSpec j;
    j.global_batch = r.global_batch;
    j.seq_len = r.seq_len;
    j.stack = "megatron-lm-2021";
    evaluators.push_back(
        std::make_unique<AnalyticalEvaluator>(MegatronGpt(r), LoadCluster("dgx-a100", r.gpus / 8), j));
  }
  std::vector<PublishedRunResult> results(runs.size());
  ParallelFor(runs.size(), threads, [&](size_t i) { results[i] = PredictRun(runs[i], *evaluators[i]); });
  return results;
}

std::vector<double> Ranks(const std::vector<double>& x) {
  std::vector<double> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double less = 0, equal = 0;
    for (double y : x) {
      less += y < x[i];
      equal += y == x[i];
    }
    r[i] = less + (equal + 1) / 2;   // average rank of ties
  }
  return r;
}

double Pearson(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw InvalidInput("", "Pearson", StrCat("sizes differ: ", a.size(), " vs ", b.size()));
  if (a.empty()) return 0;
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa <= 0 || sbb <= 0) return 0;
  return sab / std::sqrt(saa * sbb);
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) { return Pearson(Ranks(a), Ranks(b)); }

PublishedRunSummary Summarize(const std::vector<PublishedRunResult>& results) {
  std::vector<double> published, predicted, errors;
  for (const PublishedRunResult& r : results) {
    published.push_back(r.published);
    predicted.push_back(r.predicted);
    errors.push_back(r.error);
  }
  PublishedRunSummary s;
  s.median_abs_error = MedianAbs(errors);
  s.spearman = Spearman(published, predicted);
  s.pass = s.median_abs_error <= kTable1MedianErrorTarget && s.spearman >= kTable1SpearmanTarget;
  return s;
}

}  // namespace parasim::planner
