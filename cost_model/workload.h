// StepWorkload: one training step of one parallel config, as the discrete-
// event simulator replays it (tiers B and C). Per pipeline stage and layer it
// carries compute durations (with FLOPs and bytes), and every collective the
// layer issues with its group, size, phase and the duration the collective
// model predicts on the placed group. Built by AnalyticalEvaluator::
// BuildWorkload(); everything is per micro-batch unless a field says per step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "core/units.h"
#include "cost_model/collective_cost.h"
#include "topology/group_path.h"

namespace parasim {

// When, relative to its layer's compute, a collective is issued.
enum class CommPhase {
  kForwardPrefetch,   // needed before the layer's forward; may start under earlier layers' compute
                      // (FSDP AllGather, `prefetch` layers ahead)
  kForward,           // inside the layer's forward (TP / SP, CP ring, EP all-to-all)
  kBackwardPrefetch,  // needed before the layer's backward (zero3 / hsdp re-gather)
  kBackward,          // inside the layer's backward (TP / SP, CP, EP)
  kGradientReduce,    // after the layer's backward; overlaps later backward compute (RS, DDP buckets)
  kStepEnd,           // once per step after the last micro-batch's backward (zero1 AllGather, hsdp
                      // replica AllReduce, DDP leftovers)
};
const char* ToString(CommPhase p);

struct WorkloadCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Bytes size;                    // nccl-tests convention (see EstimateCollective)
  ParallelDim dim = ParallelDim::kDp;
  SubGroup sub;                  // hsdp: shard or replica sub-group
  CommPhase phase = CommPhase::kForward;
  bool blocking = true;          // compute waits for it (TP); false: runs beside compute
  int count = 1;                 // issued this many times back to back (e.g. cp-1 ring steps)
  bool every_micro_batch = true; // false: once per step (gathers with the first micro-batch,
                                 // reductions with the last: no_sync / DDP / pipelined FSDP)
  Seconds duration;              // one issue, from the collective model on the placed group
                                 // (what the compute stream sees when GEMMs hide part of it)
  Seconds hidden;                // one issue: the part its GEMMs hide (not scheduled; in the dimension's total)
  std::string what;              // "fsdp_allgather", "tp_allreduce", "cp_kv_ring", ...
};

// Compute of one layer (or pseudo-layer: embedding, LM head + loss) for one micro-batch.
struct LayerWork {
  std::string name;              // "layer 12", "embedding", "lm_head"
  int layer_index = -1;          // model layer, -1 for pseudo-layers
  int chunk = 0;                 // virtual pipeline chunk (interleaved schedule)
  Seconds forward_time;          // kernels incl. launch overhead, no comm
  Seconds backward_time;         // incl. recomputation (recompute_time is the part of it)
  Seconds recompute_time;
  Seconds forward_matmul_time;   // tensor-core bound part of forward_time (power state)
  Seconds backward_matmul_time;
  // Attention core parts of the matmul times: the blocks the CP ring's steps
  // hide under (backward: its own, without the recomputed forward's).
  Seconds forward_attention_time;
  Seconds backward_attention_time;
  // Of backward_matmul_time: the weight-gradient GEMMs a zero-bubble
  // schedule runs as its own W pass (WeightGradSeconds).
  Seconds weight_grad_time;
  Flops forward_flops;           // per GPU
  Flops backward_flops;          // incl. recompute
  Bytes forward_bytes;           // HBM traffic, per GPU
  Bytes backward_bytes;
  Bytes parameter_bytes;         // bf16 weights of this layer held by the GPU (÷ tp, ÷ ep for experts)
  std::vector<WorkloadCollective> collectives;
};

struct StageWork {
  int stage = 0;
  std::vector<LayerWork> layers;   // in forward order; chunks of an interleaved stage follow each other
  Bytes pp_send_bytes;             // activation sent to the next stage per micro-batch (per chunk)
  Seconds pp_send_time;            // one send, from the collective model (SendRecv over the pp group)
  Seconds optimizer_time;          // per step
  Bytes memory_peak;               // per GPU, peak over the step
};

// Power by activity state, per GPU (from GpuProfile; DESIGN.md §4 Power).
struct PowerStates {
  Watts matmul;
  Watts memory_bound;
  Watts comm_only;
  Watts idle;
};

struct StepWorkload {
  ParallelConfig config;
  int num_micro_batches = 1;
  int virtual_stages = 1;                 // vpp chunks per stage
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  ShardingMode sharding = ShardingMode::kZero2;
  int prefetch_depth = 1;                 // FSDP AllGather layers ahead
  bool reshard_after_forward = false;     // zero3 / hsdp: re-gather in backward
  double comm_interference = 1.0;         // compute slowdown factor (>= 1) while NCCL kernels overlap it
  // recompute=selective re-runs the attention core and the CP collectives in
  // it (attention-only selective); false: op-level SAC keeps its output.
  bool selective_reruns_attention = false;
  // Megatron-Core's interleaved schedule syncs data-parallel gradients and
  // parameters chunk by chunk (SoftwareStack::dp_overlap_per_chunk).
  bool dp_overlap_per_chunk = false;
  // A stage's compute waits for each pipeline send it issues (the schedule
  // waits on its paired send/receive); false: sends run beside the next
  // pass (Megatron-Core's overlap_p2p_comm, interleaved only).
  bool pp_sends_block = true;
  std::vector<StageWork> stages;          // pp entries
  int64_t tokens_per_step = 0;
  Flops model_flops_per_step;             // MFU basis, whole job
  Flops hardware_flops_per_step;          // HFU basis, whole job
  PowerStates power;
  Watts node_overhead_power;              // per node, 0 = not counted
  int world_size = 1;
  double straggler_s = 0;                 // step-end wait for the slowest GPU (cost_model/straggler.h)
  // Host (CPU) time before each micro-batch's forward on every stage that the
  // GPU waits for: a host-synchronous pipeline starts every pass from an empty
  // GPU queue (SoftwareStack::pp_host_synchronous); 0 when the host runs ahead.
  Seconds host_per_micro_batch;
};

}  // namespace parasim
