// `parasim simulate`: predict one training step of one parallel config.
// Tier A (analytical) here; the simulated tiers register with --fidelity
// simulated | full when the simulator lands.
#include <cstdio>
#include <memory>
#include <sstream>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "core/error.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"

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
      AddSpecOptions(cmd, *spec, /*need_batch=*/true);
      cmd.add_option("--config", *config,
                     "Parallel config \"dp=..,tp=..,pp=..,cp=..,ep=..,mbs=..,sharding=..,recompute=..,sp=..,vpp=..,"
                     "schedule=..,order=..,prefetch=..,pp_layers=..\"")
          ->required();
      cmd.add_option("--fidelity", *fidelity, "analytical (tier A); simulated and full arrive with the simulator")
          ->capture_default_str();
      AddOutputOptions(cmd, *out);
      return std::function<void()>([spec, out, config, fidelity] {
        if (*fidelity != "analytical") {
          if (*fidelity == "simulated" || *fidelity == "full") {
            throw Error("", "--fidelity", StrCat("'", *fidelity, "' is not available yet: use analytical"));
          }
          throw Error("", "--fidelity", StrCat("'", *fidelity, "' is not one of analytical, simulated, full"));
        }
        const ParallelConfig cfg = ParseParallelConfig(*config, "--config");
        const AnalyticalEvaluator evaluator(spec->LoadModelSpec(), spec->LoadClusterSpec(), spec->LoadJobSpec());
        const Report report = evaluator.Evaluate(cfg);
        switch (out->Parsed()) {
          case Format::kJson: WriteOutput(*out, ReportToJson(report) + "\n"); break;
          case Format::kCsv: WriteOutput(*out, ReportsToCsv({report})); break;
          case Format::kTable: WriteOutput(*out, DetailTable(report)); break;
        }
      });
    }};

}  // namespace
}  // namespace parasim::cli
