#include "cost_model/overlap.h"

#include <algorithm>

namespace parasim {
namespace {
constexpr int kMaxDepth = 8;   // ring buffer of compute start times; deeper prefetch is clamped
}

PhaseResult ForwardWithPrefetch(const OverlapUnit* u, int n, int depth, double interference) {
  PhaseResult r;
  depth = std::clamp(depth, 0, kMaxDepth - 1);
  double starts[kMaxDepth] = {0};
  double t = 0, comm_free = 0;
  for (int i = 0; i < n; ++i) {
    double ready = 0;
    if (u[i].gather > 0) {
      const double issue = depth == 0 ? t : (i <= depth ? 0.0 : starts[(i - depth) % kMaxDepth]);
      const double start = std::max(issue, comm_free);
      comm_free = start + u[i].gather;
      r.comm += u[i].gather;
      ready = comm_free;
    }
    const double cs = std::max(t, ready);
    r.exposed += cs - t;
    starts[i % kMaxDepth] = cs;
    // The stream stays busy with gathers already issued and the next one.
    double busy_until = comm_free;
    if (depth > 0 && i + 1 < n && u[i + 1].gather > 0) {
      const double next_issue = i + 1 <= depth ? 0.0 : starts[(i + 1 - depth) % kMaxDepth];
      busy_until = std::max(next_issue, comm_free) + u[i + 1].gather;
    }
    const double overlap = std::clamp(busy_until - cs, 0.0, u[i].compute);
    const double extra = (interference - 1.0) * overlap;
    r.interference += extra;
    t = cs + u[i].compute + extra;
  }
  r.time = t;
  return r;
}

PhaseResult BackwardWithReduce(const OverlapUnit* u, int n, double interference) {
  PhaseResult r;
  double t = 0, comm_free = 0, ready = 0;
  if (n > 0 && u[n - 1].gather > 0) {
    comm_free = u[n - 1].gather;
    r.comm += u[n - 1].gather;
    ready = comm_free;
  }
  for (int j = n - 1; j >= 0; --j) {
    const double cs = std::max(t, ready);
    r.exposed += cs - t;
    ready = 0;
    if (j > 0 && u[j - 1].gather > 0) {   // zero3: prefetch the next unit's weights
      const double start = std::max(cs, comm_free);
      comm_free = start + u[j - 1].gather;
      r.comm += u[j - 1].gather;
      ready = comm_free;
    }
    const double overlap = std::clamp(comm_free - cs, 0.0, u[j].compute);
    const double extra = (interference - 1.0) * overlap;
    r.interference += extra;
    t = cs + u[j].compute + extra;
    if (u[j].reduce > 0) {
      const double start = std::max(t, comm_free);
      comm_free = start + u[j].reduce;
      r.comm += u[j].reduce;
    }
  }
  const double tail = std::max(0.0, comm_free - t);
  r.exposed += tail;
  r.time = t + tail;
  return r;
}

double PipelineSeconds(const double* stage_times, int pp, int m, int vpp) {
  double sum = 0, worst = 0;
  for (int s = 0; s < pp; ++s) {
    sum += stage_times[s];
    worst = std::max(worst, stage_times[s]);
  }
  const double v = std::max(1, vpp);
  return static_cast<double>(m) * worst + (sum - worst) / v;
}

}  // namespace parasim
