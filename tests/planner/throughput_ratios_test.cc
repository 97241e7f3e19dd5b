// Predicted / measured training throughput on public multi-node runs, grouped
// by tensor- and pipeline-parallel degree (issue 12; docs/accuracy.md
// "Throughput ratios"): Megatron-LM Table 1 (Narayanan et al. 2021, DGX A100,
// hardware TFLOP/s, micro-batch and interleaving searched as `validate` does)
// and Sailor's Megatron-DeepSpeed runs on Alps Clariden (GH200, the measured
// iteration time of the config as it ran). One constant was fitted to the
// Sailor rows: the test stack's host time per kernel (docs/DECISIONS.md
// "Megatron-DeepSpeed's host time on Grace"). The test fails when a group's
// median |ratio − 1| rises by more than 2 points over the committed table. PARASIM_PRINT_THROUGHPUT_TABLE=1 prints
// the table's rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "core/statistics.h"
#include "planner/published_runs.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/cost_model/sailor_models.h"

using namespace parasim;

namespace {

struct RatioRow {
  std::string source;
  int tp = 1, pp = 1;
  double ratio = 0;   // predicted throughput / measured
};

// The bucket a degree falls in: 1, 2, 4, 8, and 16+ for pipelines.
std::string Bucket(const char* name, int degree) {
  return degree >= 16 ? std::string(name) + ">=16" : std::string(name) + "=" + std::to_string(degree);
}
std::string Group(const RatioRow& r) { return r.source + " | " + Bucket("tp", r.tp) + "," + Bucket("pp", r.pp); }

std::vector<RatioRow> MegatronRows() {
  std::vector<RatioRow> out;
  for (const planner::PublishedRunResult& p : planner::RunMegatronTable1(2)) {
    out.push_back({"Megatron-LM A100", p.run.tp, p.run.pp, p.predicted / p.published});
  }
  return out;
}

// Sailor's Clariden runs: measured seconds per iteration over tier A's step.
std::vector<RatioRow> SailorRows() {
  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack stack = LoadSoftwareStack(root + "/tests/data/stacks/sailor-megatron-deepspeed-fp32.yaml");
  std::vector<RatioRow> out;
  for (const auto& r : testing::ReadCsv(root + "/tests/data/throughput_sailor_clariden.csv")) {
    if (!r.at("suspect").empty()) continue;
    const int tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp")), dp = std::stoi(r.at("dp"));
    const int world = tp * pp * dp;
    constexpr int kGpusPerNode = 4;
    ClusterSpec cluster = LoadCluster(r.at("cluster"), std::max(1, (world + kGpusPerNode - 1) / kGpusPerNode));
    cluster.gpus_per_node = std::min(kGpusPerNode, world);
    JobSpec job;
    job.global_batch = std::stoll(r.at("gbs"));
    job.seq_len = 2048;
    job.precision = Precision::kFp32;   // run_opt.slurm passes neither --fp16 nor --bf16
    job.stack = stack.name;
    std::string cfg = "dp=" + r.at("dp") + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") + ",mbs=" + r.at("mbs") +
                      ",sharding=ddp,recompute=none,sp=off,schedule=1f1b";
    if (!r.at("pp_layers").empty()) cfg += ",pp_layers=" + r.at("pp_layers");
    const Report rep =
        AnalyticalEvaluator(testing::SailorModel(r.at("model")), cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
    REQUIRE(rep.feasible);
    out.push_back({"Sailor GH200 fp32", tp, pp, std::stod(r.at("measured_iter_s")) / rep.step_time.si()});
  }
  return out;
}

}  // namespace

TEST_CASE("planner: predicted/measured throughput by tp and pp on public multi-node runs", "[planner]") {
  std::vector<RatioRow> rows = MegatronRows();
  const std::vector<RatioRow> sailor = SailorRows();
  REQUIRE(rows.size() == 10);
  REQUIRE(sailor.size() == 26);
  rows.insert(rows.end(), sailor.begin(), sailor.end());
  std::map<std::string, std::vector<double>> ratios;
  for (const RatioRow& r : rows) {
    REQUIRE(std::isfinite(r.ratio));
    REQUIRE(r.ratio > 0);
    ratios[Group(r)].push_back(r.ratio);
  }
  // Committed in docs/accuracy.md "Throughput ratios": per group, the median
  // |predicted/measured − 1|. The first and last pipeline stages' one
  // transfer per micro-batch (docs/DECISIONS.md "A pipeline stage waits for
  // the transfers it sends") moved Sailor tp=4,pp=4 0.127 -> 0.153 (runs
  // already predicted faster than measured).
  const std::map<std::string, double> recorded = {
      {"Megatron-LM A100 | tp=1,pp=1", 0.022},  {"Megatron-LM A100 | tp=2,pp=1", 0.039},
      {"Megatron-LM A100 | tp=4,pp=1", 0.041},  {"Megatron-LM A100 | tp=8,pp=1", 0.024},
      {"Megatron-LM A100 | tp=8,pp=2", 0.045},  {"Megatron-LM A100 | tp=8,pp=4", 0.060},
      {"Megatron-LM A100 | tp=8,pp=8", 0.052},  {"Megatron-LM A100 | tp=8,pp>=16", 0.008},
      {"Sailor GH200 fp32 | tp=4,pp=1", 0.246}, {"Sailor GH200 fp32 | tp=4,pp=2", 0.220},
      {"Sailor GH200 fp32 | tp=4,pp=4", 0.153}, {"Sailor GH200 fp32 | tp=4,pp=8", 0.139},
  };
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  std::vector<double> all_errors;
  for (const auto& [group, values] : ratios) {
    std::vector<double> errors;
    for (double v : values) errors.push_back(std::fabs(v - 1));
    all_errors.insert(all_errors.end(), errors.begin(), errors.end());
    const double median_error = Median(errors);
    if (print) {
      std::printf("| %s | %zu | %.3f | %.3f | %.3f | %.1f |\n", group.c_str(), values.size(), Median(values),
                  *std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end()),
                  100 * median_error);
    }
    INFO(group << ": median |ratio - 1| " << median_error);
    REQUIRE(recorded.count(group) == 1);
    CHECK(median_error <= recorded.at(group) + 0.02);
  }
  if (print) std::printf("all: %zu rows, median |ratio - 1| %.1f%%\n", all_errors.size(), 100 * Median(all_errors));
}
