#include "facade/simulate_command.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"
#include "cost_model/report_json.h"
#include "facade/json_value.h"
#include "planner/plot_data.h"
#include "simulator/gzip_text.h"
#include "simulator/schedule_export.h"
#include "simulator/simulate.h"
#include "simulator/trace_ranks.h"

namespace parasim {
namespace {

std::string Seconds3(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f s", s);
  return buf;
}

// The one-report table: the summary row, then where the time and memory go.
std::string DetailTable(const Report& r) {
  std::ostringstream os;
  os << ReportsToTable({r});
  os << "\ncompute by op (critical stage, per step):\n";
  for (const auto& e : r.by_op) os << "  " << e.name << std::string(18 - std::min<size_t>(17, e.name.size()), ' ')
                                   << Seconds3(e.total.si()) << '\n';
  os << "communication by dimension (total / exposed):\n";
  for (const auto& e : r.by_dimension) {
    if (e.total.si() == 0) continue;
    os << "  " << e.name << std::string(18 - std::min<size_t>(17, e.name.size()), ' ') << Seconds3(e.total.si())
       << " / " << Seconds3(e.exposed.si()) << '\n';
  }
  os << "memory per GPU (peak stage):\n";
  for (const auto& [name, bytes] : r.memory_breakdown_bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
    os << "  " << name << std::string(18 - std::min<size_t>(17, name.size()), ' ') << buf << '\n';
  }
  return os.str();
}

// The report, with each simulated rank below it (tier B or C).
Value ReportWithRanks(const Report& report, const std::vector<simulator::RankResult>& ranks) {
  Value j = JsonToValue(ReportToJsonValue(report));
  j.Set("ranks", ArrayOf(ranks, [](const simulator::RankResult& r) {
    return Value::Record({{"name", r.name},
                          {"gpu", r.gpu},
                          {"stage", r.stage},
                          {"gpus", r.gpus},
                          {"compute_s", r.compute.si()},
                          {"comm_s", r.comm.si()},
                          {"exposed_comm_s", r.exposed_comm.si()},
                          {"idle_s", r.idle.si()},
                          {"energy_j", r.energy.si()}});
  }));
  return j;
}

std::string RankTable(const std::vector<simulator::RankResult>& ranks) {
  std::string text = "per rank (compute / comm / exposed comm / idle):\n";
  for (const auto& r : ranks) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-22s %.4f / %.4f / %.4f / %.4f s\n", r.name.c_str(), r.compute.si(),
                  r.comm.si(), r.exposed_comm.si(), r.idle.si());
    text += buf;
  }
  return text;
}

}  // namespace

void CheckSimulateRequest(const SimulateRequest& q) {
  ParseParallelConfig(q.config, "--config");
  const bool simulated = q.fidelity != "analytical";
  if (!simulated && (!q.trace.empty() || !q.stragglers.empty() || !q.background.empty())) {
    throw InvalidInput("", "--fidelity", "--trace, --straggler and --background-load need --fidelity simulated or full");
  }
  if (!simulated && q.plot) {
    throw InvalidInput("", "--plot", "the per-stage timeline needs --fidelity simulated or full");
  }
}

SimulateOutput RunSimulateCommand(const SimulateRequest& q, ReportFormat format) {
  CheckSimulateRequest(q);
  const ParallelConfig cfg = ParseParallelConfig(q.config, "--config");
  const bool simulated = q.fidelity != "analytical";
  simulator::SimulationOptions options;
  options.fidelity = q.fidelity == "full" ? Fidelity::kFull : Fidelity::kSimulated;
  for (const std::string& s : q.stragglers) options.stragglers.push_back(simulator::ParseStraggler(s));
  for (const std::string& b : q.background) options.background.push_back(simulator::ParseBackgroundLoad(b));
  options.trace = !q.trace.empty();
  if (!q.trace_ranks.empty() && q.trace.empty()) throw InvalidInput("", "--trace-ranks", "needs --trace FILE");
  options.trace_ranks = simulator::ParseTraceRanks(q.trace_ranks);
  if (simulator::WantsGzip(q.trace) && !simulator::CanGzip()) simulator::GzipText("");   // says why, before simulating
  if (!q.tier_c.empty() && q.fidelity != "full") throw InvalidInput("", "--tier-c", "needs --fidelity full");
  if (!q.tier_c.empty()) {
    options.tier_c = q.tier_c == "step" ? simulator::TierCSchedule::kStep : simulator::TierCSchedule::kCoarse;
  }
  const AnalyticalEvaluator evaluator(q.spec.LoadModelSpec(), q.spec.LoadClusterSpec(), q.spec.LoadJobSpec());
  // A malformed config is bad input (exit 2); one that does not fit is a report (fits: false, exit 0).
  std::vector<Issue> issues = cfg.Validate(evaluator.model(), evaluator.job(), evaluator.cluster().TotalGpus());
  for (Issue& issue : issues) issue.file = "--config";
  if (!issues.empty()) throw InvalidInput(std::move(issues));

  SimulateOutput out;
  Report report;
  std::vector<simulator::RankResult> ranks;
  if (simulated) {
    simulator::SimulationResult result = simulator::SimulateConfig(evaluator, cfg, options);
    report = std::move(result.report);
    ranks = std::move(result.ranks);
    if (options.trace) {
      out.trace = simulator::WantsGzip(q.trace) ? simulator::GzipText(result.trace_json) : std::move(result.trace_json);
    }
  } else {
    report = evaluator.Evaluate(cfg);
  }
  if (q.export_schedule) {
    out.schedule = simulator::ScheduleJson(evaluator.BuildWorkload(cfg), evaluator.model(), evaluator.job(), report);
  }
  switch (format) {
    case ReportFormat::kJson:
      out.report = MakeReport(
          format, ranks.empty() ? JsonToValue(ReportToJsonValue(report)) : ReportWithRanks(report, ranks), "");
      break;
    case ReportFormat::kCsv: out.report = MakeReport(format, Value(), ReportsToCsv({report})); break;
    case ReportFormat::kTable:
      out.report = MakeReport(format, Value(),
                              DetailTable(report) + (q.explain ? StageMemoryText(report) : "") +
                                  (ranks.empty() ? "" : RankTable(ranks)));
      break;
  }
  if (q.plot) {
    std::vector<planner::StageBar> bars;
    for (const auto& r : ranks) bars.push_back({r.name, r.compute.si(), r.exposed_comm.si(), r.idle.si()});
    const planner::PlotSpec plot =
        planner::TimelinePlot(bars, StrCat("one step of ", evaluator.model().name, ", fidelity ", q.fidelity));
    out.plot = PlotData{plot.data, plot.script};
  }
  return out;
}

}  // namespace parasim
