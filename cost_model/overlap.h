// Tier-A overlap rules (DESIGN.md §3, §4): how non-blocking collectives on
// the communication stream hide under compute, as small recurrences over a
// stage's units in execution order.
//  - Forward: the FSDP AllGather of unit i is issued when unit i−depth starts
//    (the first depth+1 at once) and runs on one stream in order; unit i
//    computes once its gather is done. With depth 1 the exposed part of
//    gather i is max(0, t_AG(i) − t_compute(i−1)).
//  - Backward (reverse order): unit j's reduction (ReduceScatter, DDP bucket,
//    HSDP AllReduce) is issued when its backward ends and hides under the
//    backward of j−1; zero3's re-gather of unit j−1 is issued when j starts
//    and shares the stream (and the links) with the reductions. What is left
//    when the last backward ends is exposed.
//  - Kernels that run beside a collective are slowed by `interference`
//    (NCCL takes SMs and HBM bandwidth); a unit's `fixed` time (blocking
//    comm, waits for the CP ring, attention already slowed by the ring) is
//    not. A collective overlapping W seconds of a unit covers the fraction
//    W / (interference·kernels + fixed) of it (spread evenly), as the
//    simulator's rate change does.
// Pipeline: 1F1B/GPipe step = Σ_s T_s + (m−1)·max_s T_s; interleaved with v
// chunks divides the fill/drain by v, so equal stages idle (p−1)/(v·m+p−1).
#pragma once

#include <vector>

namespace parasim {

struct OverlapUnit {
  double compute = 0;   // compute-stream time (kernels + blocking comm)
  double gather = 0;    // non-blocking gather needed before it (0: none)
  double reduce = 0;    // non-blocking reduction issued after its backward (0: none)
  double fixed = 0;     // of `compute`, what a gather or reduction beside it does not slow
};

struct PhaseResult {
  double time = 0;          // compute stream start to last event (incl. tail comm)
  double exposed = 0;       // compute stream idle waiting for comm (incl. tail)
  double comm = 0;          // comm-stream busy time
  double interference = 0;  // extra compute time from overlap
};

PhaseResult ForwardWithPrefetch(const OverlapUnit* units, int n, int depth, double interference);
PhaseResult BackwardWithReduce(const OverlapUnit* units, int n, double interference);

// A pipeline stage's units without materializing them: an optional first
// unit (embedding), `count` identical body units (layers), an optional last
// unit (LM head). Same results as the array form of the same sequence.
struct UnitRuns {
  OverlapUnit first, body, last;
  bool has_first = false, has_last = false;
  int count = 0;

  int size() const { return count + (has_first ? 1 : 0) + (has_last ? 1 : 0); }
  const OverlapUnit& operator[](int i) const {
    if (has_first && i == 0) return first;
    return i < count + (has_first ? 1 : 0) ? body : last;
  }
};
PhaseResult ForwardWithPrefetch(const UnitRuns& units, int depth, double interference);
PhaseResult BackwardWithReduce(const UnitRuns& units, double interference);

// Once-per-step collectives issued between whole passes (Megatron-Core's
// per-chunk param_sync_func / grad_sync_func under the interleaved
// schedule): `units` are a stage's chunk passes in execution order; the
// collectives run in list order on one stream, collective k issued when unit
// issue_after ends (-1: at the start) and, with needed_by >= 0, awaited
// before that unit starts. What is still running after the last unit is
// exposed. Interference as the recurrences above (SlowedExtra). issue_after
// is non-decreasing along the list and lies in [-1, units.size()).
struct PassCollective {
  double seconds = 0;
  int issue_after = -1;
  int needed_by = -1;
};
PhaseResult OverlapPassCollectives(const std::vector<OverlapUnit>& units, const std::vector<PassCollective>& collectives,
                                   double interference);

// Pipeline p2p of pipeline rank `rank` over a step
// (SoftwareStack::pp_overlap_p2p; Megatron-Core's overlap_p2p_comm,
// NVIDIA/Megatron-LM core_v0.4.0 megatron/core/pipeline_parallel/
// schedules.py forward_backward_pipelining_with_interleaving). Each chunk
// pass is followed by one transfer (send_forward_recv_forward after a
// forward, send_backward_recv_backward after a backward), `p2p` seconds each.
//  - Warm-up (W = min(2·(p − rank − 1) + (v − 1)·p, m·v) forwards, all m·v
//    with m = p under full_warmup): the handles are waited at the top of the
//    next iteration, before its forward, with nothing between: in full.
//  - Steady state (m·v − W iterations of one forward, one backward): the
//    forward's transfer is waited after the backward, the backward's after
//    the next forward: exposed only beyond the pass it runs beside, and that
//    pass is slowed by `interference` over the transfer's first `p2p`
//    seconds (SlowedExtra, the rule of the gathers and reductions).
//  - Cool-down (W backwards): send_backward_recv_backward without
//    overlap_p2p_comm, blocking: in full, beside no kernel.
// `f_chunk`, `b_chunk`: one chunk's forward and backward (compute, and the
// fixed part a transfer beside it does not slow).
struct P2pStep {
  double exposed = 0;        // compute stream waiting for transfers
  double interference = 0;   // extra pass time beside the hidden transfers
};
P2pStep OverlappedP2pPerStep(double p2p, const OverlapUnit& f_chunk, const OverlapUnit& b_chunk, int pp, int m, int v,
                             int rank, bool full_warmup, double interference);
// The exposed part with passes of kernels only and no interference.
double ExposedP2pPerStep(double p2p, double f_chunk, double b_chunk, int pp, int m, int v, int rank,
                         bool full_warmup);

// Step time of a pipeline from per-micro-batch stage times (fwd+bwd+p2p).
// With vpp > 1 each stage's chunks are taken as equal; stages that split
// into unequal chunks: InterleavedPipelineSeconds (interleaved_chunks.h).
double PipelineSeconds(const double* stage_times, int pp, int micro_batches, int vpp);

}  // namespace parasim
