#include "cost_model/overlap.h"

#include <algorithm>
#include <cmath>

namespace parasim {
namespace {

constexpr int kMaxDepth = 8;   // ring buffer of compute start times; deeper prefetch is clamped

bool SameUnit(const OverlapUnit& a, const OverlapUnit& b) {
  return a.compute == b.compute && a.fixed == b.fixed && a.gather == b.gather && a.reduce == b.reduce;
}

// Extra time of unit `u` when a collective runs the first `wall` seconds of
// it: those seconds cover wall / (f·K + I) of the unit (K its kernels, I its
// fixed time, evenly mixed), and each covered kernel second takes f.
double SlowedExtra(const OverlapUnit& u, double wall, double interference) {
  const double kernels = std::max(0.0, u.compute - u.fixed);
  const double slowed_unit = interference * kernels + (u.compute - kernels);
  if (wall <= 0 || kernels <= 0 || slowed_unit <= 0) return 0.0;
  return (interference - 1.0) * kernels * std::min(1.0, wall / slowed_unit);
}

bool Close(double a, double b, double scale) { return std::abs(a - b) <= 1e-12 * scale; }

// Unit access for the recurrences: a plain array, or runs (UnitRuns) whose
// identical neighbours are found per run instead of per unit.
struct ArrayUnits {
  const OverlapUnit* u;
  const OverlapUnit& operator[](int i) const { return u[i]; }
  // Last index e >= i with u[i..e] all the same unit, stopping before n.
  int RunEnd(int i, int n) const {
    int end = i;
    while (end + 1 < n && SameUnit(u[end + 1], u[i])) ++end;
    return end;
  }
  // First index b <= i with u[b..i] all the same unit.
  int RunBegin(int i) const {
    int begin = i;
    while (begin - 1 >= 0 && SameUnit(u[begin - 1], u[i])) --begin;
    return begin;
  }
};

struct RunUnits {
  const UnitRuns& r;
  const int b0, b1;   // run boundaries: [0, b0) first, [b0, b1) body, [b1, n) last
  explicit RunUnits(const UnitRuns& runs)
      : r(runs), b0(runs.has_first ? 1 : 0), b1((runs.has_first ? 1 : 0) + runs.count) {}
  const OverlapUnit& operator[](int i) const { return i < b0 ? r.first : (i < b1 ? r.body : r.last); }
  int RunEnd(int i, int n) const {
    const OverlapUnit& x = (*this)[i];
    int end = i;
    // Walk whole runs; a neighbouring run with the same values continues it.
    if (end >= b0 && end < b1) end = b1 - 1;
    while (end + 1 < n && SameUnit((*this)[end + 1], x)) {
      ++end;
      if (end >= b0 && end < b1) end = b1 - 1;
      else if (end >= b1) end = n - 1;
    }
    return end;
  }
  int RunBegin(int i) const {
    const OverlapUnit& x = (*this)[i];
    int begin = i;
    if (begin >= b0 && begin < b1) begin = b0;
    else if (begin >= b1) begin = b1;
    while (begin - 1 >= 0 && SameUnit((*this)[begin - 1], x)) {
      --begin;
      if (begin >= b0 && begin < b1) begin = b0;
      else if (begin >= b1) begin = b1;
    }
    return begin;
  }
};

// Both recurrences are max-plus linear: once the state relative to the
// compute clock repeats between two identical units, every further identical
// unit adds the same increments, so runs of identical layers are jumped over
// in O(1) (exact up to rounding).
template <class Units>
PhaseResult Forward(const Units& u, int n, int depth, double interference) {
  PhaseResult r;
  depth = std::clamp(depth, 0, kMaxDepth - 1);
  double starts[kMaxDepth] = {0};
  double t = 0, comm_free = 0;
  double prev_rel[kMaxDepth + 1] = {0}, prev_inc[4] = {0};
  bool have_prev = false;
  for (int i = 0; i < n; ++i) {
    const double t0 = t, exposed0 = r.exposed, comm0 = r.comm, inter0 = r.interference;
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
    const double extra = SlowedExtra(u[i], busy_until - cs, interference);
    r.interference += extra;
    t = cs + u[i].compute + extra;

    // Steady state over a run of identical units: jump to the run's end.
    const bool in_run = i > depth + 1 && i + 2 < n && SameUnit(u[i], u[i - 1]) && SameUnit(u[i], u[i + 1]);
    if (!in_run) {   // (and the ring of start times is not full yet before depth + 1 units)
      have_prev = false;
      continue;
    }
    double rel[kMaxDepth + 1];
    // A stream that went idle before the earliest future issue time no longer matters.
    const double earliest_issue = depth == 0 ? t : starts[(i + 1 - depth) % kMaxDepth];
    rel[0] = std::max(comm_free, earliest_issue) - t;
    for (int j = 0; j < depth; ++j) rel[j + 1] = starts[(i - j) % kMaxDepth] - t;
    const double inc[4] = {t - t0, r.exposed - exposed0, r.comm - comm0, r.interference - inter0};
    const double scale = std::max(1.0, std::abs(t));
    bool steady = have_prev;
    for (int j = 0; steady && j <= depth; ++j) steady = Close(rel[j], prev_rel[j], scale);
    for (int j = 0; steady && j < 4; ++j) steady = Close(inc[j], prev_inc[j], scale);
    if (steady) {
      // last identical unit index + 1, keeping one before a different unit
      const int end = std::max(i + 1, u.RunEnd(i + 1, n));
      const int k = end - 1 - i;   // units jumped; the unit before the run's end is simulated normally
      if (k > 0) {
        double shifted[kMaxDepth];
        for (int j = 0; j < depth; ++j) shifted[j] = starts[(i - j) % kMaxDepth] + k * inc[0];
        t += k * inc[0];
        comm_free = t + rel[0];   // equivalent: an idle stream only matters from the earliest issue on
        r.exposed += k * inc[1];
        r.comm += k * inc[2];
        r.interference += k * inc[3];
        i += k;
        for (int j = 0; j < depth; ++j) starts[(i - j) % kMaxDepth] = shifted[j];
        have_prev = false;
        continue;
      }
    }
    std::copy(rel, rel + depth + 1, prev_rel);
    std::copy(inc, inc + 4, prev_inc);
    have_prev = true;
  }
  r.time = t;
  return r;
}

template <class Units>
PhaseResult Backward(const Units& u, int n, double interference) {
  PhaseResult r;
  double t = 0, comm_free = 0, ready = 0;
  if (n > 0 && u[n - 1].gather > 0) {
    comm_free = u[n - 1].gather;
    r.comm += u[n - 1].gather;
    ready = comm_free;
  }
  double prev_rel[2] = {0}, prev_inc[4] = {0};
  bool have_prev = false;
  for (int j = n - 1; j >= 0; --j) {
    const double t0 = t, exposed0 = r.exposed, comm0 = r.comm, inter0 = r.interference;
    const double cs = std::max(t, ready);
    r.exposed += cs - t;
    ready = 0;
    if (j > 0 && u[j - 1].gather > 0) {   // zero3: prefetch the next unit's weights
      const double start = std::max(cs, comm_free);
      comm_free = start + u[j - 1].gather;
      r.comm += u[j - 1].gather;
      ready = comm_free;
    }
    const double extra = SlowedExtra(u[j], comm_free - cs, interference);
    r.interference += extra;
    t = cs + u[j].compute + extra;
    if (u[j].reduce > 0) {
      const double start = std::max(t, comm_free);
      comm_free = start + u[j].reduce;
      r.comm += u[j].reduce;
    }

    const bool in_run = j >= 3 && j + 1 < n && SameUnit(u[j], u[j + 1]) && SameUnit(u[j], u[j - 1]);
    const double rel[2] = {std::max(comm_free, t) - t, (ready > 0 ? ready : t) - t};
    const double inc[4] = {t - t0, r.exposed - exposed0, r.comm - comm0, r.interference - inter0};
    const double scale = std::max(1.0, std::abs(t));
    bool steady = in_run && have_prev;
    for (int q = 0; steady && q < 2; ++q) steady = Close(rel[q], prev_rel[q], scale);
    for (int q = 0; steady && q < 4; ++q) steady = Close(inc[q], prev_inc[q], scale);
    if (steady) {
      const int begin = std::min(j - 1, u.RunBegin(j - 1));   // first identical unit going down
      const int k = (j - 1) - (begin + 1);   // keep the run's last unit (its gather look-ahead differs)
      if (k > 0) {
        t += k * inc[0];
        comm_free = t + rel[0];
        if (ready > 0) ready = t + rel[1];
        r.exposed += k * inc[1];
        r.comm += k * inc[2];
        r.interference += k * inc[3];
        j -= k;
        have_prev = false;
        continue;
      }
    }
    prev_rel[0] = rel[0];
    prev_rel[1] = rel[1];
    std::copy(inc, inc + 4, prev_inc);
    have_prev = true;
  }
  const double tail = std::max(0.0, comm_free - t);
  r.exposed += tail;
  r.time = t + tail;
  return r;
}

}  // namespace

PhaseResult ForwardWithPrefetch(const OverlapUnit* units, int n, int depth, double interference) {
  return Forward(ArrayUnits{units}, n, depth, interference);
}
PhaseResult BackwardWithReduce(const OverlapUnit* units, int n, double interference) {
  return Backward(ArrayUnits{units}, n, interference);
}
PhaseResult ForwardWithPrefetch(const UnitRuns& units, int depth, double interference) {
  return Forward(RunUnits{units}, units.size(), depth, interference);
}
PhaseResult BackwardWithReduce(const UnitRuns& units, double interference) {
  return Backward(RunUnits{units}, units.size(), interference);
}

PhaseResult OverlapPassCollectives(const std::vector<OverlapUnit>& units, const std::vector<PassCollective>& collectives,
                                   double interference) {
  PhaseResult r;
  thread_local std::vector<double> ready;   // per unit: when the collectives it waits for are done
  ready.assign(units.size(), 0.0);
  double t = 0, comm_free = 0;
  size_t next = 0;
  // Issues every collective of issue_after `after`, in list order, at time t.
  auto issue = [&](int after) {
    for (; next < collectives.size() && collectives[next].issue_after == after; ++next) {
      const PassCollective& k = collectives[next];
      comm_free = std::max(t, comm_free) + k.seconds;
      r.comm += k.seconds;
      if (k.needed_by >= 0 && k.needed_by < static_cast<int>(units.size()))
        ready[k.needed_by] = std::max(ready[k.needed_by], comm_free);
    }
  };
  issue(-1);
  for (int i = 0; i < static_cast<int>(units.size()); ++i) {
    const double cs = std::max(t, ready[i]);
    r.exposed += cs - t;
    const double extra = SlowedExtra(units[i], comm_free - cs, interference);
    r.interference += extra;
    t = cs + units[i].compute + extra;
    issue(i);
  }
  const double tail = std::max(0.0, comm_free - t);
  r.exposed += tail;
  r.time = t + tail;
  return r;
}

P2pStep OverlappedP2pPerStep(double p2p, const OverlapUnit& f_chunk, const OverlapUnit& b_chunk, int pp, int m, int v,
                             int rank, bool full_warmup, double interference) {
  const int passes = m * v;
  const int warmup = m == pp && full_warmup ? passes : std::min(passes, 2 * (pp - rank - 1) + (v - 1) * pp);
  const int steady = passes - warmup;
  // A steady iteration: the forward's transfer beside the backward, the
  // backward's beside the next forward; each pass slowed while it runs.
  const double b_extra = SlowedExtra(b_chunk, p2p, interference);
  const double f_extra = SlowedExtra(f_chunk, p2p, interference);
  P2pStep r;
  r.exposed = 2.0 * warmup * p2p + steady * (std::max(0.0, p2p - (b_chunk.compute + b_extra)) +
                                             std::max(0.0, p2p - (f_chunk.compute + f_extra)));
  r.interference = steady * (b_extra + f_extra);
  return r;
}

double ExposedP2pPerStep(double p2p, double f_chunk, double b_chunk, int pp, int m, int v, int rank,
                         bool full_warmup) {
  return OverlappedP2pPerStep(p2p, OverlapUnit{f_chunk}, OverlapUnit{b_chunk}, pp, m, v, rank, full_warmup, 1.0)
      .exposed;
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
