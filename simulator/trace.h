// Chrome Trace Event JSON of a simulated step, as Perfetto UI and
// chrome://tracing open it: one process per rank (or per role in tier B),
// one thread per stream, a complete event ("ph":"X") per op named with its
// layer and micro-batch, collective sizes in args, and a power counter track
// ("ph":"C") per GPU. Times are microseconds. Every event carries ph, ts,
// dur, pid and tid (metadata and counter events with dur 0).
#pragma once

#include <string>
#include <vector>

#include "simulator/engine.h"
#include "simulator/task_graph.h"
#include "simulator/timeline_stats.h"

namespace parasim::simulator {

// The whole trace as one JSON object text ({"traceEvents": [...], ...}).
// `keep`, when given, has one entry per graph rank: only ranks marked
// non-zero appear (their ops, streams and power track); a collective's
// "ranks" argument still counts every participant.
std::string WriteChromeTrace(const TaskGraph& graph, const Timeline& timeline, const PowerModel& power,
                             const std::vector<char>* keep = nullptr);

}  // namespace parasim::simulator
