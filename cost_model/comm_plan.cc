#include "cost_model/comm_plan.h"

#include <algorithm>

namespace parasim {
namespace {

WorkloadCollective Make(CollectiveOp op, double bytes, ParallelDim dim, CommPhase phase, bool blocking,
                        const char* what, int count = 1, bool every = true, SubGroup sub = {}) {
  WorkloadCollective c;
  c.op = op;
  c.size = Bytes(bytes);
  c.dim = dim;
  c.sub = sub;
  c.phase = phase;
  c.blocking = blocking;
  c.count = count;
  c.every_micro_batch = every;
  c.what = what;
  return c;
}

// Gradient and parameter collectives of `params` weights sharded over the
// weight group (dp·cp ranks; `sub` picks the hsdp or expert sub-group).
void AddSharding(std::vector<WorkloadCollective>& out, const ParallelConfig& c, const SoftwareStack& s,
                 double params, int m, const char* tag, SubGroup shard = {}, SubGroup replica = {},
                 int replica_size = 1) {
  if (params <= 0) return;
  const double grad = params * s.comm_grad_bytes;
  const double weights = params * s.comm_param_bytes;
  const bool pipelined = c.pp > 1 && s.fsdp_pp_accumulate_unsharded;
  const bool per_mb = !pipelined;   // pipelined FSDP gathers once and reduces once per step
  (void)m;
  const ParallelDim dp = ParallelDim::kDp;
  switch (c.sharding) {
    case ShardingMode::kDdp:
      // Bucketed AllReduce under the last micro-batch's backward (no_sync
      // before it), or after the backward when the stack does not overlap.
      out.push_back(Make(CollectiveOp::kAllReduce, grad, dp,
                         s.overlap_grad_reduce ? CommPhase::kGradientReduce : CommPhase::kStepEnd,
                         !s.overlap_grad_reduce, tag, 1, false, shard));
      break;
    case ShardingMode::kZero1:
      // Distributed optimizer: ReduceScatter buckets in the last backward
      // (an engine that all-reduces the whole gradient before updating its
      // shard: AllReduce), AllGather of updated parameters after the step
      // (or under the next forward).
      // (nanotron's ZeRO-1: one blocking AllReduce after the last backward).
      {
        const bool overlap = s.overlap_grad_reduce && !s.zero1_grad_reduce_after_backward;
        out.push_back(Make(s.zero1_grad_allreduce ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter, grad,
                           dp, overlap ? CommPhase::kGradientReduce : CommPhase::kStepEnd, !overlap, tag, 1, false,
                           shard));
      }
      out.push_back(Make(CollectiveOp::kAllGather, weights, dp,
                         s.overlap_param_gather ? CommPhase::kForwardPrefetch : CommPhase::kStepEnd,
                         !s.overlap_param_gather, tag, 1, false, shard));
      break;
    case ShardingMode::kZero2Replicated:
      // DeepSpeed ZeRO-2: ReduceScatter per bucket every micro-batch; AllGather
      // of the updated fp16 parameters after the step.
      out.push_back(Make(CollectiveOp::kReduceScatter, grad, dp, CommPhase::kGradientReduce, false, tag, 1, true, shard));
      out.push_back(Make(CollectiveOp::kAllGather, weights, dp, CommPhase::kStepEnd, true, tag, 1, false, shard));
      break;
    case ShardingMode::kZero2:
      out.push_back(
          Make(CollectiveOp::kAllGather, weights, dp, CommPhase::kForwardPrefetch, false, tag, 1, per_mb, shard));
      out.push_back(
          Make(CollectiveOp::kReduceScatter, grad, dp, CommPhase::kGradientReduce, false, tag, 1, per_mb, shard));
      break;
    case ShardingMode::kZero3:
    case ShardingMode::kHsdp:
      out.push_back(
          Make(CollectiveOp::kAllGather, weights, dp, CommPhase::kForwardPrefetch, false, tag, 1, per_mb, shard));
      if (!pipelined) {
        out.push_back(
            Make(CollectiveOp::kAllGather, weights, dp, CommPhase::kBackwardPrefetch, false, tag, 1, true, shard));
      }
      out.push_back(
          Make(CollectiveOp::kReduceScatter, grad, dp, CommPhase::kGradientReduce, false, tag, 1, per_mb, shard));
      if (replica_size > 1) {
        // HSDP: the reduced shard is AllReduced across replicas right after its ReduceScatter.
        out.push_back(Make(CollectiveOp::kAllReduce, grad / shard.size, dp, CommPhase::kGradientReduce, false, tag, 1,
                           per_mb, replica));
      }
      break;
  }
}

void AddShardingFor(std::vector<WorkloadCollective>& out, const ParallelConfig& c, const SoftwareStack& s,
                    double params, int m, const char* tag, int ep) {
  const ParallelConfig w = WeightGroupConfig(c);
  int group = w.dp / std::max(1, ep);   // experts: expert-data-parallel ranks (stride ep)
  SubGroup shard{ep > 1 ? group : 0, ep > 1 ? ep : 1};
  if (c.sharding == ShardingMode::kHsdp && c.hsdp_group > 0 && c.hsdp_group < group) {
    const int G = c.hsdp_group;
    const int stride = ep > 1 ? ep : 1;
    AddSharding(out, c, s, params, m, tag, SubGroup{G, stride}, SubGroup{group / G, G * stride}, group / G);
    return;
  }
  if (group <= 1) return;   // nothing to reduce or gather
  if (shard.size == 0) shard.size = group;
  AddSharding(out, c, s, params, m, tag, shard);
}

}  // namespace

ParallelConfig WeightGroupConfig(const ParallelConfig& c) {
  if (c.cp <= 1) return c;
  ParallelConfig w = c;
  w.dp = c.dp * c.cp;
  w.cp = 1;
  return w;
}

std::vector<WorkloadCollective> ShardingCollectives(const ParallelConfig& c, const SoftwareStack& s, double params,
                                                    int m, const char* what) {
  std::vector<WorkloadCollective> out;
  AddShardingFor(out, c, s, params, m, what, 1);
  return out;
}

bool TiedEmbeddingCollective(const ParallelConfig& c, const SoftwareStack& s, double params, WorkloadCollective* out) {
  if (c.pp <= 1 || s.tied_grad_bytes <= 0 || params <= 0) return false;
  // Megatron-Core finalize_model_grads: finish_grad_sync (dp), then
  // _allreduce_word_embedding_grads over the embedding group {first, last
  // stage}; DeepSpeed's ReduceTiedGrads and nanotron's
  // sync_tied_weights_gradients reduce the same pair (DECISIONS.md): the
  // ends of each pp group, stage 0 and stage pp − 1.
  *out = Make(CollectiveOp::kAllReduce, params * s.tied_grad_bytes, ParallelDim::kPp, CommPhase::kStepEnd, true,
              "pp_tied_embedding", 1, false, GroupEnds());
  return true;
}

double TpReplicatedGradElements(const ModelSpec& m, const ParallelConfig& c, double layers, double moe_layers,
                                bool last) {
  if (c.tp <= 1) return 0;
  const double h = static_cast<double>(m.hidden_size);
  const double qk_norm = m.qk_norm && m.qk_norm_weights ? 2.0 * static_cast<double>(m.HeadDim()) : 0.0;
  // Megatron-Core's rule (finalize_model_grads.py _allreduce_layernorm_grads):
  // params marked sequence_parallel, or named q_layernorm / k_layernorm.
  if (!c.sequence_parallel) return layers * qk_norm;
  const double norm = m.norm == NormKind::kLayerNorm && m.norm_bias ? 2.0 * h : h;
  // Row-parallel biases: the projection's on every layer, fc2's on dense
  // MLPs (experts' biases are not counted).
  const double bias = m.linear_bias ? h : 0.0;
  const double per_layer = static_cast<double>(m.norms_per_layer) * norm + bias + qk_norm;
  const double router = m.IsMoe() ? static_cast<double>(m.num_experts) * h : 0.0;
  return layers * per_layer + (layers - moe_layers) * bias + moe_layers * router + (last && m.final_norm ? norm : 0.0);
}

bool TpReplicatedGradCollective(const ParallelConfig& c, const SoftwareStack& s, double elements,
                                WorkloadCollective* out) {
  if (c.tp <= 1 || s.sp_grad_bytes <= 0 || elements <= 0) return false;
  *out = Make(CollectiveOp::kAllReduce, elements * s.sp_grad_bytes, ParallelDim::kTp, CommPhase::kStepEnd, true,
              "tp_replicated_grads", 1, false);
  return true;
}

bool GradNormCollective(const ParallelConfig& c, const SoftwareStack& s, WorkloadCollective* out, bool* world) {
  if (!s.grad_norm_allreduce) return false;
  // DistributedOptimizer.get_grad_stats_parallel_group() is None (every
  // rank); Megatron's other optimizers reduce over get_model_parallel_group().
  *world = c.sharding != ShardingMode::kDdp;
  const int ranks = *world ? c.WorldSize() : c.tp * c.pp;
  if (ranks <= 1) return false;
  const ParallelDim dim = *world ? ParallelDim::kDp : c.pp > 1 ? ParallelDim::kPp : ParallelDim::kTp;
  *out = Make(CollectiveOp::kAllReduce, 4.0, dim, CommPhase::kStepEnd, true, "grad_norm", 1, false);
  return true;
}

CommPlan BuildCommPlan(const ParallelConfig& c, const SoftwareStack& s, const CommPlanInputs& in) {
  CommPlan plan;
  auto& L = plan.layer;
  // s·b·h in the compute dtype (per cp rank): 2 bytes bf16, 4 in fp32 training.
  const double act = in.tokens * in.hidden * s.activation_bytes;
  // The SP all-gathers' size: FP8 where the stack gathers FP8 (fp8_tp_gathers).
  const double act_gather = in.tp_gather_bytes > 0 ? in.tokens * in.hidden * in.tp_gather_bytes : act;
  if (c.tp > 1) {
    // Megatron TP: 2 AllReduces forward, 2 backward of s·b·h; with SP each is an
    // AllGather + ReduceScatter pair of the same total (DESIGN.md §4). The
    // backward's reduce-scatters (all-reduces) are the column-parallel
    // linears' (QKV, fc1) dgrad reductions; the all-gathers the row-parallel
    // linears' output gradients.
    // A stack that overlaps the column-parallel backward (tp_backward_overlap)
    // runs those reductions, and the re-gather of each one's saved SP input,
    // beside its GEMMs (non-blocking here; evaluator_comm.cc prices them). An
    // MoE layer's fc1 is the experts', outside this path: one of the two.
    const bool async = s.tp_backward_overlap;
    const int column = in.experts_per_token > 0 ? 1 : 2;
    auto backward_reduction = [&](CollectiveOp op, const char* what) {
      if (async) {
        L.push_back(Make(op, act, ParallelDim::kTp, CommPhase::kBackward, false, what, column));
        if (column < 2) L.push_back(Make(op, act, ParallelDim::kTp, CommPhase::kBackward, true, what, 2 - column));
      } else {
        L.push_back(Make(op, act, ParallelDim::kTp, CommPhase::kBackward, true, what, 2));
      }
    };
    if (c.sequence_parallel) {
      L.push_back(
          Make(CollectiveOp::kAllGather, act_gather, ParallelDim::kTp, CommPhase::kForward, true, "tp_sp_allgather", 2));
      L.push_back(
          Make(CollectiveOp::kReduceScatter, act, ParallelDim::kTp, CommPhase::kForward, true, "tp_sp_reducescatter", 2));
      L.push_back(
          Make(CollectiveOp::kAllGather, act_gather, ParallelDim::kTp, CommPhase::kBackward, true, "tp_sp_allgather", 2));
      backward_reduction(CollectiveOp::kReduceScatter, "tp_sp_reducescatter");
      if (async) {
        L.push_back(Make(CollectiveOp::kAllGather, act, ParallelDim::kTp, CommPhase::kBackward, false, "tp_sp_regather",
                         column));
      }
    } else {
      L.push_back(Make(CollectiveOp::kAllReduce, act, ParallelDim::kTp, CommPhase::kForward, true, "tp_allreduce", 2));
      backward_reduction(CollectiveOp::kAllReduce, "tp_allreduce");
    }
  }
  if (c.cp > 1) {
    // This rank's K,V (÷ tp heads), and its queries / attention output.
    const double kv_block = in.tokens * 2.0 * in.kv_width / c.tp * s.activation_bytes;
    const double q_block = in.tokens * in.query_width / c.tp * s.activation_bytes;
    // Ring attention: ring−1 steps passing the K,V block forward; backward
    // passes K,V and their gradients (2×). Overlapped with the attention blocks.
    auto ring = [&](int ranks, SubGroup sub) {
      L.push_back(Make(CollectiveOp::kSendRecv, kv_block, ParallelDim::kCp, CommPhase::kForward, false, "cp_kv_ring",
                       ranks - 1, true, sub));
      L.push_back(Make(CollectiveOp::kSendRecv, 2.0 * kv_block, ParallelDim::kCp, CommPhase::kBackward, false,
                       "cp_kv_ring", ranks - 1, true, sub));
    };
    // Ulysses / Megatron a2a: q, k, v re-split from sequence to heads
    // before attention, the output back after it: 4 all-to-alls of this
    // rank's tensors; backward the gradients the same way. Blocking.
    auto all_to_alls = [&](SubGroup sub) {
      for (CommPhase phase : {CommPhase::kForward, CommPhase::kBackward}) {
        L.push_back(Make(CollectiveOp::kAllToAll, q_block, ParallelDim::kCp, phase, true, "cp_a2a_q_out", 2, true, sub));
        L.push_back(
            Make(CollectiveOp::kAllToAll, kv_block / 2.0, ParallelDim::kCp, phase, true, "cp_a2a_kv", 2, true, sub));
      }
    };
    switch (c.cp_comm) {
      case CpComm::kP2p:
        ring(c.cp, SubGroup{});
        break;
      case CpComm::kA2a:
        all_to_alls(SubGroup{});
        break;
      case CpComm::kA2aP2p: {
        // Transformer Engine AttnFuncWithCPAndKVP2P with cp_group = [a2a, p2p]
        // (context_parallel.py, TE d0067d0): q, k, v all-to-all'd over the
        // inner group (consecutive cp ranks: Megatron-LM d98e8a6
        // parallel_state.py create_hierarchical_groups, level 1), then the
        // ring over the outer group (every cp_a2a_size-th rank), the output
        // all-to-all'd back; backward dout before, dq, dk, dv after. After
        // the all-to-all a rank holds a×T tokens of 1/a of the heads, so
        // each ring step's K,V block is the plain ring's. A group of the
        // whole cp is the plain kind's group ({}), so the limits are exact.
        const int inner = c.CpA2aSize(), outer = c.CpRingSize();
        if (inner > 1) all_to_alls(outer > 1 ? SubGroup{inner, 1} : SubGroup{});
        if (outer > 1) ring(outer, inner > 1 ? SubGroup{outer, inner} : SubGroup{});
        break;
      }
      case CpComm::kAllGather:
        if (s.cp_allgather_ring_loop) {
          // torch's _AllGatherRotater inside the ring's loop (_attention.py,
          // SoftwareStack::cp_allgather_ring_loop): the K,V all-gather is
          // issued before step 0's attention call and waited at step 1, in
          // the forward and again in the backward, so each hides under one
          // attention block. The backward's dK,dV go round the ring in fp32
          // (its ALL_TO_ALL rotater, permute_tensor to the next rank) at
          // every step: cp − 1 beside the next step's block, the last waited
          // after the loop.
          const double dkv_block = in.tokens * 2.0 * in.kv_width / c.tp * 4.0;
          L.push_back(Make(CollectiveOp::kAllGather, c.cp * kv_block, ParallelDim::kCp, CommPhase::kForward, false,
                           "cp_kv_allgather"));
          // (The ring's steps before the gather: tier B runs one CP
          // collective per phase beside the blocks, the first, and blocks on the others.)
          L.push_back(Make(CollectiveOp::kSendRecv, dkv_block, ParallelDim::kCp, CommPhase::kBackward, false,
                           "cp_dkv_ring", c.cp - 1));
          L.push_back(Make(CollectiveOp::kAllGather, c.cp * kv_block, ParallelDim::kCp, CommPhase::kBackward, false,
                           "cp_kv_allgather"));
          L.push_back(Make(CollectiveOp::kSendRecv, dkv_block, ParallelDim::kCp, CommPhase::kBackward, true,
                           "cp_dkv_ring"));
          break;
        }
        // Transformer Engine's AttnFuncWithCPAndKVAllGather: all-gather K,V
        // (output cp blocks) before attention; backward gathers them again
        // and reduce-scatters dK,dV. Blocking.
        L.push_back(Make(CollectiveOp::kAllGather, c.cp * kv_block, ParallelDim::kCp, CommPhase::kForward, true,
                         "cp_kv_allgather"));
        L.push_back(Make(CollectiveOp::kAllGather, c.cp * kv_block, ParallelDim::kCp, CommPhase::kBackward, true,
                         "cp_kv_allgather"));
        L.push_back(Make(CollectiveOp::kReduceScatter, c.cp * kv_block, ParallelDim::kCp, CommPhase::kBackward, true,
                         "cp_dkv_reducescatter"));
        break;
    }
  }
  if (in.experts_per_token > 0 && c.ep > 1) {
    // Dispatch and combine AllToAll per MoE layer, forward and backward; a
    // rank sends its tokens × top-k hidden vectors (dropless, capacity 1).
    // Dense layers of an MoE model dispatch nothing: the averaged layer
    // carries the MoE layers' share of the bytes (their latency is kept whole).
    const double tokens_rank = c.sequence_parallel ? in.tokens / c.tp : in.tokens;
    const double a2a = tokens_rank * in.experts_per_token * in.hidden * s.activation_bytes * in.moe_layer_fraction;
    L.push_back(Make(CollectiveOp::kAllToAll, a2a, ParallelDim::kEp, CommPhase::kForward, true, "ep_alltoall", 2));
    L.push_back(Make(CollectiveOp::kAllToAll, a2a, ParallelDim::kEp, CommPhase::kBackward, true, "ep_alltoall", 2));
  }
  AddShardingFor(L, c, s, in.layer_dense_params, in.num_micro_batches, "dp_dense", 1);
  AddShardingFor(L, c, s, in.layer_expert_params, in.num_micro_batches, "dp_expert", c.ep);
  if (c.pp > 1) {
    // Megatron scatter/gather: with SP the boundary tensor is already split over tp.
    const bool partition = !c.sequence_parallel && c.tp > 1 && s.pp_partition_over_tp;
    const double bytes = c.sequence_parallel || partition ? act / c.tp : act;
    plan.pp_send = Make(CollectiveOp::kSendRecv, bytes, ParallelDim::kPp, CommPhase::kForward, true, "pp_sendrecv");
    plan.has_pp_send = true;
    if (partition) {
      // DeepSpeed PartitionedTensor: the receiver rebuilds the full tensor
      // (full(): all_gather over the tp group); to_meta() is an int64 list
      // [ndim, 3 sizes, num_parts, num_parts + 1 offsets].
      plan.pp_gather = Make(CollectiveOp::kAllGather, act, ParallelDim::kTp, CommPhase::kForward, true, "pp_tp_gather");
      plan.has_pp_gather = true;
      plan.pp_meta = Make(CollectiveOp::kSendRecv, 8.0 * (c.tp + 6), ParallelDim::kPp, CommPhase::kForward, true,
                          "pp_meta");
      plan.pp_meta_count = s.pp_meta_messages;
    } else if (s.pp_host_synchronous && s.pp_meta_messages > 0) {
      // nanotron's P2P: 7 int64 of metadata, then shape + stride, before every tensor.
      plan.pp_meta = Make(CollectiveOp::kSendRecv, 8.0 * 7, ParallelDim::kPp, CommPhase::kForward, true, "pp_meta");
      plan.pp_meta_count = s.pp_meta_messages;
    }
  }
  return plan;
}

}  // namespace parasim
