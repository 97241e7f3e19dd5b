// A scheduler's queue: jobs of different models and sizes arrive; for each,
// ask parasim for the best split of its GPUs and print the plan. One Planner
// per (model, cluster, job) is kept, so later jobs of the same model reuse
// its cache. Exit 0 when every job got a plan, 3 when one did not fit, 2 on
// bad input.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "parasim/parasim.h"

namespace {

struct QueuedJob {
  std::string name;
  std::string model;       // preset, parasim YAML or HF config.json
  int gpus;
  long long global_batch;  // sequences per step
  long long seq_len;
};

}  // namespace

int main() {
  const std::vector<QueuedJob> queue = {
      {"chat-7b", "llama2-7b", 64, 512, 4096},
      {"chat-7b-small", "llama2-7b", 16, 128, 4096},
      {"base-70b", "llama3-70b", 512, 1024, 8192},
      {"base-70b-big", "llama3-70b", 2048, 1024, 8192},
      {"code-13b", "llama2-13b", 128, 256, 4096},
  };
  try {
    const parasim::Cluster cluster = parasim::Cluster::Load("dgx-h100");
    std::map<std::string, parasim::Planner> planners;   // by model and job
    int no_plan = 0;
    for (const QueuedJob& j : queue) {
      const std::string key = j.model + "/" + std::to_string(j.global_batch) + "/" + std::to_string(j.seq_len);
      auto it = planners.find(key);
      if (it == planners.end()) {
        parasim::Planner p(parasim::Model::Load(j.model), cluster,
                           parasim::Job{.global_batch = j.global_batch, .seq_len = j.seq_len});
        it = planners.emplace(key, std::move(p)).first;
      }
      parasim::PlanQuery query;
      query.gpus = j.gpus;
      query.objective = "throughput";
      query.top = 1;
      const parasim::PlanResult plan = it->second.Plan(query);
      if (plan.plans.empty()) {
        std::printf("%-14s %-11s %5d GPUs: no plan fits (%lld configs searched)\n", j.name.c_str(), j.model.c_str(),
                    j.gpus, static_cast<long long>(plan.searched));
        ++no_plan;
        continue;
      }
      const parasim::Prediction& best = plan.best();
      std::printf("%-14s %-11s %5d GPUs: %s\n  %.0f tokens/s, MFU %.1f%%, step %.3f s, %.1f GB/GPU, %lld configs scored\n",
                  j.name.c_str(), j.model.c_str(), j.gpus, best.config.c_str(), best.tokens_per_s, 100 * best.mfu,
                  best.step_time_s, best.memory_bytes_per_gpu / 1e9, static_cast<long long>(plan.scored));
    }
    return no_plan == 0 ? 0 : 3;
  } catch (const parasim::InvalidInput& e) {
    for (const parasim::Issue& issue : e.issues()) std::fprintf(stderr, "error: %s\n", issue.ToString().c_str());
    return 2;
  } catch (const parasim::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
