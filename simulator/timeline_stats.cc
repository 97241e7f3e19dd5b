#include "simulator/timeline_stats.h"

#include <algorithm>
#include <cstdint>

#include "core/check.h"

namespace parasim::simulator {

namespace {

struct Boundary {
  int32_t rank;
  double time_s;
  int8_t delta;    // +1 start, -1 end
  WorkKind kind;
};

double PowerOf(const PowerModel& p, int matmul, int memory, int comm) {
  if (matmul > 0) return p.matmul_W;
  if (memory > 0) return p.memory_W;
  if (comm > 0) return p.comm_W;
  return p.idle_W;
}

}  // namespace

std::vector<RankSummary> SummarizeRanks(const TaskGraph& graph, const Timeline& timeline,
                                        const PowerModel& power, double end_s,
                                        std::vector<std::vector<PowerStep>>* power_steps) {
  PARASIM_CHECK(end_s >= timeline.makespan_s, "summary must cover the whole step");
  std::vector<Boundary> bounds;
  bounds.reserve(static_cast<size_t>(graph.num_ops()) * 2);
  for (int32_t op = 0; op < graph.num_ops(); ++op) {
    int32_t act = graph.op_activity(op);
    double start = timeline.start_s[act], end = timeline.end_s[act];
    if (end <= start) continue;
    WorkKind kind = graph.core(act).kind;
    bounds.push_back({graph.op_rank(op), start, +1, kind});
    bounds.push_back({graph.op_rank(op), end, -1, kind});
  }
  std::sort(bounds.begin(), bounds.end(), [](const Boundary& a, const Boundary& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    return a.delta < b.delta;   // ends before starts at one instant
  });
  const int ranks = graph.num_ranks();
  std::vector<RankSummary> out(ranks);
  if (power_steps) power_steps->assign(ranks, {});
  size_t i = 0;
  for (int r = 0; r < ranks; ++r) {
    RankSummary& sum = out[r];
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
    while (i < bounds.size() && bounds[i].rank == r) {
      double now = bounds[i].time_s;
      advance(now);
      for (; i < bounds.size() && bounds[i].rank == r && bounds[i].time_s == now; ++i) {
        int d = bounds[i].delta;
        switch (bounds[i].kind) {
          case WorkKind::kMatmul: matmul += d; break;
          case WorkKind::kMemory: memory += d; break;
          case WorkKind::kComm: comm += d; break;
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
