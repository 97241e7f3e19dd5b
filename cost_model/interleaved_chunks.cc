#include "cost_model/interleaved_chunks.h"

#include <algorithm>

#include "core/check.h"

namespace parasim {

std::vector<int> ChunkLayers(int layers, int v) {
  const int chunks = std::max(1, v);
  std::vector<int> out(chunks, layers / chunks);
  for (int c = 0; c < layers % chunks; ++c) ++out[c];
  return out;
}

bool StageHasSplitChunks(int layers, int v) { return v > 1 && layers > 0 && layers % v != 0; }

bool HasSplitChunks(const std::vector<int>& stage_layers, int v) {
  return std::any_of(stage_layers.begin(), stage_layers.end(), [&](int n) { return StageHasSplitChunks(n, v); });
}

std::vector<std::vector<int64_t>> InterleavedModelLayers(const std::vector<int>& stage_layers, int v) {
  const int pp = static_cast<int>(stage_layers.size());
  const int chunks = std::max(1, v);
  std::vector<std::vector<int64_t>> out(pp);
  std::vector<std::vector<int>> sizes(pp);
  for (int s = 0; s < pp; ++s) sizes[s] = ChunkLayers(stage_layers[s], chunks);
  // Chunk c of every stage before chunk c + 1; within a stage its chunks in order.
  int64_t next = 0;
  for (int c = 0; c < chunks; ++c) {
    for (int s = 0; s < pp; ++s) {
      for (int i = 0; i < sizes[s][c]; ++i) out[s].push_back(next++);
    }
  }
  return out;
}

int InterleavedForwardChunk(int k, int pp, int v) { return (k % (pp * v)) / pp; }
int InterleavedBackwardChunk(int k, int pp, int v) { return v - 1 - InterleavedForwardChunk(k, pp, v); }

int InterleavedWarmup(int pp, int m, int v, int stage, bool full_warmup) {
  const int passes = m * v;
  if (m == pp && full_warmup) return passes;
  return std::min(passes, 2 * (pp - stage - 1) + (v - 1) * pp);
}

double InterleavedHeldLayers(const std::vector<int>& chunk_layers, int pp, int m, int stage, bool full_warmup) {
  const int v = static_cast<int>(chunk_layers.size());
  PARASIM_CHECK(pp >= 1 && m >= 1 && v >= 1 && stage >= 0 && stage < pp, "interleaved order needs pp, m, v >= 1");
  const int passes = m * v;
  const int warmup = InterleavedWarmup(pp, m, v, stage, full_warmup);
  double held = 0;
  for (int k = 0; k < warmup; ++k) held += chunk_layers[InterleavedForwardChunk(k, pp, v)];
  double peak = held;
  for (int j = 0; warmup + j < passes; ++j) {   // steady: the peak is right after each forward
    held += chunk_layers[InterleavedForwardChunk(warmup + j, pp, v)];
    peak = std::max(peak, held);
    held -= chunk_layers[InterleavedBackwardChunk(j, pp, v)];
  }
  return peak;
}

std::vector<int> InterleavedSteadyPairs(int pp, int m, int v, int stage, bool full_warmup) {
  PARASIM_CHECK(pp >= 1 && m >= 1 && v >= 1 && stage >= 0 && stage < pp, "interleaved order needs pp, m, v >= 1");
  const int passes = m * v;
  const int warmup = InterleavedWarmup(pp, m, v, stage, full_warmup);
  std::vector<int> counts(static_cast<size_t>(v) * v, 0);
  for (int j = 0; warmup + j < passes; ++j) {
    const int next = std::min(warmup + j + 1, passes - 1);
    ++counts[InterleavedBackwardChunk(j, pp, v) * v + InterleavedForwardChunk(next, pp, v)];
  }
  return counts;
}

P2pStep OverlappedP2pSplitChunks(double p2p, const std::vector<OverlapUnit>& f_chunks,
                                 const std::vector<OverlapUnit>& b_chunks, int pp, int m, int rank, bool full_warmup,
                                 double interference) {
  const int v = static_cast<int>(f_chunks.size());
  PARASIM_CHECK(static_cast<int>(b_chunks.size()) == v, "one forward and one backward pass per chunk");
  const std::vector<int> pairs = InterleavedSteadyPairs(pp, m, v, rank, full_warmup);
  P2pStep r;
  r.exposed = 2.0 * InterleavedWarmup(pp, m, v, rank, full_warmup) * p2p;
  for (int b = 0; b < v; ++b) {
    for (int f = 0; f < v; ++f) {
      const int n = pairs[b * v + f];
      if (n == 0) continue;
      // One steady iteration of the equal-chunk term: pp = m = v = 1 leaves no warm-up.
      const P2pStep one = OverlappedP2pPerStep(p2p, f_chunks[f], b_chunks[b], 1, 1, 1, 0, false, interference);
      r.exposed += n * one.exposed;
      r.interference += n * one.interference;
    }
  }
  return r;
}

namespace {

struct Pass {
  bool forward = true;
  int mb = 0, chunk = 0;
};

// Megatron-Core's order on pipeline rank `s` (megatron/core/pipeline_parallel/
// schedules.py, forward_backward_pipelining_with_interleaving), as the
// simulator's (simulator/pipeline_schedule.cc InterleavedOrder).
std::vector<Pass> RankOrder(int s, int pp, int m, int v) {
  const int total = m * v;
  const auto chunk_of = [&](int k, bool forward) {
    const int c = (k % (pp * v)) / pp;
    return forward ? c : v - 1 - c;
  };
  const auto mb_of = [&](int k) { return (k / (pp * v)) * pp + k % pp; };
  const int warmup = m == pp ? total : std::min(2 * (pp - s - 1) + (v - 1) * pp, total);
  std::vector<Pass> out;
  out.reserve(2 * total);
  for (int k = 0; k < warmup; ++k) out.push_back({true, mb_of(k), chunk_of(k, true)});
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back({true, mb_of(warmup + i), chunk_of(warmup + i, true)});
    out.push_back({false, mb_of(i), chunk_of(i, false)});
  }
  for (int k = total - warmup; k < total; ++k) out.push_back({false, mb_of(k), chunk_of(k, false)});
  return out;
}

}  // namespace

double InterleavedPipelineSeconds(const std::vector<double>& fwd, const std::vector<double>& bwd, int pp, int m,
                                  int v) {
  PARASIM_CHECK(pp >= 1 && m >= 1 && v >= 1 && m % pp == 0, "interleaved order needs m a multiple of pp");
  PARASIM_CHECK(static_cast<int>(fwd.size()) == pp * v && static_cast<int>(bwd.size()) == pp * v,
                "one pass time per stage and chunk");
  const auto at = [&](int s, int mb, int c) { return (static_cast<size_t>(s) * m + mb) * v + c; };
  std::vector<double> f_done(static_cast<size_t>(pp) * m * v, -1.0), b_done(f_done.size(), -1.0);
  std::vector<std::vector<Pass>> orders(pp);
  for (int s = 0; s < pp; ++s) orders[s] = RankOrder(s, pp, m, v);
  std::vector<size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0.0);
  size_t left = 2 * static_cast<size_t>(pp) * m * v;
  while (left > 0) {
    size_t ran = 0;
    for (int s = 0; s < pp; ++s) {
      for (; next[s] < orders[s].size(); ++next[s], ++ran) {
        const Pass& p = orders[s][next[s]];
        double ready = 0;
        if (p.forward) {
          if (s > 0) ready = f_done[at(s - 1, p.mb, p.chunk)];
          else if (p.chunk > 0) ready = f_done[at(pp - 1, p.mb, p.chunk - 1)];
        } else if (s < pp - 1) {
          ready = b_done[at(s + 1, p.mb, p.chunk)];
        } else if (p.chunk < v - 1) {
          ready = b_done[at(0, p.mb, p.chunk + 1)];
        } else {
          ready = f_done[at(s, p.mb, p.chunk)];   // the loss
        }
        if (ready < 0) break;   // upstream not run yet
        const double end = std::max(free_at[s], ready) + (p.forward ? fwd : bwd)[s * v + p.chunk];
        free_at[s] = end;
        (p.forward ? f_done : b_done)[at(s, p.mb, p.chunk)] = end;
      }
    }
    PARASIM_CHECK(ran > 0, "interleaved order deadlocked");
    left -= ran;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

}  // namespace parasim
