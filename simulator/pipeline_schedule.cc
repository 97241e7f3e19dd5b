#include "simulator/pipeline_schedule.h"

#include <algorithm>
#include <deque>

#include "core/check.h"

namespace parasim::simulator {

const char* ToString(PassKind kind) {
  switch (kind) {
    case PassKind::kForward: return "forward";
    case PassKind::kBackward: return "backward";
    case PassKind::kWeightGrad: return "weight_grad";
  }
  return "?";
}

namespace {

std::vector<PipelinePass> GpipeOrder(int m) {
  std::vector<PipelinePass> out;
  for (int mb = 0; mb < m; ++mb) out.push_back({PassKind::kForward, mb, 0});
  for (int mb = 0; mb < m; ++mb) out.push_back({PassKind::kBackward, mb, 0});
  return out;
}

// PipeDream-Flush: p-s-1 warm-up forwards, then one forward one backward,
// then the remaining backwards (Narayanan et al. 2021, Fig. 4 top).
std::vector<PipelinePass> OneFOneBOrder(int stage, int p, int m) {
  std::vector<PipelinePass> out;
  int warmup = std::min(p - stage - 1, m);
  for (int mb = 0; mb < warmup; ++mb) out.push_back({PassKind::kForward, mb, 0});
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({PassKind::kForward, warmup + i, 0});
    out.push_back({PassKind::kBackward, i, 0});
  }
  for (int mb = m - warmup; mb < m; ++mb) out.push_back({PassKind::kBackward, mb, 0});
  return out;
}

// Megatron-LM forward_backward_pipelining_with_interleaving: virtual
// micro-batch k of the stage's m·v passes maps to chunk (k mod p·v) / p
// (reversed for backward) and micro-batch (k / p·v)·p + k mod p; warm-up
// (p-s-1)·2 + (v-1)·p forwards, all of them when m == p.
std::vector<PipelinePass> InterleavedOrder(int stage, int p, int m, int v) {
  const int total = m * v;
  auto chunk_of = [&](int k, bool forward) {
    int c = (k % (p * v)) / p;
    return forward ? c : v - 1 - c;
  };
  auto mb_of = [&](int k) { return (k / (p * v)) * p + k % p; };
  int warmup = m == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  std::vector<PipelinePass> out;
  for (int k = 0; k < warmup; ++k) out.push_back({PassKind::kForward, mb_of(k), chunk_of(k, true)});
  for (int i = 0; i < total - warmup; ++i) {
    int kf = warmup + i;
    out.push_back({PassKind::kForward, mb_of(kf), chunk_of(kf, true)});
    out.push_back({PassKind::kBackward, mb_of(i), chunk_of(i, false)});
  }
  for (int k = total - warmup; k < total; ++k) out.push_back({PassKind::kBackward, mb_of(k), chunk_of(k, false)});
  return out;
}

// ZB-H1 (Qi et al. 2023, Fig. 3): 1F1B's order of F and B, with each weight
// gradient W deferred: stage s runs W(k) after B(k+s), so later stages keep a
// backlog of s W passes that fills the cool-down bubbles while their B passes
// hurry down the pipeline. Every stage then holds at most p micro-batches'
// activations, 1F1B's peak (stage 0's). With equal F, B, W the bubble is
// (p-1)(F+B-W), a third of 1F1B's (checked in pipeline_schedule_test).
std::vector<PipelinePass> ZeroBubbleH1Order(int stage, int p, int m) {
  std::vector<PipelinePass> out;
  std::deque<int> pending_w;
  auto after_b = [&](int mb) {
    pending_w.push_back(mb);
    if (static_cast<int>(pending_w.size()) > stage) {
      out.push_back({PassKind::kWeightGrad, pending_w.front(), 0});
      pending_w.pop_front();
    }
  };
  int warmup = std::min(p - stage - 1, m);
  for (int mb = 0; mb < warmup; ++mb) out.push_back({PassKind::kForward, mb, 0});
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({PassKind::kForward, warmup + i, 0});
    out.push_back({PassKind::kBackward, i, 0});
    after_b(i);
  }
  for (int mb = m - warmup; mb < m; ++mb) {
    out.push_back({PassKind::kBackward, mb, 0});
    after_b(mb);
  }
  for (int mb : pending_w) out.push_back({PassKind::kWeightGrad, mb, 0});
  return out;
}

}  // namespace

std::vector<std::vector<PipelinePass>> BuildPipelineOrder(PipelineSchedule schedule, int stages,
                                                          int micro_batches, int chunks) {
  PARASIM_CHECK(stages >= 1 && micro_batches >= 1 && chunks >= 1, "pipeline shape");
  PARASIM_CHECK(chunks == 1 || schedule == PipelineSchedule::kInterleaved, "chunks > 1 needs interleaved");
  std::vector<std::vector<PipelinePass>> out(stages);
  for (int s = 0; s < stages; ++s) {
    switch (schedule) {
      case PipelineSchedule::kGpipe: out[s] = GpipeOrder(micro_batches); break;
      case PipelineSchedule::k1F1B: out[s] = OneFOneBOrder(s, stages, micro_batches); break;
      case PipelineSchedule::kInterleaved:
        if (chunks == 1) {
          out[s] = OneFOneBOrder(s, stages, micro_batches);
        } else {
          PARASIM_CHECK(micro_batches % stages == 0, "interleaved needs micro-batches divisible by stages");
          out[s] = InterleavedOrder(s, stages, micro_batches, chunks);
        }
        break;
      case PipelineSchedule::kZeroBubble: out[s] = ZeroBubbleH1Order(s, stages, micro_batches); break;
    }
  }
  return out;
}

UpstreamPass PassUpstream(int stage, const PipelinePass& pass, int stages, int chunks) {
  UpstreamPass up;
  switch (pass.kind) {
    case PassKind::kForward:
      if (stage > 0) {
        up = {true, stage - 1, {PassKind::kForward, pass.micro_batch, pass.chunk}};
      } else if (pass.chunk > 0) {
        up = {true, stages - 1, {PassKind::kForward, pass.micro_batch, pass.chunk - 1}};
      }
      break;
    case PassKind::kBackward:
      if (stage < stages - 1) {
        up = {true, stage + 1, {PassKind::kBackward, pass.micro_batch, pass.chunk}};
      } else if (pass.chunk < chunks - 1) {
        up = {true, 0, {PassKind::kBackward, pass.micro_batch, pass.chunk + 1}};
      } else {
        up = {true, stage, {PassKind::kForward, pass.micro_batch, pass.chunk}};  // the loss
      }
      break;
    case PassKind::kWeightGrad:
      up = {true, stage, {PassKind::kBackward, pass.micro_batch, pass.chunk}};
      break;
  }
  return up;
}

}  // namespace parasim::simulator
