#include "planner/plan_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/report_format.h"

namespace parasim::planner {
namespace {

std::string Fixed(double v, int digits) { return FormatFixed(v, digits); }

}  // namespace

std::string FormatNumber(double v, int significant) { return FormatSignificant(v, significant); }

std::string RenderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      s += cells[c];
      if (c + 1 < cells.size()) s += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    return s + "\n";
  };
  std::string out = line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

namespace {

// The plan's allocator peak beside the card's usable memory (capacity less
// the stack's CUDA context and reserve, the report's fixed entries), MiB;
// "!" flags plans within 5% of it.
std::string PeakBesideUsable(const Report& p, double capacity_bytes) {
  double fixed = 0;
  for (const auto& [name, bytes] : p.memory_breakdown_bytes)
    if (name == "reserve" || name == "cuda_context") fixed += bytes;
  const double mib = 1024.0 * 1024.0;
  const double peak = p.memory_per_gpu.si() - fixed, usable = capacity_bytes - fixed;
  return StrCat(Fixed(peak / mib, 0), "/", Fixed(usable / mib, 0), peak > 0.95 * usable ? " !" : "");
}

}  // namespace

std::string PlanToTable(const PlanResult& r, const PlanExtras& extras) {
  std::string out = StrCat("objective: ", ToString(r.objective.objective), " (", ObjectiveUnit(r.objective.objective, r.objective.tokens),
                           ")  gpus: ", r.gpus, "  space: ", r.space_size, "  searched: ", r.searched, "  scored: ", r.scored,
                           "  feasible: ", r.feasible, "  ranked by: ",
                           r.plans.empty() ? "analytical" : ToString(r.plans.front().fidelity),
                           // The stack changes every prediction, and --emit alone picks one: say which.
                           extras.stack.empty() ? "" : StrCat("  stack: ", extras.stack), "\n");
  if (!r.cut_by.empty()) out += StrCat("search cut by ", r.cut_by, ": the best of what was scored\n");
  if (!r.rejected.empty()) {
    out += "rejected:";
    for (const auto& [reason, n] : r.rejected) out += StrCat("  ", reason, " ", n, ";");
    out.pop_back();
    out += "\n";
  }
  if (r.objective.goodput.mtbf_gpu_hours > 0) {
    out += StrCat("goodput: ", Fixed(100 * r.goodput.fraction, 2), "% (cluster MTBF ",
                  Fixed(r.goodput.cluster_mtbf.si() / 3600, 2), " h, checkpoint every ",
                  Fixed(r.goodput.checkpoint_interval.si() / 60, 1), " min)\n");
  }
  out += "\n";
  if (r.plans.empty()) {
    out += "no feasible plan\n";
    return out;
  }
  const bool capacity = r.gpu_capacity_bytes > 0;
  std::vector<std::string> header = {"#", "objective", "tokens/s", "tok/s/GPU", "MFU", "exposed", "bubble_ms",
                                     "mem_GB", "W/GPU", "tokens/J", "config"};
  if (capacity) header[7] = "peak/usable_MiB";
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    const Report& p = r.plans[i];
    rows.push_back({std::to_string(i + 1), FormatNumber(r.plan_values[i]), Fixed(p.tokens_per_s, 0),
                    Fixed(p.tokens_per_s_per_gpu, 0), Fixed(100 * p.mfu, 1) + "%",
                    Fixed(100 * p.exposed_comm_fraction, 1) + "%", Fixed(p.bubble.si() * 1e3, 1),
                    capacity ? PeakBesideUsable(p, r.gpu_capacity_bytes) : Fixed(p.memory_per_gpu.si() / 1e9, 1),
                    Fixed(p.power_per_gpu.si(), 0), Fixed(p.tokens_per_joule, 3), p.config.ToString()});
  }
  out += RenderTable(header, rows);
  bool any_equivalent = false;
  for (size_t i = 0; i < r.equivalents.size() && i < r.plans.size(); ++i) {
    if (r.equivalents[i].empty()) continue;
    if (!any_equivalent) out += "equivalent plans (every metric equal; shown once, differing keys):\n";
    any_equivalent = true;
    constexpr size_t kShown = 6;
    out += StrCat("  #", i + 1, " =");
    for (size_t k = 0; k < r.equivalents[i].size() && k < kShown; ++k) out += StrCat(k ? " | " : " ", r.equivalents[i][k]);
    if (r.equivalents[i].size() > kShown) out += StrCat(" (+", r.equivalents[i].size() - kShown, " more)");
    out += "\n";
  }
  if (capacity) {
    out += "peak: the allocator's peak over the step's phases; usable: the card's memory less the stack's CUDA "
           "context and reserve; ! = within 5% of usable\n";
  }
  if (!r.pareto.empty()) {
    out += "\npareto front (throughput vs tokens/J):\n";
    std::vector<std::vector<std::string>> prow;
    for (const Report& p : r.pareto) {
      prow.push_back({Fixed(p.tokens_per_s, 0), Fixed(p.tokens_per_joule, 3), p.config.ToString()});
    }
    out += RenderTable({"tokens/s", "tokens/J", "config"}, prow);
  }
  if (!extras.explanation.empty()) {
    out += "\nwhy:\n";
    for (const std::string& l : extras.explanation) out += "  " + l + "\n";
  }
  if (extras.launch != nullptr) {
    out += StrCat("\n", ToString(extras.launch->framework), " launch settings for plan #1:\n");
    if (!extras.launch->target.empty()) out += "# checked against " + extras.launch->target + "\n";
    for (const std::string& n : extras.launch->notes) out += "# " + n + "\n";
    out += extras.launch->text;
  }
  return out;
}

std::string PlanToCsv(const PlanResult& r) { return ReportsToCsv(r.plans); }

}  // namespace parasim::planner
