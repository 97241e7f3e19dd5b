#include "simulator/timeline_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/check.h"

namespace parasim::simulator {

namespace {

double PowerOf(const PowerModel& p, int matmul, int memory, int comm) {
  if (matmul > 0) return p.matmul_W;
  if (memory > 0) return p.memory_W;
  if (comm > 0) return p.comm_W;
  return p.idle_W;
}

// The boundaries of one stream in time order: ops on a stream run one after
// another, so their starts and ends are each sorted; a stream yields its
// next start or end, whichever is earlier (ends first at a tie).
struct StreamCursor {
  int32_t op = -1;        // op whose end is pending (started), or -1
  int32_t next = -1;      // next op to start
  double end_s = 0, start_s = 0;
  WorkKind kind = WorkKind::kComm, next_kind = WorkKind::kComm;
};

}  // namespace

std::vector<RankSummary> SummarizeRanks(const TaskGraph& graph, const Timeline& timeline,
                                        const PowerModel& power, double end_s,
                                        std::vector<std::vector<PowerStep>>* power_steps) {
  PARASIM_CHECK(end_s >= timeline.makespan_s, "summary must cover the whole step");
  const int ranks = graph.num_ranks();
  std::vector<RankSummary> out(ranks);
  if (power_steps) power_steps->assign(ranks, {});
  // Streams of each rank (streams are added rank by rank, but do not rely on it).
  std::vector<std::vector<int>> rank_streams(ranks);
  for (int s = 0; s < graph.num_streams(); ++s) rank_streams[graph.stream_rank(s)].push_back(s);
  std::vector<StreamCursor> cursors;
  auto load_next = [&](StreamCursor& c) {
    // Skip ops of zero length: they change no state.
    while (c.next >= 0) {
      const int32_t act = graph.op_activity(c.next);
      if (timeline.end_s[act] > timeline.start_s[act]) {
        c.start_s = timeline.start_s[act];
        c.next_kind = graph.core(act).kind;
        return;
      }
      c.next = graph.stream_next(c.next);
    }
  };
  for (int r = 0; r < ranks; ++r) {
    RankSummary& sum = out[r];
    cursors.clear();
    for (int s : rank_streams[r]) {
      StreamCursor c;
      c.next = graph.stream_first_op(s);
      load_next(c);
      cursors.push_back(c);
    }
    int matmul = 0, memory = 0, comm = 0;
    double t = 0;
    double watts = power.idle_W;
    if (power_steps) (*power_steps)[r].push_back({0, watts});
    auto advance = [&](double to) {
      double dt = to - t;
      if (dt <= 0) return;
      bool computing = matmul + memory > 0;
      if (computing) sum.compute_s += dt;
      if (comm > 0) sum.comm_s += dt;
      if (comm > 0 && !computing) sum.exposed_comm_s += dt;
      if (!computing && comm == 0) sum.idle_s += dt;
      sum.energy_J += dt * watts;
      t = to;
    };
    auto count = [&](WorkKind kind, int d) {
      switch (kind) {
        case WorkKind::kMatmul: matmul += d; break;
        case WorkKind::kMemory: memory += d; break;
        case WorkKind::kComm: comm += d; break;
        case WorkKind::kHost: break;   // the GPU idles while the host works
      }
    };
    while (true) {
      // Earliest pending boundary over the rank's streams (ends before starts).
      double now = std::numeric_limits<double>::infinity();
      for (const StreamCursor& c : cursors) {
        if (c.op >= 0) now = std::min(now, c.end_s);
        else if (c.next >= 0) now = std::min(now, c.start_s);
      }
      if (!std::isfinite(now)) break;
      advance(now);
      for (StreamCursor& c : cursors) {
        if (c.op >= 0 && c.end_s == now) {
          count(c.kind, -1);
          c.op = -1;
          c.next = graph.stream_next(c.next);
          load_next(c);
        }
      }
      for (StreamCursor& c : cursors) {
        if (c.op < 0 && c.next >= 0 && c.start_s == now) {
          const int32_t act = graph.op_activity(c.next);
          c.op = c.next;
          c.end_s = timeline.end_s[act];
          c.kind = c.next_kind;
          count(c.kind, +1);
        }
      }
      double w = PowerOf(power, matmul, memory, comm);
      if (w != watts) {
        watts = w;
        if (power_steps) {
          auto& steps = (*power_steps)[r];
          if (steps.back().start_s == now) steps.back().watts = w;
          else steps.push_back({now, w});
        }
      }
    }
    advance(end_s);
  }
  return out;
}

}  // namespace parasim::simulator
