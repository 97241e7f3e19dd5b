// Published training runs the cost model is checked against (beside the seed
// paper's findings in planner/validation.h). Today: Megatron-LM's Table 1
// (Narayanan et al. 2021), ten GPT runs on DGX A100 from 1.7B to 1T
// parameters. Their TFLOP/s count full recomputation (their Eq. 3), so the
// figure compared is hardware_tflops_per_gpu with recompute=full, and the
// micro-batch and interleaving are searched as a user would: the fastest
// feasible pick. Nothing here feeds back into the model.
#pragma once

#include <string>
#include <vector>

#include "cost_model/report.h"

namespace parasim::planner {

// One row of Table 1.
struct PublishedRun {
  double params_b = 0;        // billions of parameters, as printed
  int heads = 0;
  int hidden = 0;
  int layers = 0;
  int tp = 0;
  int pp = 0;
  int gpus = 0;
  int global_batch = 0;       // sequences
  int seq_len = 0;
  int vocab = 0;
  double tflops_per_gpu = 0;  // achieved, recomputation counted
};

// The ten rows in the paper's order.
const std::vector<PublishedRun>& MegatronTable1Runs();

struct PublishedRunResult {
  PublishedRun run;
  double published = 0;   // TFLOP/s per GPU
  double predicted = 0;   // best feasible hardware_tflops_per_gpu; 0 when nothing fits
  double error = 0;       // predicted / published - 1 (-1 when nothing fits)
  bool feasible = false;
  std::string config;     // the chosen config, canonical (replays through `simulate --config`)
  int micro_batch = 0;    // of the chosen config
  int vpp = 0;
  Report report;          // the chosen config's full report
};

// Predicts every row (dgx-a100 preset with gpus/8 nodes, stack
// megatron-lm-2021, mbs in {1,2,4,8} x vpp in {1,2,3,4,6,8}, recompute=full,
// ddp, sp off). Rows run on `threads` threads (0 = hardware concurrency);
// results are in row order and do not depend on the thread count.
std::vector<PublishedRunResult> RunMegatronTable1(int threads);

// The targets for Table 1.
constexpr double kTable1MedianErrorTarget = 0.05;   // median |error| <= 5%
constexpr double kTable1SpearmanTarget = 0.7;       // the rise with model size reproduced

struct PublishedRunSummary {
  double median_abs_error = 0;
  double spearman = 0;    // published vs predicted ranks
  bool pass = false;      // both targets met
};

PublishedRunSummary Summarize(const std::vector<PublishedRunResult>& results);

// Ranks of x from 1, ties given their average rank.
std::vector<double> Ranks(const std::vector<double>& x);
// Pearson correlation; 0 when either side has no spread (keeps output finite).
double Pearson(const std::vector<double>& a, const std::vector<double>& b);
// Spearman rank correlation: Pearson of the ranks.
double Spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace parasim::planner
