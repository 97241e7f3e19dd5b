// Shared by the context-parallel tests: a layer's comm-plan inputs given its
// query and K/V widths, a CP config, and the bytes of its CP collectives.
#pragma once

#include <optional>

#include "core/parallel_config.h"
#include "cost_model/comm_plan.h"

namespace parasim::testing {

// `tokens` per rank, query width a·d (also the hidden size), K/V width g·d.
inline CommPlanInputs CpInputs(double tokens, double query_width, double kv_width) {
  CommPlanInputs in;
  in.tokens = tokens;
  in.hidden = query_width;
  in.query_width = query_width;
  in.kv_width = kv_width;
  return in;
}

inline ParallelConfig CpConfig(int cp, CpComm kind, int tp = 1) {
  ParallelConfig c;
  c.cp = cp;
  c.tp = tp;
  c.cp_comm = kind;
  return c;
}

// Bytes of the layer's CP collectives in `phase` (of `op` only, when given),
// each issue counted.
inline double CpBytes(const CommPlan& p, CommPhase phase, std::optional<CollectiveOp> op = std::nullopt) {
  double b = 0;
  for (const WorkloadCollective& c : p.layer)
    if (c.dim == ParallelDim::kCp && c.phase == phase && (!op || c.op == *op)) b += c.size.si() * c.count;
  return b;
}

}  // namespace parasim::testing
