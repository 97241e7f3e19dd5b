// `parasim validate [--only F1,F2,T1]`: every row of the seed findings, run
// from its inputs; published vs predicted, the band, PASS or FAIL; then
// Megatron-LM's Table 1 (T1) with each run's error. The library
// (facade/validation.h) runs the rows; this file parses flags and prints.
// The report is written whole; then exit 4 when any row failed (docs/exit-codes.md),
// so scripts tell "the model disagrees with the paper" from a crash.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/flag_names.h"
#include "cli/output/writers.h"
#include "facade/validation.h"

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
  for (std::string item; std::getline(ss, item, ',');) ids.push_back(item);
  return ids;
}

constexpr const char* kTable1Title =
    "Megatron-LM Table 1 (Narayanan et al. 2021, A100, hardware TFLOP/s incl. full recompute)";

std::string Table1Text(const ValidationResult& v, bool details) {
  char line[256];
  std::string text = std::string(kTable1Title) + "\n";
  std::snprintf(line, sizeof line, "  %7s %3s %3s %5s %10s %10s %8s %4s %4s\n", "size", "tp", "pp", "gpus",
                "published", "predicted", "error", "mbs", "vpp");
  text += line;
  for (const Table1Row& r : v.table1) {
    const std::string size = FormatCell(r.params_b, 1) + "B";
    if (r.feasible) {
      std::snprintf(line, sizeof line, "  %7s %3d %3d %5d %10.1f %10.1f %+7.1f%% %4d %4d\n", size.c_str(), r.tp, r.pp,
                    r.gpus, r.published_tflops, r.predicted_tflops, 100.0 * r.error, r.micro_batch, r.vpp);
    } else {
      std::snprintf(line, sizeof line, "  %7s %3d %3d %5d %10.1f %10s %8s   (no config fits)\n", size.c_str(), r.tp,
                    r.pp, r.gpus, r.published_tflops, "-", "-");
    }
    text += line;
    if (details && r.feasible) text += "        " + r.config + "\n";
  }
  std::ostringstream os;
  os << kTable1Id << " " << (v.table1_pass ? "PASS" : "FAIL") << "  median |error| "
     << FormatCell(100.0 * v.median_abs_error, 1) << "% (target <= " << FormatCell(100.0 * v.median_abs_error_target, 0)
     << "%), Spearman " << FormatCell(v.spearman, 2) << " (target >= " << FormatCell(v.spearman_target, 1) << ")\n";
  return text + os.str();
}

Value Table1Value(const ValidationResult& v) {
  const Value rows = ArrayOf(v.table1, [](const Table1Row& r) {
    return Value::Record({{"params_b", r.params_b},
                          {"tp", r.tp},
                          {"pp", r.pp},
                          {"gpus", r.gpus},
                          {"published_tflops", r.published_tflops},
                          {"predicted_tflops", r.predicted_tflops},
                          {"error", r.error},
                          {"config", r.config}});
  });
  Value j = Value::Object();
  j.Set("source", "Narayanan et al. 2021, SC21, arXiv:2104.04473, Table 1").Set("rows", rows);
  j.Set("median_abs_error", v.median_abs_error).Set("spearman", v.spearman);
  j.Set("targets",
        Value::Object().Set("median_abs_error", v.median_abs_error_target).Set("spearman", v.spearman_target));
  j.Set("pass", v.table1_pass);
  return j;
}

Value ReportValue(const ValidationResult& v) {
  Value j = Value::Object();
  j.Set("source", "Fernandez et al., Hardware Scaling Trends and Diminishing Returns in Large-Scale Distributed Training");
  j.Set("passed", v.passed).Set("total", v.findings.size());
  const Value rows = ArrayOf(v.findings, [](const FindingRow& r) {
    return Value::Record({{"id", r.id},
                          {"finding", r.finding},
                          {"setup", r.setup},
                          {"published", r.published},
                          {"band", r.band},
                          {"predicted", r.predicted},
                          {"status", r.pass ? "PASS" : "FAIL"},
                          {"details", ArrayOf(r.details, [](const std::string& d) { return Value(d); })},
                          {"whole_space", r.whole_space}});
  });
  j.Set("rows", rows);
  if (v.ran_table1) j.Set("megatron_table1", Table1Value(v));
  return j;
}

std::string ReportText(const ValidationResult& v, bool details) {
  std::string text;
  for (const FindingRow& r : v.findings) {
    text += r.id + (r.id.size() < 3 ? "  " : " ") + (r.pass ? "PASS" : "FAIL") + "  " + r.finding + "\n";
    text += "      set-up:    " + r.setup + "\n";
    text += "      published: " + r.published + "\n";
    text += "      band:      " + r.band + "\n";
    text += "      predicted: " + r.predicted + "\n";
    if (!r.whole_space.empty()) text += "      " + r.whole_space + "\n";
    if (details)
      for (const std::string& d : r.details) text += "        " + d + "\n";
  }
  if (v.ran_findings)
    text += "\n" + std::to_string(v.passed) + " of " + std::to_string(v.findings.size()) + " rows pass\n";
  if (v.ran_table1) text += (v.ran_findings ? "\n" : "") + Table1Text(v, details);
  return text;
}

void RunValidateCommand(const ValidateFlags& f) {
  ValidationQuery q;
  q.only = SplitIds(f.only);
  q.threads = f.threads;
  q.whole_space = !f.no_whole_space;
  q.published = !f.no_published;
  const ValidationResult v = WithFlagNames({{"ValidationQuery::only", "--only"}}, [&] { return Validate(q); });
  WriteOutput(f.out, f.out.Parsed() == Format::kJson ? WriteJson(ReportValue(v)) + "\n" : ReportText(v, f.details));
  if (v.AnyFailed()) throw ExitWith{kExitFindingFailed};
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
