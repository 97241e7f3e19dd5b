// parasim's library facade: what a job scheduler links against to ask, many
// times a second, how to split a training job over N GPUs, and what a given
// split will cost. Only standard-library types cross this header (no Boost,
// yaml-cpp or nlohmann); errors are parasim::Error (bad input: file, key,
// problem) or parasim::InternalError (a bug). The library never prints,
// exits or reads the environment.
//
//   parasim::api::Planner planner({.model = "llama2-7b", .cluster = "dgx-h100",
//                                  .global_batch = 512, .seq_len = 4096});
//   parasim::api::Plan best = planner.Best(256);              // 256 GPUs
//   // best.config replays through Simulate() or `parasim simulate --config`.
//   parasim::api::Prediction p = planner.Simulate(256, best.config);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace parasim::api {

// What to train and where: each field as the CLI flag of the same name takes it.
struct Job {
  std::string model = "llama2-7b";   // preset, parasim YAML or HF config.json
  std::string cluster = "dgx-h100";  // preset or YAML; the GPU count is given per query
  int64_t global_batch = 0;          // sequences per optimizer step
  int64_t seq_len = 4096;            // tokens per sequence
  std::string stack;                 // software stack preset or stack YAML file ("" = pytorch-fsdp)
};

// One predicted step of one parallel config (DESIGN.md §5, SI units).
struct Prediction {
  std::string config;          // canonical config string
  bool feasible = false;
  std::string infeasible_reason;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double compute_s = 0;
  double comm_s = 0;
  double exposed_comm_s = 0;
  double exposed_comm_fraction = 0;
  double bubble_s = 0;
  double memory_bytes_per_gpu = 0;
  double power_w_per_gpu = 0;
  double energy_j_per_step = 0;
  double tokens_per_joule = 0;
  std::string fidelity;        // "analytical" | "simulated" | "full"
  std::string json;            // the full report, as `parasim simulate --format json` prints it
};

struct PlanQuery {
  std::string objective = "tokens-per-joule";  // | throughput | exposed-comm | cost | time-to-train
  std::string constraints;                     // e.g. "tp<=8,sharding=zero2"
  int top = 16;                                // plans to return
  int threads = 0;                             // 0 = every core; the answer is the same for any count
};

struct Plan {
  std::vector<Prediction> ranked;      // best first; empty when nothing fits
  int64_t searched = 0;                // configs the space holds
  int64_t feasible = 0;                // scored and fit
  std::map<std::string, int64_t> rejected;  // reason -> count
  std::string json;                    // as `parasim plan --format json` prints it
  const Prediction& best() const;      // throws parasim::Error when nothing fits
};

// Loads the specs once; answers queries for any GPU count. Queries for a count
// seen before reuse its precomputed evaluator. Not thread-safe itself (one
// Planner per thread), but each query uses `threads` cores deterministically.
class Planner {
 public:
  explicit Planner(Job job);   // throws parasim::Error on bad model/cluster/job
  ~Planner();
  Planner(Planner&&) noexcept;
  Planner& operator=(Planner&&) noexcept;

  Plan Search(int gpus, const PlanQuery& query = {});
  Prediction Best(int gpus, const PlanQuery& query = {});
  // fidelity: "analytical" (tier A), "simulated" (tier B) or "full" (tier C).
  Prediction Simulate(int gpus, const std::string& config, const std::string& fidelity = "analytical");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parasim::api
