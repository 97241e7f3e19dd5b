#include "planner/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/number_format.h"

namespace parasim::planner {
namespace {

std::string Percent(double fraction) { return FormatFixed(100.0 * fraction, 1) + "%"; }

std::string SignedPercent(double ratio) {   // ratio - 1 as "+12.3%"
  const double p = 100.0 * (ratio - 1.0);
  return (p >= 0 ? "+" : "") + FormatFixed(p, 1) + "%";
}

std::string Ms(Seconds t) { return FormatFixed(t.si() * 1e3, 1) + " ms"; }
std::string Gb(Bytes b) { return FormatFixed(b.si() / 1e9, 1) + " GB"; }

// One comparison line: what the winner gains, then where the step time goes.
std::vector<std::string> Compare(const Report& w, const Report& o, const char* label, Objective objective) {
  std::vector<std::string> lines;
  const double speed = o.tokens_per_s > 0 ? w.tokens_per_s / o.tokens_per_s : 1.0;
  const double energy = o.tokens_per_joule > 0 ? w.tokens_per_joule / o.tokens_per_joule : 1.0;
  lines.push_back(StrCat("vs ", label, " [", ShortConfig(o.config), "]: throughput ", SignedPercent(speed),
                         ", tokens/J ", SignedPercent(energy), ", step ", Ms(w.step_time), " vs ", Ms(o.step_time)));
  // Step time differences by part.
  struct Part {
    const char* name;
    double delta_s;
  };
  const Part parts[] = {
      {"exposed comm", (w.exposed_comm - o.exposed_comm).si()},
      {"pipeline bubble", (w.bubble - o.bubble).si()},
      {"compute", (w.compute - o.compute).si()},
  };
  lines.push_back(StrCat("    exposed comm ", Ms(w.exposed_comm), " vs ", Ms(o.exposed_comm), " (",
                         Percent(w.exposed_comm_fraction), " vs ", Percent(o.exposed_comm_fraction), " of step); bubble ",
                         Ms(w.bubble), " vs ", Ms(o.bubble), "; compute ", Ms(w.compute), " vs ", Ms(o.compute),
                         " at ", Percent(KernelEfficiency(w)), " vs ", Percent(KernelEfficiency(o)),
                         " of peak; memory ", Gb(w.memory_per_gpu), " vs ", Gb(o.memory_per_gpu)));
  // Where the winner gains step time and where it pays, largest first.
  std::vector<Part> gains, losses;
  for (const Part& p : parts) {
    if (p.delta_s < -1e-6) gains.push_back(p);
    if (p.delta_s > 1e-6) losses.push_back(p);
  }
  auto by_size = [](const Part& a, const Part& b) { return std::fabs(a.delta_s) > std::fabs(b.delta_s); };
  std::sort(gains.begin(), gains.end(), by_size);
  std::sort(losses.begin(), losses.end(), by_size);
  auto list = [](const std::vector<Part>& v) {
    std::string out;
    for (const Part& p : v) {
      out += StrCat(out.empty() ? "" : ", ", p.name, " ", p.delta_s < 0 ? "-" : "+", Ms(Seconds(std::fabs(p.delta_s))));
    }
    return out;
  };
  std::string why;
  if (gains.empty() && losses.empty()) why = "same step-time parts";
  if (!gains.empty()) why = "gains on " + list(gains);
  if (!losses.empty()) why += StrCat(why.empty() ? "" : "; ", "pays ", list(losses));
  if (objective == Objective::kTokensPerJoule) {
    why += StrCat("; power ", FormatFixed(w.power_per_gpu.si(), 0), " W vs ", FormatFixed(o.power_per_gpu.si(), 0), " W per GPU");
  }
  lines.push_back("    step time: " + why);
  return lines;
}

}  // namespace

double KernelEfficiency(const Report& r) {
  // hfu = hardware FLOPs / (step time × peak); over compute time only it is the kernels' efficiency.
  if (r.compute.si() <= 0) return 0;
  return r.hfu * (r.step_time / r.compute);
}

std::string ShortConfig(const ParallelConfig& c) {
  std::string s = StrCat("dp=", c.dp, ",tp=", c.tp, ",pp=", c.pp);
  if (c.cp > 1) s += StrCat(",cp=", c.cp);
  if (c.cp > 1 && c.cp_comm != CpComm::kP2p) s += StrCat(",cp_comm=", ToString(c.cp_comm));
  if (c.cp > 1 && c.cp_comm == CpComm::kA2aP2p) s += StrCat(",cp_a2a_size=", c.cp_a2a_size);
  if (c.ep > 1) s += StrCat(",ep=", c.ep);
  s += StrCat(",mbs=", c.micro_batch, ",", c.sharding == ShardingMode::kHsdp ? StrCat("hsdp:", c.hsdp_group)
                                                                               : std::string(ToString(c.sharding)));
  if (c.recompute != RecomputeMode::kNone) s += StrCat(",recompute=", ToString(c.recompute));
  if (c.tp > 1) s += c.sequence_parallel ? ",sp=on" : ",sp=off";
  if (c.pp > 1) {
    s += StrCat(",", ToString(c.schedule));
    if (c.vpp > 1) s += StrCat(",vpp=", c.vpp);
  }
  return s;
}

std::vector<std::string> ExplainPlan(const Report& winner, const Report* runner_up, const Report* baseline,
                                     Objective objective) {
  std::vector<std::string> lines;
  lines.push_back(StrCat("winner [", ShortConfig(winner.config), "]: ", FormatFixed(winner.tokens_per_s, 0), " tokens/s, ",
                         FormatFixed(winner.tokens_per_joule, 2), " tokens/J, MFU ", Percent(winner.mfu), ", exposed comm ",
                         Percent(winner.exposed_comm_fraction), " of step, memory ", Gb(winner.memory_per_gpu),
                         " per GPU"));
  if (runner_up != nullptr) {
    for (auto& l : Compare(winner, *runner_up, "runner-up", objective)) lines.push_back(std::move(l));
  }
  if (baseline != nullptr) {
    if (baseline->config.ToString() == winner.config.ToString()) {
      lines.push_back("the winner is the pure-FSDP baseline itself");
    } else {
      for (auto& l : Compare(winner, *baseline, "pure FSDP", objective)) lines.push_back(std::move(l));
    }
  } else {
    lines.push_back("pure FSDP (tp=pp=cp=1, zero2) does not fit or was not searched");
  }
  return lines;
}

}  // namespace parasim::planner
