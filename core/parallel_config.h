// One parallel configuration: every key a plan can choose, so a plan replays
// exactly through `simulate --config`. Parsed from "k=v,k=v" or YAML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace parasim {

struct ModelSpec;
struct JobSpec;

enum class ShardingMode { kDdp, kZero1, kZero2Replicated, kZero2, kZero3, kHsdp };
enum class RecomputeMode { kNone, kSelective, kFull };
enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved, kZeroBubble };
// Whether the zero-bubble schedule applies: schedule=zb-h1 splits each
// backward into an input-gradient pass (B) and a deferred weight-gradient
// pass (W) only over more than one stage (one stage runs no pipeline
// schedule: torchtitan builds none without pipeline parallelism) with one
// chunk per stage (ZB-H1; vpp>1 needs schedule=interleaved, Validate).
// `v`: chunks per stage. Tier A, its memory and tier B's step builder all ask this.
inline bool ZeroBubbleApplies(PipelineSchedule schedule, int pp, int v) {
  return schedule == PipelineSchedule::kZeroBubble && pp > 1 && v == 1;
}
// How context-parallel attention exchanges K/V (Megatron-LM --cp-comm-type,
// torchtitan context_parallel_rotate_method): a ring of cp−1 point-to-point
// K/V steps overlapped with attention blocks; all-to-alls that trade the
// sequence split for a head split (DeepSpeed-Ulysses, Megatron a2a); or one
// all-gather of K/V before attention (Megatron allgather, torchtitan allgather);
// or Megatron's hierarchical a2a+p2p: all-to-alls inside groups of
// cp_a2a_size consecutive cp ranks, then a ring of K/V steps across the
// cp/cp_a2a_size groups (Transformer Engine AttnFuncWithCPAndKVP2P with
// cp_group = [a2a group, p2p group]).
enum class CpComm { kP2p, kA2a, kAllGather, kA2aP2p };

struct ParallelConfig {
  int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  int micro_batch = 1;                      // mbs: sequences per micro-batch
  ShardingMode sharding = ShardingMode::kZero2;
  int hsdp_group = 0;                       // G for hsdp:G
  RecomputeMode recompute = RecomputeMode::kNone;
  bool sequence_parallel = false;           // sp: only meaningful with tp > 1
  int vpp = 1;                              // virtual pipeline chunks per stage
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  std::string order = "tp-cp-ep-dp-pp";     // placement, innermost first
  int prefetch = 1;                         // FSDP AllGather prefetch depth
  std::vector<int> pp_layers;               // explicit layers per stage; empty = balanced
  CpComm cp_comm = CpComm::kP2p;            // with cp > 1: how attention exchanges K/V
  // With cp_comm=a2a+p2p: ranks of the inner all-to-all group (Megatron
  // --hierarchical-context-parallel-sizes, first value); 0 = not set.
  int cp_a2a_size = 0;
  // With recompute=full: layers per stage fully recomputed, the first of each
  // virtual chunk (recompute_layers/vpp per chunk); the others keep all their
  // activations. 0 = every layer. Megatron --recompute-method block
  // --recompute-num-layers (counted per virtual chunk there).
  int recompute_layers = 0;

  // Whether the layer at `index_in_chunk` of a chunk is fully recomputed.
  bool FullyRecomputes(int index_in_chunk) const {
    return recompute == RecomputeMode::kFull &&
           (recompute_layers == 0 || index_in_chunk < recompute_layers / (vpp > 0 ? vpp : 1));
  }
  // Layers of a stage holding `stage_layers` that are fully recomputed.
  int RecomputedLayers(int stage_layers) const {
    if (recompute != RecomputeMode::kFull) return 0;
    return recompute_layers == 0 ? stage_layers : (recompute_layers < stage_layers ? recompute_layers : stage_layers);
  }

  // Ranks of the K/V ring: cp for p2p, cp/cp_a2a_size for a2a+p2p, else 1.
  int CpRingSize() const {
    if (cp_comm == CpComm::kP2p) return cp;
    if (cp_comm == CpComm::kA2aP2p && cp_a2a_size > 0) return cp / cp_a2a_size;
    return 1;
  }
  // Ranks of the all-to-all group: cp for a2a, cp_a2a_size for a2a+p2p, else 1.
  int CpA2aSize() const {
    if (cp_comm == CpComm::kA2a) return cp;
    if (cp_comm == CpComm::kA2aP2p && cp_a2a_size > 0) return cp_a2a_size;
    return 1;
  }

  int WorldSize() const { return dp * tp * pp * cp; }
  int NumMicroBatches(const JobSpec& job) const;   // global_batch / (dp * mbs)
  // Layers held by each pipeline stage (pp_layers or ceil/floor split).
  std::vector<int> StageLayers(const ModelSpec& model) const;
  // Every violated rule at once; empty means valid.
  std::vector<Issue> Validate(const ModelSpec& model, const JobSpec& job, int world_size) const;
  std::string ToString() const;             // canonical "dp=..,tp=..,..." (round-trips)
};

// Parses "dp=64,tp=2,...": unknown keys and bad values throw parasim::Error
// naming the key. Keys left out keep the defaults above.
ParallelConfig ParseParallelConfig(const std::string& text, const std::string& where = "--config");

const char* ToString(ShardingMode m);
const char* ToString(RecomputeMode m);
const char* ToString(PipelineSchedule s);
const char* ToString(CpComm k);

// Why `kind` cannot run the model's attention on cp ranks (tp ranks split the
// heads first); empty when it can. All-to-all splits the query and the K/V
// heads over cp (Transformer Engine and DeepSpeed-Ulysses need both to divide);
// a2a+p2p over its a2a group of `a2a_size` ranks, which must divide cp.
std::string CpCommProblem(const ModelSpec& model, int tp, int cp, CpComm kind, int a2a_size = 0);

}  // namespace parasim
