// `parasim validate [--only F1,F2]`: every row of the seed findings, run from
// its inputs; published vs predicted, the band, PASS or FAIL. Exit code 0
// even when rows fail: the report is the result.
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "planner/validation.h"

namespace parasim::cli {
namespace {

struct ValidateFlags {
  std::string only;
  int threads = 0;
  bool no_whole_space = false;
  bool details = false;
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

void RunValidateCommand(const ValidateFlags& f) {
  planner::ValidationOptions o;
  o.only = SplitIds(f.only);
  o.threads = f.threads;
  o.whole_space = !f.no_whole_space;
  const std::vector<planner::FindingResult> rows = planner::RunValidation(o);
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
    WriteOutput(f.out, j.dump(2) + "\n");
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
  text += StrCat("\n", passed, " of ", rows.size(), " rows pass\n");
  WriteOutput(f.out, text);
}

const CommandRegistration kValidate{
    "validate", "Run the seed paper's findings (F1-F12): published vs predicted, PASS/FAIL", [](CLI::App& cmd) {
      auto f = std::make_shared<ValidateFlags>();
      cmd.add_option("--only", f->only, "Rows to run, e.g. F1,F4 (default: all twelve)");
      cmd.add_option("--threads", f->threads, "Planner threads (0 = hardware concurrency)")->capture_default_str();
      cmd.add_flag("--no-whole-space", f->no_whole_space,
                   "Skip the search of parasim's whole space beside the paper's");
      cmd.add_flag("--details", f->details, "Print the per-point figures behind each row");
      AddOutputOptions(cmd, f->out, false);
      return std::function<void()>([f] { RunValidateCommand(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
