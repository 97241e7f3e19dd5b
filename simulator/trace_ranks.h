// Which simulated ranks a Chrome trace holds (`--trace-ranks`). A full-
// fidelity trace of every rank grows with the GPU count (0.8 GB at 2,048
// GPUs); the default keeps what one looks at: the first rank of every
// pipeline stage and the slowest rank (the least idle, as the report's
// critical rank), so a 2,048-GPU trace stays a few MB.
#pragma once

#include <string>
#include <vector>

#include "simulator/simulate.h"

namespace parasim::simulator {

// Parses "default", "all" or a list of ranks and ranges ("0,17,64-71").
// Throws InvalidInput naming `where` on anything else.
TraceRanks ParseTraceRanks(const std::string& text, const std::string& where = "--trace-ranks");

// Per simulated rank (graph rank) whether the trace keeps it. `ranks` are the
// simulation's ranks (RankResult, in graph order); `lane_of_gpu[g]` is the
// graph rank that simulates GPU g (tier B: its stage's representative, tier
// C: its TP group's lane). A listed GPU outside the job is bad input.
std::vector<char> SelectTraceRanks(const TraceRanks& request, const std::vector<RankResult>& ranks,
                                   const std::vector<int>& lane_of_gpu);

}  // namespace parasim::simulator
