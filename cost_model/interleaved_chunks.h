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

namespace parasim {

// Layers of each of the v chunks of a stage of `layers` layers: equal where
// they divide, else the first layers % v chunks one layer more. Megatron-Core
// builds equal chunks from --num-virtual-stages-per-pipeline-rank and asserts
// they divide (NVIDIA/Megatron-LM d98e8a6, megatron/core/transformer/
// transformer_block.py get_num_layers_to_build); any other split is a
// --pipeline-model-parallel-layout, whose balanced form with the heavier
// chunks first this is.
std::vector<int> ChunkLayers(int layers, int v);

// Whether some stage's layers do not divide into v equal chunks.
bool HasSplitChunks(const std::vector<int>& stage_layers, int v);

// Per stage, per layer in the stage's chunk order: the model layer it holds.
// The model's layers run through the virtual stages in Megatron's order
// (chunk 0 of stages 0..pp-1, then chunk 1, …); v = 1: contiguous stages.
std::vector<std::vector<int64_t>> InterleavedModelLayers(const std::vector<int>& stage_layers, int v);

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
