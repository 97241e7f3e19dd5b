// Tiers B and C of parasim (DESIGN.md §3): replay one training step as a
// discrete-event simulation and report it in the same shape as tier A.
//
//   AnalyticalEvaluator eval(model, cluster, job);
//   SimulationOptions opt;
//   opt.fidelity = Fidelity::kSimulated;          // tier B; kFull = tier C
//   opt.stragglers.push_back(ParseStraggler("rank=17,slowdown=1.2"));
//   opt.trace = true;
//   SimulationResult r = SimulateConfig(eval, config, opt);
//   // r.report: DESIGN.md §5 fields, fidelity "simulated";
//   // r.trace_json: Chrome Trace Event JSON (Perfetto opens it as-is).
//
// Tier B simulates one representative rank per pipeline stage; a collective
// is one timed op whose duration comes from the workload (the topology-aware
// collective model). Tier C simulates every rank; collectives become flows
// on the topology graph's links, shared max-min fairly, and a collective
// starts when its last participant arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/report.h"
#include "cost_model/workload.h"
#include "topology/group_path.h"

namespace parasim::simulator {

// One slow GPU: its compute takes `slowdown` times as long (1.2 = 20% slower).
struct Straggler {
  int rank = 0;            // global rank (= GPU id, topology/placement.h)
  double slowdown = 1.0;   // > 0
};
// Parses "rank=17,slowdown=1.2"; throws parasim::Error naming `where`.
Straggler ParseStraggler(const std::string& text, const std::string& where = "--straggler");

// Other traffic on the fabric (tier C): a fraction of every link of a class
// is taken by traffic that is not this job's (another job, storage).
struct BackgroundLoad {
  LinkClass link_class = LinkClass::kLeafSpine;
  double fraction = 0;     // in [0, 1)
};
// Parses "class=nic|leaf-spine|spine-core|nvlink|pcie,fraction=0.3"; throws
// parasim::Error naming `where`.
BackgroundLoad ParseBackgroundLoad(const std::string& text, const std::string& where = "--background-load");

// How tier C replays collectives (DESIGN.md §3): step-level (each collective
// as its NCCL step schedule) or coarse (one flow set per collective). Auto:
// step-level up to kTierCStepMaxGpus, coarse up to kTierCCoarseMaxGpus; a
// larger job, or step-level asked beyond its limit, is bad input (exit 2).
enum class TierCSchedule { kAuto, kStep, kCoarse };
inline constexpr int kTierCStepMaxGpus = 16384;
inline constexpr int kTierCCoarseMaxGpus = 65536;

struct SimulationOptions {
  Fidelity fidelity = Fidelity::kSimulated;   // kSimulated (tier B) or kFull (tier C)
  std::vector<Straggler> stragglers;          // tier B: slows the straggler's whole stage (every
                                              // group waits for its slowest member); tier C: one GPU
  std::vector<BackgroundLoad> background;     // tier C only (tier B has no links)
  TierCSchedule tier_c = TierCSchedule::kAuto;  // tier C only
  // Tier C: flows with no running neighbour skip the max-min solver (same
  // results to rounding; false: the reference path, for tests).
  bool dynamic_contention = true;
  bool trace = false;                         // fill SimulationResult::trace_json
};

// What one simulated rank did (tier B: a stage's representative).
struct RankResult {
  std::string name;
  int gpu = 0;
  int stage = 0;
  double gpus = 1;             // GPUs it stands for
  Seconds compute;
  Seconds comm;                // union of its comm streams' busy time
  Seconds exposed_comm;        // comm with no compute beside it
  Seconds idle;
  Joules energy;               // this GPU's, over the step
};

struct SimulationResult {
  Report report;                 // DESIGN.md §5 fields; fidelity as simulated
  std::vector<RankResult> ranks;
  std::string trace_json;        // when options.trace
  uint64_t events = 0;           // engine events processed
  uint64_t network_steps = 0;    // tier C: collective steps replayed
  bool step_level = false;       // tier C: step schedules (false: coarse)
  int64_t activities = 0;        // ops of the simulated step
};

// A simulator that keeps its graph and engine buffers between calls, for
// callers that simulate many steps (the planner re-scoring its best plans):
// after the first call, building and running a step of the same size
// allocates nothing. Not thread-safe; use one per thread.
class StepSimulator {
 public:
  StepSimulator();
  ~StepSimulator();
  StepSimulator(StepSimulator&&) noexcept;
  StepSimulator& operator=(StepSimulator&&) noexcept;
  // As SimulateStep below.
  SimulationResult Simulate(const StepWorkload& workload, const ClusterSpec& cluster,
                            const SimulationOptions& options);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

// Simulates the step `workload` describes on `cluster`. Bad options
// (straggler rank out of range, background load on tier B, fidelity
// analytical) throw parasim::Error. MFU uses the cluster GPU's bf16 dense
// peak; SimulateConfig takes tier A's peak convention instead.
SimulationResult SimulateStep(const StepWorkload& workload, const ClusterSpec& cluster,
                              const SimulationOptions& options);

// Builds the workload with `evaluator` and simulates it; memory, MFU/HFU
// basis and the compute breakdown's names follow tier A's report. An
// infeasible config comes back as tier A reports it (feasible = false).
SimulationResult SimulateConfig(const AnalyticalEvaluator& evaluator, const ParallelConfig& config,
                                const SimulationOptions& options);

}  // namespace parasim::simulator
