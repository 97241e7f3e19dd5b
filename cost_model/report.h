// The report of one evaluated config (DESIGN.md §5): every tier fills the same
// struct; cost_model/report_json.h turns it into the JSON contract.
#pragma once

#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "core/units.h"

namespace parasim {

enum class Fidelity { kAnalytical, kSimulated, kFull };
const char* ToString(Fidelity f);   // "analytical" | "simulated" | "full"

struct TimeBreakdownEntry {
  std::string name;      // op class ("gemm", "attention", "elementwise", ...) or dimension ("dp", "tp", ...)
  Seconds total;         // time spent (per step, on the critical rank)
  Seconds exposed;       // part not hidden under compute (communication only)
};

struct Report {
  ParallelConfig config;
  int num_micro_batches = 0;
  Fidelity fidelity = Fidelity::kAnalytical;

  bool feasible = true;
  std::string infeasible_reason;   // e.g. "memory: needs 91.2 GB of 80 GB"

  Seconds step_time;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                  // model FLOPs (6N + 12Lhs per token) / dense BF16 peak
  double mfu_own_precision = 0;    // the same against the job precision's own dense peak (FP8, FP4)
  double hfu = 0;                  // + recomputation
  double tflops_per_gpu = 0;       // MFU basis, TFLOP/s
  double hardware_tflops_per_gpu = 0;  // HFU basis
  Seconds compute;                 // compute time per step on the critical rank
  Seconds comm;                    // total communication time (all streams)
  Seconds exposed_comm;            // communication with no compute beside it
  double exposed_comm_fraction = 0;    // exposed_comm / step_time
  Seconds bubble;                  // pipeline idle time per step
  Bytes memory_per_gpu;            // peak
  std::vector<double> memory_bytes_per_stage;   // per pipeline stage (pp entries), peak per GPU; max = memory_per_gpu
  int memory_peak_stage = 0;       // the first stage at the peak
  // Per stage, the allocated peak from the end of backward through the
  // optimizer step (MemoryEstimate::allocated_after_backward; no reserve,
  // context or allocator pool): what torch.cuda.max_memory_allocated() shows
  // after a peak reset at the end of backward. Not in the JSON contract.
  std::vector<double> memory_allocated_after_backward_per_stage;
  Watts power_per_gpu;             // average over the step
  Joules energy_per_step;          // all GPUs (+ node/network power when given)
  double tokens_per_joule = 0;
  Joules exposed_comm_energy_per_token;

  std::vector<TimeBreakdownEntry> by_op;         // compute by op class
  std::vector<TimeBreakdownEntry> by_dimension;  // communication by parallel dimension
  std::vector<std::pair<std::string, double>> memory_breakdown_bytes;  // weights, grads, optimizer, ...
};

}  // namespace parasim
