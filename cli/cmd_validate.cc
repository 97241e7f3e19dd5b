// `parasim validate [--only F1,F2,T1]`: every row of the seed findings, run
// from its inputs; published vs predicted, the band, PASS or FAIL; then
// Megatron-LM's Table 1 (T1, planner/published_runs.h) with each run's error.
// The report is written whole; then exit 4 when any row failed (docs/exit-codes.md),
// so scripts tell "the model disagrees with the paper" from a crash.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/error.h"
#include "core/number_format.h"
#include "planner/published_runs.h"
#include "planner/validation.h"

namespace parasim::cli {
namespace {

struct ValidateFlags {
  std::string only;
  int threads = 0;
  bool no_whole_space = false;
  bool details = false;
  bool no_published = false;
  OutputOptions out;
};

std::vector<std::string> SplitIds(const std::string& text) {
  std::vector<std::string> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    for (char& c : item) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!item.empty()) ids.push_back(item);
  }
  return ids;
}

// The id of the Table 1 section in --only.
constexpr const char* kTable1Id = "T1";
constexpr const char* kTable1Title =
    "Megatron-LM Table 1 (Narayanan et al. 2021, A100, hardware TFLOP/s incl. full recompute)";

std::string Table1Text(const std::vector<planner::PublishedRunResult>& rows, const planner::PublishedRunSummary& s,
                       bool details) {
  char line[256];
  std::string text = StrCat(kTable1Title, "\n");
  std::snprintf(line, sizeof line, "  %7s %3s %3s %5s %10s %10s %8s %4s %4s\n", "size", "tp", "pp", "gpus",
                "published", "predicted", "error", "mbs", "vpp");
  text += line;
  for (const auto& r : rows) {
    const std::string size = FormatFixed(r.run.params_b, 1) + "B";
    if (r.feasible) {
      std::snprintf(line, sizeof line, "  %7s %3d %3d %5d %10.1f %10.1f %+7.1f%% %4d %4d\n", size.c_str(), r.run.tp,
                    r.run.pp, r.run.gpus, r.published, r.predicted, 100.0 * r.error, r.micro_batch, r.vpp);
    } else {
      std::snprintf(line, sizeof line, "  %7s %3d %3d %5d %10.1f %10s %8s   (no config fits)\n", size.c_str(),
                    r.run.tp, r.run.pp, r.run.gpus, r.published, "-", "-");
    }
    text += line;
    if (details && r.feasible) text += StrCat("        ", r.config, "\n");
  }
  text += StrCat(kTable1Id, " ", s.pass ? "PASS" : "FAIL", "  median |error| ", FormatFixed(100.0 * s.median_abs_error, 1),
                 "% (target <= ", FormatFixed(100.0 * planner::kTable1MedianErrorTarget, 0), "%), Spearman ",
                 FormatFixed(s.spearman, 2), " (target >= ", FormatFixed(planner::kTable1SpearmanTarget, 1), ")\n");
  return text;
}

nlohmann::ordered_json Table1Json(const std::vector<planner::PublishedRunResult>& rows,
                                  const planner::PublishedRunSummary& s) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    arr.push_back({{"params_b", r.run.params_b},
                   {"tp", r.run.tp},
                   {"pp", r.run.pp},
                   {"gpus", r.run.gpus},
                   {"published_tflops", r.published},
                   {"predicted_tflops", r.predicted},
                   {"error", r.error},
                   {"config", r.config}});
  }
  nlohmann::ordered_json j;
  j["source"] = "Narayanan et al. 2021, SC21, arXiv:2104.04473, Table 1";
  j["rows"] = arr;
  j["median_abs_error"] = s.median_abs_error;
  j["spearman"] = s.spearman;
  j["targets"] = {{"median_abs_error", planner::kTable1MedianErrorTarget},
                  {"spearman", planner::kTable1SpearmanTarget}};
  j["pass"] = s.pass;
  return j;
}

void ExitOnFailedRows(const std::vector<planner::FindingResult>& rows, const planner::PublishedRunSummary& table1,
                      bool ran_table1) {
  const bool finding_failed = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.pass; });
  if (finding_failed || (ran_table1 && !table1.pass)) throw ExitWith{kExitFindingFailed};
}

void RunValidateCommand(const ValidateFlags& f) {
  // --only: F ids go to the findings, T1 selects Table 1; without --only both
  // run (Table 1 unless --no-published).
  std::vector<std::string> only = SplitIds(f.only);
  const bool all = only.empty();
  const bool table1_named = std::find(only.begin(), only.end(), kTable1Id) != only.end();
  std::erase(only, std::string(kTable1Id));
  const std::vector<std::string> finding_ids = planner::FindingIds();
  for (const std::string& id : only) {
    if (std::find(finding_ids.begin(), finding_ids.end(), id) == finding_ids.end()) {
      throw InvalidInput("", "--only", StrCat("unknown row '", id, "' (valid: F1 ... F12, ", kTable1Id, ")"));
    }
  }
  const bool run_findings = all || !only.empty();
  const bool run_table1 = table1_named || (all && !f.no_published);

  std::vector<planner::FindingResult> rows;
  if (run_findings) {
    planner::ValidationOptions o;
    o.only = only;
    o.threads = f.threads;
    o.whole_space = !f.no_whole_space;
    rows = planner::RunValidation(o);
  }
  std::vector<planner::PublishedRunResult> table1;
  planner::PublishedRunSummary table1_summary;
  if (run_table1) {
    table1 = planner::RunMegatronTable1(f.threads);
    table1_summary = planner::Summarize(table1);
  }
  int passed = 0;
  for (const auto& r : rows) passed += r.pass ? 1 : 0;

  if (f.out.Parsed() == Format::kJson) {
    nlohmann::ordered_json j;
    j["source"] = "Fernandez et al., Hardware Scaling Trends and Diminishing Returns in Large-Scale Distributed Training";
    j["passed"] = passed;
    j["total"] = rows.size();
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      arr.push_back({{"id", r.id},
                     {"finding", r.finding},
                     {"setup", r.setup},
                     {"published", r.published},
                     {"band", r.band},
                     {"predicted", r.predicted},
                     {"status", r.pass ? "PASS" : "FAIL"},
                     {"details", r.details},
                     {"whole_space", r.whole_space}});
    }
    j["rows"] = arr;
    if (run_table1) j["megatron_table1"] = Table1Json(table1, table1_summary);
    WriteOutput(f.out, j.dump(2) + "\n");
    ExitOnFailedRows(rows, table1_summary, run_table1);
    return;
  }
  std::string text;
  for (const auto& r : rows) {
    text += StrCat(r.id, (r.id.size() < 3 ? "  " : " "), r.pass ? "PASS" : "FAIL", "  ", r.finding, "\n");
    text += StrCat("      set-up:    ", r.setup, "\n");
    text += StrCat("      published: ", r.published, "\n");
    text += StrCat("      band:      ", r.band, "\n");
    text += StrCat("      predicted: ", r.predicted, "\n");
    if (!r.whole_space.empty()) text += StrCat("      ", r.whole_space, "\n");
    if (f.details) {
      for (const auto& d : r.details) text += StrCat("        ", d, "\n");
    }
  }
  if (run_findings) text += StrCat("\n", passed, " of ", rows.size(), " rows pass\n");
  if (run_table1) text += StrCat(run_findings ? "\n" : "", Table1Text(table1, table1_summary, f.details));
  WriteOutput(f.out, text);
  ExitOnFailedRows(rows, table1_summary, run_table1);
}

const CommandRegistration kValidate{
    "validate",
    "Run the seed paper's findings (F1-F12) and Megatron-LM Table 1 (T1): published vs predicted, PASS/FAIL",
    [](CLI::App& cmd) {
      auto f = std::make_shared<ValidateFlags>();
      cmd.add_option("--only", f->only,
                     "Rows to run, e.g. F1,F4 or T1 (default: all twelve findings, then T1)");
      cmd.add_option("--threads", f->threads, "Planner threads (0 = hardware concurrency)")->capture_default_str();
      cmd.add_flag("--no-whole-space", f->no_whole_space,
                   "Skip the search of parasim's whole space beside the paper's");
      cmd.add_flag("--no-published", f->no_published,
                   "Skip T1, Megatron-LM Table 1 (ten published A100 runs, 1.7B-1T, hardware TFLOP/s per GPU)");
      cmd.add_flag("--details", f->details, "Print the per-point figures behind each row (T1: the chosen config)");
      AddOutputOptions(cmd, f->out, false);
      return std::function<void()>([f] { RunValidateCommand(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
