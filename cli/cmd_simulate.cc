// `parasim simulate`: predict one training step of one parallel config, with
// tier A (analytical), tier B (simulated: one rank per pipeline stage) or
// tier C (full: every rank, flows on the topology graph), and optionally a
// Chrome trace of the simulated step.
#include <cstdio>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/plot.h"
#include "cli/spec_options.h"
#include "core/error.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"
#include "cost_model/report_json.h"
#include "planner/plot_data.h"
#include "simulator/schedule_export.h"
#include "simulator/gzip_text.h"
#include "simulator/simulate.h"
#include "simulator/trace_ranks.h"

namespace parasim::cli {
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

const CommandRegistration kSimulate{
    "simulate", "Predict one training step of one parallel config (step time, MFU, comm, memory, power)",
    [](CLI::App& cmd) {
      auto spec = std::make_shared<SpecOptions>();
      auto out = std::make_shared<OutputOptions>();
      auto config = std::make_shared<std::string>();
      auto fidelity = std::make_shared<std::string>("analytical");
      auto trace = std::make_shared<std::string>();
      auto plot = std::make_shared<std::string>();
      auto stragglers = std::make_shared<std::vector<std::string>>();
      auto background = std::make_shared<std::vector<std::string>>();
      auto tier_c = std::make_shared<std::string>();
      auto schedule = std::make_shared<std::string>();
      auto trace_ranks = std::make_shared<std::string>();
      AddSpecOptions(cmd, *spec, /*need_batch=*/true);
      cmd.add_option("--config", *config,
                     "Parallel config \"dp=..,tp=..,pp=..,cp=..,ep=..,mbs=..,sharding=..,recompute=..,sp=..,vpp=..,"
                     "schedule=..,order=..,prefetch=..,pp_layers=..\"")
          ->required();
      cmd.add_option("--fidelity", *fidelity,
                     "analytical (tier A, closed form), simulated (tier B: one rank per pipeline stage) or "
                     "full (tier C: every rank, max-min flows on the topology)")
          ->check(CLI::IsMember({"analytical", "simulated", "full"}))
          ->capture_default_str();
      cmd.add_option("--trace", *trace,
                     "Write a Chrome Trace Event JSON of the simulated step (Perfetto opens it); FILE.json.gz: gzipped");
      cmd.add_option("--trace-ranks", *trace_ranks,
                     "Ranks the trace holds: default (first rank of each pipeline stage + the slowest) | all | "
                     "a list of GPU ranks and ranges, e.g. 0,17,64-71");
      cmd.add_option("--straggler", *stragglers, "A slow GPU, e.g. \"rank=17,slowdown=1.2\" (repeatable)");
      cmd.add_option("--background-load", *background,
                     "Other traffic on a link class (tier C), e.g. \"class=leaf-spine,fraction=0.3\" (repeatable)");
      cmd.add_option("--tier-c", *tier_c,
                     "Tier C schedule: step (each collective as its NCCL step schedule; default up to 16,384 GPUs) "
                     "or coarse (one flow set per collective; default up to 65,536)")
          ->check(CLI::IsMember({"step", "coarse"}));
      cmd.add_option("--export-schedule", *schedule,
                     "Write the step's schedule as JSON for the CUDA reference step (calibrate step)");
      AddOutputOptions(cmd, *out);
      AddPlotOption(cmd, *plot);
      return std::function<void()>(
          [spec, out, config, fidelity, trace, plot, stragglers, background, tier_c, schedule, trace_ranks] {
        const ParallelConfig cfg = ParseParallelConfig(*config, "--config");
        const bool simulated = *fidelity != "analytical";
        if (!simulated && (!trace->empty() || !stragglers->empty() || !background->empty())) {
          throw InvalidInput("", "--fidelity", "--trace, --straggler and --background-load need --fidelity simulated or full");
        }
        if (!simulated && !plot->empty()) {
          throw InvalidInput("", "--plot", "the per-stage timeline needs --fidelity simulated or full");
        }
        CheckPlotRequest(*plot);
        simulator::SimulationOptions options;
        options.fidelity = *fidelity == "full" ? Fidelity::kFull : Fidelity::kSimulated;
        for (const std::string& s : *stragglers) options.stragglers.push_back(simulator::ParseStraggler(s));
        for (const std::string& b : *background) options.background.push_back(simulator::ParseBackgroundLoad(b));
        options.trace = !trace->empty();
        if (!trace_ranks->empty() && trace->empty()) throw InvalidInput("", "--trace-ranks", "needs --trace FILE");
        options.trace_ranks = simulator::ParseTraceRanks(*trace_ranks);
        if (simulator::WantsGzip(*trace) && !simulator::CanGzip()) simulator::GzipText("");   // says why, before simulating
        if (!tier_c->empty() && *fidelity != "full") throw InvalidInput("", "--tier-c", "needs --fidelity full");
        if (!tier_c->empty()) {
          options.tier_c = *tier_c == "step" ? simulator::TierCSchedule::kStep : simulator::TierCSchedule::kCoarse;
        }
        const AnalyticalEvaluator evaluator(spec->LoadModelSpec(), spec->LoadClusterSpec(), spec->LoadJobSpec());
        // A malformed config is bad input (exit 2); one that does not fit is a report (fits: false, exit 0).
        std::vector<Issue> issues = cfg.Validate(evaluator.model(), evaluator.job(), evaluator.cluster().TotalGpus());
        for (Issue& issue : issues) issue.file = "--config";
        if (!issues.empty()) throw InvalidInput(std::move(issues));
        Report report;
        std::vector<simulator::RankResult> ranks;
        if (simulated) {
          simulator::SimulationResult result = simulator::SimulateConfig(evaluator, cfg, options);
          report = std::move(result.report);
          ranks = std::move(result.ranks);
          if (options.trace) {
            OutputOptions trace_out;
            trace_out.output_file = *trace;
            WriteOutput(trace_out, simulator::WantsGzip(*trace) ? simulator::GzipText(result.trace_json)
                                                                : result.trace_json);
          }
        } else {
          report = evaluator.Evaluate(cfg);
        }
        if (!schedule->empty()) {
          OutputOptions schedule_out;
          schedule_out.output_file = *schedule;
          WriteOutput(schedule_out, simulator::ScheduleJson(evaluator.BuildWorkload(cfg), evaluator.model(),
                                                            evaluator.job(), report));
        }
        switch (out->Parsed()) {
          case Format::kJson: {
            if (ranks.empty()) {
              WriteOutput(*out, ReportToJson(report) + "\n");
              break;
            }
            nlohmann::ordered_json j = ReportToJsonValue(report);   // the report as values, not its text parsed back
            j["ranks"] = nlohmann::ordered_json::array();
            for (const auto& r : ranks) {
              j["ranks"].push_back({{"name", r.name}, {"gpu", r.gpu}, {"stage", r.stage}, {"gpus", r.gpus},
                                    {"compute_s", r.compute.si()}, {"comm_s", r.comm.si()},
                                    {"exposed_comm_s", r.exposed_comm.si()}, {"idle_s", r.idle.si()},
                                    {"energy_j", r.energy.si()}});
            }
            WriteOutput(*out, j.dump(2) + "\n");
            break;
          }
          case Format::kCsv: WriteOutput(*out, ReportsToCsv({report})); break;
          case Format::kTable: {
            std::string text = DetailTable(report);
            if (!ranks.empty()) {
              text += "per rank (compute / comm / exposed comm / idle):\n";
              for (const auto& r : ranks) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "  %-22s %.4f / %.4f / %.4f / %.4f s\n", r.name.c_str(),
                              r.compute.si(), r.comm.si(), r.exposed_comm.si(), r.idle.si());
                text += buf;
              }
            }
            WriteOutput(*out, text);
            break;
          }
        }
        if (!plot->empty()) {
          std::vector<planner::StageBar> bars;
          for (const auto& r : ranks) bars.push_back({r.name, r.compute.si(), r.exposed_comm.si(), r.idle.si()});
          WritePlot(planner::TimelinePlot(bars, StrCat("one step of ", evaluator.model().name, ", fidelity ", *fidelity)), *plot);
        }
      });
    }};

}  // namespace
}  // namespace parasim::cli
