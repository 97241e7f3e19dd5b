#include "facade/validation.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "planner/published_runs.h"
#include "planner/validation.h"

namespace parasim {
namespace {

FindingRow ToRow(const planner::FindingResult& r) {
  return FindingRow{r.id, r.finding, r.setup, r.published, r.band, r.predicted, r.pass, r.details, r.whole_space};
}

Table1Row ToRow(const planner::PublishedRunResult& r) {
  return Table1Row{r.run.params_b, r.run.tp, r.run.pp, r.run.gpus, r.published, r.predicted,
                   r.error,        r.feasible, r.config, r.micro_batch, r.vpp};
}

}  // namespace

bool ValidationResult::AnyFailed() const {
  return std::any_of(findings.begin(), findings.end(), [](const FindingRow& r) { return !r.pass; }) ||
         (ran_table1 && !table1_pass);
}

ValidationResult Validate(const ValidationQuery& query) {
  std::vector<std::string> only;
  for (std::string id : query.only) {
    for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!id.empty()) only.push_back(id);
  }
  const bool all = only.empty();
  const bool table1_named = std::find(only.begin(), only.end(), kTable1Id) != only.end();
  std::erase(only, std::string(kTable1Id));
  const std::vector<std::string> finding_ids = planner::FindingIds();
  for (const std::string& id : only) {
    if (std::find(finding_ids.begin(), finding_ids.end(), id) == finding_ids.end())
      throw InvalidInput("", "ValidationQuery::only", StrCat("unknown row '", id, "' (valid: F1 ... F12, ", kTable1Id, ")"));
  }
  ValidationResult out;
  out.ran_findings = all || !only.empty();
  out.ran_table1 = table1_named || (all && query.published);
  out.median_abs_error_target = planner::kTable1MedianErrorTarget;
  out.spearman_target = planner::kTable1SpearmanTarget;
  if (out.ran_findings) {
    planner::ValidationOptions o;
    o.only = only;
    o.threads = query.threads;
    o.whole_space = query.whole_space;
    for (const planner::FindingResult& r : planner::RunValidation(o)) {
      out.findings.push_back(ToRow(r));
      out.passed += r.pass ? 1 : 0;
    }
  }
  if (out.ran_table1) {
    const std::vector<planner::PublishedRunResult> rows = planner::RunMegatronTable1(query.threads);
    const planner::PublishedRunSummary s = planner::Summarize(rows);
    for (const planner::PublishedRunResult& r : rows) out.table1.push_back(ToRow(r));
    out.median_abs_error = s.median_abs_error;
    out.spearman = s.spearman;
    out.table1_pass = s.pass;
  }
  return out;
}

}  // namespace parasim
