// Interleaved (virtual-stage) pipelines whose stages do not divide into
// equal chunks: how a stage's layers split into its v chunks, which model
// layer each chunk holds, and the step of the interleaved 1F1B order when
// the chunks' passes differ in length. Shared by tier A (the pipeline's
// step) and the workload tier B replays (each layer's chunk and model layer).
//
//   ChunkLayers(10, 4)   // {3, 3, 2, 2}
#pragma once

#include <cstdint>
#include <vector>

#include "cost_model/overlap.h"

namespace parasim {

// Layers of each of the v chunks of a stage of `layers` layers: equal where
// they divide, else the first layers % v chunks one layer more. Megatron-Core
// builds equal chunks from --num-virtual-stages-per-pipeline-rank and asserts
// they divide (NVIDIA/Megatron-LM d98e8a6, megatron/core/transformer/
// transformer_block.py get_num_layers_to_build); any other split is a
// --pipeline-model-parallel-layout, whose balanced form with the heavier
// chunks first this is.
std::vector<int> ChunkLayers(int layers, int v);

// Whether a stage of `layers` layers splits into v unequal chunks (v > 1,
// layers > 0, not a multiple of v): the one test every caller uses.
bool StageHasSplitChunks(int layers, int v);
// Whether some stage's layers do not divide into v equal chunks.
bool HasSplitChunks(const std::vector<int>& stage_layers, int v);

// Per stage, per layer in the stage's chunk order: the model layer it holds.
// The model's layers run through the virtual stages in Megatron's order
// (chunk 0 of stages 0..pp-1, then chunk 1, …); v = 1: contiguous stages.
std::vector<std::vector<int64_t>> InterleavedModelLayers(const std::vector<int>& stage_layers, int v);

// Megatron-Core's interleaved order on a pipeline rank (megatron/core/
// pipeline_parallel/schedules.py, forward_backward_pipelining_with_
// interleaving, microbatch_group_size_per_vp_stage = pp): forward k runs chunk
// (k mod pp·v) / pp, backward k chunk v − 1 − that; the rank runs
// `InterleavedWarmup` forwards before its first backward, then one forward and
// one backward at a time.
int InterleavedForwardChunk(int k, int pp, int v);
int InterleavedBackwardChunk(int k, int pp, int v);
// min(m·v, 2·(pp − stage − 1) + (v − 1)·pp); all m·v when m = pp and
// `full_warmup` (SoftwareStack::pp_interleaved_full_warmup).
int InterleavedWarmup(int pp, int m, int v, int stage, bool full_warmup);

// Layer-micro-batches of activations rank `stage` holds at its peak: the
// largest sum, over the order, of the layers of the chunk forwards whose
// backward has not run (`chunk_layers[c]`: chunk c's layers). Equal chunks:
// min(m·v, warm-up + 1) · L/v. With the heavier chunks first the steady state
// can hold more than the warm-up's end: its forwards add heavy chunks while
// its backwards free the light last ones first.
double InterleavedHeldLayers(const std::vector<int>& chunk_layers, int pp, int m, int stage, bool full_warmup);

// The steady state's pairs of rank `stage`: iteration j runs forward W + j,
// whose transfer runs beside backward j, and backward j, whose transfer runs
// beside forward W + j + 1 (the last iteration's: beside forward W + j, the
// last forward, as the equal-chunk term takes one forward beside each).
// Returns counts[b·v + f]: iterations whose forward transfer hides under
// chunk b's backward and whose backward transfer under chunk f's forward.
std::vector<int> InterleavedSteadyPairs(int pp, int m, int v, int stage, bool full_warmup);

// OverlappedP2pPerStep (overlap.h) for a stage of unequal chunks: each
// steady iteration's transfers beside the passes of the chunks they run
// beside (InterleavedSteadyPairs; f_chunks[c], b_chunks[c]: chunk c's
// forward and backward), the warm-up's and cool-down's in full as there.
P2pStep OverlappedP2pSplitChunks(double p2p, const std::vector<OverlapUnit>& f_chunks,
                                 const std::vector<OverlapUnit>& b_chunks, int pp, int m, int rank, bool full_warmup,
                                 double interference);

// The step of Megatron's interleaved 1F1B order (m micro-batches, m a
// multiple of pp; warm-up of 2·(pp−s−1) + (v−1)·pp forwards, all of them when
// m = pp) with pass times fwd[s·v + c] and bwd[s·v + c] of chunk c on stage
// s: each pass starts when its stage is free and its upstream pass (the
// previous stage's forward or next stage's backward, across the pipeline's
// ends to the neighbouring chunk) is done. With equal chunks and stages it is
// m·T + (pp−1)·T/v, T a stage's passes of one micro-batch.
double InterleavedPipelineSeconds(const std::vector<double>& fwd, const std::vector<double>& bwd, int pp, int m,
                                  int v);

}  // namespace parasim
