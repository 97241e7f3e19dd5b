// The planner's search space: every parallel config of a job on N GPUs,
// enumerated deterministically (lexicographic in tp, pp, cp, ep, cp kind, sharding,
// schedule/vpp, sp, order, prefetch, mbs, recompute), never sampled.
//
// A layout (dp, tp, pp, cp, ep) that breaks a divisibility rule is rejected as
// one entry with its reason; every other config is a candidate, or a rejected
// entry when a user constraint excludes it. So `searched` = candidates +
// rejected entries counts exactly what was looked at and where it was cut.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack.h"
#include "planner/constraints.h"

namespace parasim::planner {

struct SpaceOptions {
  // Largest tensor-parallel degree; 0 = two nodes' worth (the seed paper tried
  // tp = 16 on 8-GPU nodes, i.e. TP across a node boundary), or no limit when
  // a constraint names tp.
  int max_tp = 0;
  // Zero-bubble pipeline schedules in the space.
  bool zero_bubble = true;
  // zero2-replicated (DeepSpeed ZeRO-2) in the space besides FSDP's zero2.
  bool zero2_replicated = true;
  // What the software stack supports (SoftwareStack::supports_*; SpaceFor).
  bool zero1 = true;              // optimizer-state sharding
  bool fsdp = true;               // zero2 / zero3 / hsdp
  bool sharding_with_pp = true;   // zero2 / zero3 / hsdp with pp > 1
  bool cp = true;                 // context parallelism
  bool cp_p2p = true;             // its kinds (ParallelConfig::cp_comm)
  bool cp_a2a = true;
  bool cp_allgather = true;
  bool cp_a2a_p2p = true;         // with each all-to-all group size that stays inside a node
  // Partial full recompute (ParallelConfig::recompute_layers): a quarter,
  // half and three quarters of the smallest stage's layers, besides none,
  // selective and full: a coarse sweep of the memory/time trade that triples
  // no ladder. Off unless the stack runs it (SpaceFor).
  bool partial_recompute = false;
  // Rungs of a recompute ladder go in order of the forward share they
  // recompute (time, the dominance order): partial N of L recomputes N/L;
  // selective this share (SoftwareStack::sac_matmul_recompute_fraction: 0 for
  // attention-only, whose attention core is a small share; 0.5 for op-level SAC).
  double selective_recompute_share = 0;
  bool interleaved = true;        // interleaved schedule
  // Uneven pipeline splits: first and last stages lighter by 1 or 2 layers
  // (embedding and loss; Megatron's account_for_embedding/loss_in_pipeline_split),
  // besides the balanced split when the layers divide.
  bool uneven_splits = true;
};

// One candidate, compact (the space can hold millions); ToConfig() expands it.
struct Candidate {
  int32_t dp = 1;
  int32_t mbs = 1;
  int32_t hsdp_group = 0;
  int16_t tp = 1, pp = 1, cp = 1, ep = 1;
  int16_t vpp = 1;
  int16_t prefetch = 1;
  uint16_t order = 0;        // index into SearchSpace::orders
  uint8_t sharding = static_cast<uint8_t>(ShardingMode::kZero2);
  uint8_t recompute = static_cast<uint8_t>(RecomputeMode::kNone);
  int16_t recompute_layers = 0;   // with recompute=full: layers per stage recomputed (0 = all)
  uint8_t schedule = static_cast<uint8_t>(PipelineSchedule::k1F1B);
  uint8_t cp_comm = static_cast<uint8_t>(CpComm::kP2p);   // with cp > 1: how attention exchanges K/V
  uint8_t cp_a2a_size = 0;   // with cp_comm=a2a+p2p: the all-to-all group's ranks
  uint8_t ends_lighter = 0;  // pp split: first and last stages this many layers lighter (0 = balanced)
  bool sp = false;
};

// Candidates that differ only in recomputation, lightest first: the planner
// scores a ladder in order and may stop at the first that fits (dominance).
struct Ladder {
  uint32_t first = 0;   // index of its first candidate
  uint32_t count = 0;
};

// Ladders that differ only in micro-batch size, smallest first: memory grows
// with the micro-batch, so once every rung of one fails on memory the
// larger ones are known not to fit.
struct Chain {
  uint32_t first = 0;   // index of its first ladder
  uint32_t count = 0;
};

struct SearchSpace {
  std::vector<Candidate> candidates;     // canonical order = index order
  std::vector<Ladder> ladders;           // partition of `candidates`, in order
  std::vector<Chain> chains;             // partition of `ladders`, in order
  std::vector<std::string> orders;       // placement orders in the space
  std::map<std::string, int64_t> rejected;   // reason -> entries cut before scoring
  int64_t searched = 0;                  // candidates.size() + every rejected entry

  int64_t layers = 0;                    // the model's layers (uneven splits)
  ParallelConfig ToConfig(const Candidate& c) const;
  ParallelConfig ToConfig(size_t index) const { return ToConfig(candidates[index]); }
};

// Enumerates the space of `model` and `job` on `world_size` GPUs (nodes of
// `gpus_per_node`), cut by `constraints`. Deterministic.
SearchSpace EnumerateSpace(const ModelSpec& model, const JobSpec& job, int world_size, int gpus_per_node,
                           const ConstraintSet& constraints, const SpaceOptions& options = {});
// The same into `out`, whose vectors keep their capacity: a caller that
// enumerates again and again (a scheduler's queries) skips the page faults
// of fresh megabyte-sized allocations.
void EnumerateSpace(const ModelSpec& model, const JobSpec& job, int world_size, int gpus_per_node,
                    const ConstraintSet& constraints, const SpaceOptions& options, SearchSpace* out);

// The space the stack's framework supports (SoftwareStack::supports_*),
// within `options`.
SpaceOptions SpaceFor(const SoftwareStack& stack, SpaceOptions options = {});

// The stages' layers with the first and last `ends_lighter` layers lighter
// than the middle ones; empty when they do not split so (pp < 3, remainder).
std::vector<int> EndsLighterSplit(int64_t layers, int pp, int ends_lighter);

// Positive divisors of n, ascending.
std::vector<int64_t> Divisors(int64_t n);

// The default placement order ("tp-cp-ep-dp-pp", innermost first).
const std::string& DefaultOrder();

}  // namespace parasim::planner
