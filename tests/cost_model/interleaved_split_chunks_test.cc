// Interleaved stages split into unequal chunks: the activations the
// interleaved order holds and the pipeline transfers it hides, chunk by chunk
// (cost_model/interleaved_chunks.h).
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "cost_model/interleaved_chunks.h"
#include "cost_model/memory.h"
#include "cost_model/overlap.h"

namespace parasim {
namespace {

using Catch::Matchers::WithinRel;

}  // namespace

TEST_CASE("interleaved split chunks: the layers held follow the order's chunks", "[cost_model][interleaved]") {
  // 10 layers in 4 chunks of 3, 3, 2, 2; p 4, m 8. Forward k runs chunk
  // (k mod 16) / 4, backward k chunk 3 − that.
  // Stage 0 warms up 2·3 + 3·4 = 18 forwards; the peak follows each steady
  // forward. After forward 18 (k 0..18): chunk 0 ×7 (k 0-3, 16-18) = 21,
  // chunk 1 ×4 = 12, chunks 2 and 3 ×4 ×2 = 16: 49. Then forward 19+j adds
  // chunk 0 (k 19: +3), chunk 1 (k 20-23: +3 each), chunk 2 (k 24-27: +2),
  // while backward j frees chunk 3 (j 0-3: −2), chunk 2 (j 4-7: −2): 50, 51,
  // 52, 53, 54 after forwards 19-23, 54 after 24-26, 53 after 27 (backward 8
  // freed chunk 1: −3), falling after. Peak 54, not 19 · 10/4 = 47.5.
  const std::vector<int> split = ChunkLayers(10, 4);
  CHECK(InterleavedHeldLayers(split, 4, 8, 0, false) == 54.0);
  // Stage 3 warms up 12 (chunks 0, 1, 2 ×4, chunk 3 once: 34); the steady
  // forwards of chunk 0 (k 16-19, +3) meet backwards of chunk 2 (−2), then
  // chunk 1's forwards (+3) chunk 1's backwards (−3): peak 39 after forward
  // 20, not 13 · 2.5 = 32.5.
  CHECK(InterleavedHeldLayers(split, 4, 8, 3, false) == 39.0);
  // m = p with full warm-up: every chunk forward first, all m·L layers.
  CHECK(InterleavedHeldLayers(split, 4, 4, 0, true) == 40.0);
  CHECK(InterleavedHeldLayers(split, 4, 4, 3, true) == 40.0);
}

TEST_CASE("interleaved split chunks: whole chunks hold the closed form", "[cost_model][interleaved]") {
  for (int pp : {2, 4, 8}) {
    for (int mult : {1, 2, 3}) {
      for (int v : {2, 3, 4}) {
        for (int per : {1, 2, 3}) {
          for (bool full : {false, true}) {
            const int m = pp * mult, L = per * v;
            for (int s = 0; s < pp; ++s) {
              INFO(pp << " " << m << " " << v << " " << L << " " << s << " " << full);
              CHECK(InterleavedHeldLayers(ChunkLayers(L, v), pp, m, s, full) / L ==
                    InterleavedMicroBatchesInFlight(pp, m, v, s, full));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("interleaved split chunks: the held layers lie between whole chunks of the floor and the ceiling",
          "[cost_model][interleaved]") {
  // As many chunks in flight as with whole chunks, each of ⌊L/v⌋ or ⌈L/v⌉
  // layers: between the whole-chunk stages of v·⌊L/v⌋ and v·⌈L/v⌉ layers,
  // and above the L/v-a-chunk count where the heavier chunks lead.
  for (int pp : {2, 4, 8}) {
    for (int m : {pp, 2 * pp, 4 * pp}) {
      for (int v : {2, 3, 4, 5}) {
        for (int L : {v + 1, 2 * v + 1, 3 * v - 1}) {
          const int lo = L / v, hi = lo + 1;
          for (int s = 0; s < pp; ++s) {
            INFO(pp << " " << m << " " << v << " " << L << " " << s);
            const double held = InterleavedHeldLayers(ChunkLayers(L, v), pp, m, s, false);
            CHECK(held >= InterleavedHeldLayers(ChunkLayers(lo * v, v), pp, m, s, false));
            CHECK(held <= InterleavedHeldLayers(ChunkLayers(hi * v, v), pp, m, s, false));
            CHECK(held >= InterleavedMicroBatchesInFlight(pp, m, v, s, false) * L - 1e-9 * L);
            CHECK(held <= static_cast<double>(m) * L);
          }
        }
      }
    }
  }
}

TEST_CASE("interleaved split chunks: steady transfers hide under the chunks they run beside",
          "[cost_model][interleaved]") {
  // p 4, m 8, v 4, stage 0: 18 warm-up forwards, 14 steady iterations. j's
  // forward transfer beside backward j (chunk 3, 3, 3, 3, 2, …), its
  // backward transfer beside forward 19 + j (chunk 0, 1 ×4, 2 ×4, 3 ×4; the
  // last iteration's beside forward 31, chunk 3).
  const std::vector<int> pairs = InterleavedSteadyPairs(4, 8, 4, 0, false);
  const auto at = [&](int b, int f) { return pairs[b * 4 + f]; };
  CHECK(std::accumulate(pairs.begin(), pairs.end(), 0) == 14);
  CHECK(at(3, 0) == 1);
  CHECK(at(3, 1) == 3);
  CHECK(at(2, 1) == 1);
  CHECK(at(2, 2) == 3);
  CHECK(at(1, 2) == 1);
  CHECK(at(1, 3) == 3);
  CHECK(at(0, 3) == 2);

  // Passes of 3, 3, 2, 2 units (1 s a layer, forward as backward) and a
  // 2.5 s transfer: each iteration exposes 0.5 s beside every 2-layer chunk.
  // Backwards of chunks 3 and 2 (8 iterations) and forwards of chunks 2 and
  // 3 (9): 17 · 0.5 = 8.5 s, with the warm-up's 2 · 18 · 2.5 = 90 s.
  std::vector<OverlapUnit> f, b;
  for (int n : ChunkLayers(10, 4)) {
    f.push_back(OverlapUnit{static_cast<double>(n)});
    b.push_back(OverlapUnit{static_cast<double>(n)});
  }
  const P2pStep split = OverlappedP2pSplitChunks(2.5, f, b, 4, 8, 0, false, 1.0);
  CHECK_THAT(split.exposed, WithinRel(98.5, 1e-12));
  CHECK(split.interference == 0.0);
  // Equal chunks of 2.5 s hide it all (90 s); chunks all of the smallest
  // (2 s) expose 14 · 2 · 0.5 = 14 s more.
  CHECK(ExposedP2pPerStep(2.5, 2.5, 2.5, 4, 8, 4, 0, false) == 90.0);
  CHECK(ExposedP2pPerStep(2.5, 2.0, 2.0, 4, 8, 4, 0, false) == 104.0);

  // Equal chunks give the equal-chunk term, interference included.
  for (int rank : {0, 1, 3}) {
    for (bool full : {false, true}) {
      for (int m : {4, 8, 12}) {
        const OverlapUnit fu{1.7, 0, 0, 0.3}, bu{3.1, 0, 0, 0.4};
        const std::vector<OverlapUnit> fs(4, fu), bs(4, bu);
        for (double p2p : {0.5, 2.0, 4.0}) {
          INFO(rank << " " << full << " " << m << " " << p2p);
          const P2pStep a = OverlappedP2pSplitChunks(p2p, fs, bs, 4, m, rank, full, 1.3);
          const P2pStep e = OverlappedP2pPerStep(p2p, fu, bu, 4, m, 4, rank, full, 1.3);
          CHECK_THAT(a.exposed, WithinRel(e.exposed, 1e-12));
          CHECK_THAT(a.interference, WithinRel(e.interference, 1e-12));
        }
      }
    }
  }
}

}  // namespace parasim
