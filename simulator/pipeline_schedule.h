// Per-stage order of forward and backward passes for the pipeline schedules
// parasim simulates: GPipe, 1F1B (PipeDream-Flush), interleaved 1F1B
// (Megatron-LM, Narayanan et al. 2021) and zero-bubble ZB-H1 (Qi et al. 2023,
// "Zero Bubble Pipeline Parallelism", backward split into B = input gradient
// and W = weight gradient). The order is what each stage's compute stream
// executes; cross-stage dependencies come from PassUpstream().
//
//   auto order = BuildPipelineOrder(PipelineSchedule::k1F1B, /*stages=*/4,
//                                   /*micro_batches=*/8, /*chunks=*/1);
//   // order[s] = stage s's passes: F0 F1 F2 F3 B0 F4 B1 ... for s = 0
#pragma once

#include <cstdint>
#include <vector>

#include "core/parallel_config.h"

namespace parasim::simulator {

enum class PassKind : uint8_t {
  kForward,
  kBackward,     // whole backward; ZB-H1: input gradient only
  kWeightGrad,   // ZB-H1 only: weight gradient, deferred to fill bubbles
};
const char* ToString(PassKind kind);

struct PipelinePass {
  PassKind kind = PassKind::kForward;
  int micro_batch = 0;
  int chunk = 0;   // virtual stage on this rank (interleaved), else 0

  bool operator==(const PipelinePass&) const = default;
};

// Passes of every stage in execution order. Requirements (checked, they are
// the caller's to validate): stages, micro_batches >= 1; chunks > 1 only for
// kInterleaved, which needs micro_batches % stages == 0 (Megatron-LM's rule).
// Orders do not depend on pass times; unequal stages change only the timing.
std::vector<std::vector<PipelinePass>> BuildPipelineOrder(PipelineSchedule schedule, int stages,
                                                          int micro_batches, int chunks);

// The pass on another (or the same) stage that `pass` on `stage` waits for:
// the previous stage's forward (the last stage's previous chunk for chunk
// starts), the next stage's backward, the loss for the last backward, and a
// weight-gradient pass waits for its own B. has_upstream = false for the first
// forward of micro-batch on stage 0, chunk 0.
struct UpstreamPass {
  bool has_upstream = false;
  int stage = 0;
  PipelinePass pass;
};
UpstreamPass PassUpstream(int stage, const PipelinePass& pass, int stages, int chunks);

}  // namespace parasim::simulator
