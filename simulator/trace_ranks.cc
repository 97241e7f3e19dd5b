#include "simulator/trace_ranks.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace parasim::simulator {
namespace {

int ParseRank(const std::string& text, const std::string& where) {
  size_t used = 0;
  long v = -1;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 0 || v > (1 << 24)) {
    throw InvalidInput("", where, StrCat("'", text, "' is not a rank (expected default, all, or e.g. 0,17,64-71)"));
  }
  return static_cast<int>(v);
}

}  // namespace

TraceRanks ParseTraceRanks(const std::string& text, const std::string& where) {
  TraceRanks out;
  if (text.empty() || text == "default") return out;
  if (text == "all") {
    out.kind = TraceRanks::Kind::kAll;
    return out;
  }
  out.kind = TraceRanks::Kind::kList;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.gpus.push_back(ParseRank(item, where));
      continue;
    }
    const int lo = ParseRank(item.substr(0, dash), where);
    const int hi = ParseRank(item.substr(dash + 1), where);
    if (hi < lo) throw InvalidInput("", where, StrCat("range '", item, "' runs backwards"));
    if (hi - lo > (1 << 20)) throw InvalidInput("", where, StrCat("range '", item, "' is too long"));
    for (int r = lo; r <= hi; ++r) out.gpus.push_back(r);
  }
  if (out.gpus.empty()) throw InvalidInput("", where, "give default, all, or at least one rank");
  std::sort(out.gpus.begin(), out.gpus.end());
  out.gpus.erase(std::unique(out.gpus.begin(), out.gpus.end()), out.gpus.end());
  return out;
}

std::vector<char> SelectTraceRanks(const TraceRanks& request, const std::vector<RankResult>& ranks,
                                   const std::vector<int>& lane_of_gpu) {
  const size_t n = ranks.size();
  if (request.kind == TraceRanks::Kind::kAll) return std::vector<char>(n, 1);
  std::vector<char> keep(n, 0);
  if (request.kind == TraceRanks::Kind::kList) {
    for (int gpu : request.gpus) {
      if (gpu >= static_cast<int>(lane_of_gpu.size())) {
        throw InvalidInput("", "--trace-ranks", StrCat(gpu, " is not a rank of this job (0..", lane_of_gpu.size() - 1, ")"));
      }
      keep[static_cast<size_t>(lane_of_gpu[static_cast<size_t>(gpu)])] = 1;
    }
    return keep;
  }
  // Default: the first rank of each stage, and the least idle rank (ties: lowest index).
  std::vector<int> first_of_stage;
  size_t slowest = 0;
  for (size_t r = 0; r < n; ++r) {
    const int stage = ranks[r].stage;
    if (stage >= static_cast<int>(first_of_stage.size())) first_of_stage.resize(static_cast<size_t>(stage) + 1, -1);
    if (first_of_stage[static_cast<size_t>(stage)] < 0) {
      first_of_stage[static_cast<size_t>(stage)] = static_cast<int>(r);
      keep[r] = 1;
    }
    const double busy = ranks[r].compute.si() + ranks[r].exposed_comm.si();
    if (busy > ranks[slowest].compute.si() + ranks[slowest].exposed_comm.si()) slowest = r;
  }
  if (n > 0) keep[slowest] = 1;
  return keep;
}

}  // namespace parasim::simulator
