#include "facade/whatif_command.h"

#include "core/error.h"
#include "core/number_format.h"
#include "facade/plan_options.h"
#include "facade/search_point_value.h"
#include "planner/plan_format.h"
#include "planner/plot_data.h"
#include "planner/study.h"
#include "planner/whatif.h"

namespace parasim {
namespace {

Value ToValue(const std::vector<planner::WhatifPoint>& points, const planner::PlanOptions& options) {
  Value j = Value::Object();
  j.Set("objective", planner::ToString(options.objective.objective));
  Value arr = Value::Array();
  for (const auto& p : points) {
    Value pj = Value::Object();
    Value setting = Value::Object();
    for (const auto& [k, v] : p.setting) setting.Set(k, v);
    pj.Set("setting", std::move(setting));
    pj.Set("gpus", p.gpus);
    SetSearchCounts(pj, p);
    SetBestPlan(pj, p);
    arr.Push(std::move(pj));
  }
  j.Set("points", std::move(arr));
  return j;
}

std::string ToTable(const std::vector<planner::Variation>& variations, const std::vector<planner::WhatifPoint>& points,
                    const planner::PlanOptions& options, const ModelSpec& model, const ClusterSpec& cluster) {
  std::vector<std::string> header;
  for (const auto& v : variations) header.push_back(v.key);
  for (const char* h : {"gpus", "tokens/s", "vs_first", "MFU%", "exposed%", "W/GPU", "tokens/J", "config"}) header.push_back(h);
  std::vector<std::vector<std::string>> rows;
  const planner::WhatifPoint* first = nullptr;
  for (const auto& p : points) {
    std::vector<std::string> row;
    for (const auto& kv : p.setting) row.push_back(kv.second);
    row.push_back(std::to_string(p.gpus));
    if (!p.feasible) {
      row.push_back("no feasible plan");
      rows.push_back(row);
      continue;
    }
    if (first == nullptr) first = &p;
    const Report& b = p.best;
    const double rel = b.tokens_per_s / first->best.tokens_per_s - 1.0;
    for (const std::string& cell :
         {FormatFixed(b.tokens_per_s, 0), std::string(rel >= 0 ? "+" : "") + FormatFixed(100 * rel, 1) + "%", FormatFixed(100 * b.mfu, 1),
          FormatFixed(100 * b.exposed_comm_fraction, 1), FormatFixed(b.power_per_gpu.si(), 0), FormatFixed(b.tokens_per_joule, 3),
          b.config.ToString()}) {
      row.push_back(cell);
    }
    rows.push_back(row);
  }
  return StrCat("what-if for ", model.name, " on ", cluster.name, ", best plan by ",
                planner::ToString(options.objective.objective), "\n\n") +
         planner::RenderTable(header, rows);
}

}  // namespace

WhatifOutput RunWhatifCommand(const WhatifRequest& f, ReportFormat format, const PlanProgress& progress) {
  const planner::PlanOptions options = ToPlanOptions(f.settings, progress);
  std::vector<planner::Variation> variations;
  for (const std::string& v : f.vary) variations.push_back(planner::ParseVariation(v));
  const ModelSpec model = f.spec.LoadModelSpec();
  const ClusterSpec cluster = f.spec.LoadClusterSpec();
  const JobSpec job = f.spec.LoadJobSpec();
  const std::vector<planner::WhatifPoint> points = planner::RunWhatif(model, cluster, job, variations, options);
  WhatifOutput out;
  if (f.plot) {
    const planner::PlotSpec plot =
        planner::WhatifPlot(variations, points, StrCat("what-if for ", model.name, " on ", cluster.name));
    out.plot = PlotData{plot.data, plot.script};
  }
  out.report = format == ReportFormat::kJson
                   ? MakeReport(format, ToValue(points, options), "")
                   : MakeReport(ReportFormat::kTable, Value(), ToTable(variations, points, options, model, cluster));
  return out;
}

WhatifOutput RunStudyCommand(const std::string& name, const PlanSettings& settings, bool plot) {
  const planner::StudySpec& study = planner::FindStudy(name);
  const std::vector<planner::StudyRunResult> results = planner::RunStudy(study, ToPlanOptions(settings));
  WhatifOutput out;
  if (plot) {
    const planner::PlotSpec p = planner::StudyPlot(study, results);
    out.plot = PlotData{p.data, p.script};
  }
  out.report = MakeReport(ReportFormat::kTable, Value(), planner::RenderStudyTable(study, results));
  return out;
}

std::vector<std::string> WhatifKeys() { return planner::WhatifKeys(); }

std::vector<std::string> StudyNames() {
  std::vector<std::string> names;
  for (const planner::StudySpec& s : planner::BuiltInStudies()) names.push_back(s.name);
  return names;
}

}  // namespace parasim
