// A job scheduler's use of the parasim library: only the public facade.
// Prints the best split of Llama-2-7B over 16 and 64 DGX H100 GPUs and checks
// that the chosen config replays to the same prediction. Exit 0 on success.
#include <cmath>
#include <cstdio>

#include "parasim/parasim.h"

int main() {
  const parasim::Planner planner(parasim::Model::Load("llama2-7b"), parasim::Cluster::Load("dgx-h100"),
                                 parasim::Job{.global_batch = 64, .seq_len = 4096});
  parasim::PlanQuery query;
  query.objective = "throughput";
  query.top = 3;
  for (int gpus : {16, 64}) {
    query.gpus = gpus;
    const parasim::Prediction best = planner.Plan(query).best();
    const parasim::Prediction again = planner.Simulate({.gpus = gpus, .config = best.config});
    std::printf("%d GPUs: %s  %.0f tokens/s  MFU %.1f%%\n", gpus, best.config.c_str(), best.tokens_per_s,
                100 * best.mfu);
    if (!best.feasible || std::fabs(again.step_time_s - best.step_time_s) > 1e-12 * best.step_time_s) {
      std::fprintf(stderr, "replay of the best config disagrees\n");
      return 1;
    }
  }
  return 0;
}
