#include "facade/scale_command.h"

#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/number_format.h"
#include "facade/plan_options.h"
#include "facade/search_point_value.h"
#include "facade/spec_inputs.h"
#include "planner/plan_format.h"
#include "planner/plot_data.h"
#include "planner/scaling.h"

namespace parasim {
namespace {

std::vector<int> ParseGpuList(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long v = std::stol(item, &used);
      if (used != item.size() || v < 1 || v > (1 << 24)) throw std::invalid_argument(item);
      out.push_back(static_cast<int>(v));
    } catch (const std::exception&) {
      throw InvalidInput("", "--gpus", StrCat("'", item, "' is not a positive GPU count (expected a list like 8,16,32)"));
    }
  }
  if (out.empty()) throw InvalidInput("", "--gpus", "give at least one GPU count");
  return out;
}

Value ToValue(const planner::ScaleStudy& s, const planner::PlanOptions& o) {
  Value j = Value::Object();
  j.Set("mode", planner::ToString(s.mode));
  j.Set("objective", planner::ToString(o.objective.objective));
  j.Set("knee_threshold", s.knee_threshold);
  j.Set("knee_gpus", s.knee_gpus);
  Value points = Value::Array();
  for (const auto& p : s.points) {
    Value pj = Value::Object();
    pj.Set("gpus", p.gpus);
    pj.Set("global_batch", p.global_batch);
    SetSearchCounts(pj, p);
    pj.Set("goodput", p.goodput);
    pj.Set("useful_tokens_per_s", p.useful_tokens_per_s);
    pj.Set("efficiency", p.efficiency);
    pj.Set("marginal_tokens_per_s_per_added_gpu", p.marginal_tokens_per_s_per_gpu);
    pj.Set("marginal_fraction", p.marginal_fraction);
    SetBestPlan(pj, p);
    points.Push(std::move(pj));
  }
  j.Set("points", std::move(points));
  return j;
}

std::vector<std::vector<std::string>> Rows(const planner::ScaleStudy& s) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : s.points) {
    if (!p.feasible) {
      rows.push_back({std::to_string(p.gpus), std::to_string(p.global_batch), "no feasible plan"});
      continue;
    }
    const Report& b = p.best;
    rows.push_back({std::to_string(p.gpus), std::to_string(p.global_batch), FormatFixed(p.useful_tokens_per_s, 0),
                    FormatFixed(p.useful_tokens_per_s / p.gpus, 0), FormatFixed(100 * b.mfu, 1), FormatFixed(100 * b.exposed_comm_fraction, 1),
                    FormatFixed(b.power_per_gpu.si(), 0), FormatFixed(b.tokens_per_joule, 3), FormatFixed(100 * p.efficiency, 1),
                    FormatFixed(p.marginal_tokens_per_s_per_gpu, 0), FormatFixed(100 * p.marginal_fraction, 1),
                    FormatFixed(100 * p.goodput, 2), b.config.ToString()});
  }
  return rows;
}

const std::vector<std::string> kHeader = {"gpus", "global_batch", "tokens/s", "tok/s/GPU", "MFU%", "exposed%", "W/GPU",
                                          "tokens/J", "efficiency%", "marginal_tok/s/GPU", "marginal%", "goodput%",
                                          "config"};

std::string ToCsv(const planner::ScaleStudy& study) {
  std::string csv;
  for (size_t i = 0; i < kHeader.size(); ++i) csv += kHeader[i] + (i + 1 < kHeader.size() ? "," : "\n");
  for (const auto& row : Rows(study)) {
    for (size_t i = 0; i < row.size(); ++i) {
      const bool quote = row[i].find(',') != std::string::npos;
      csv += (quote ? "\"" + row[i] + "\"" : row[i]) + (i + 1 < row.size() ? "," : "\n");
    }
  }
  return csv;
}

std::string ToTable(const planner::ScaleStudy& study, const planner::PlanOptions& options, const ModelSpec& model,
                    const ClusterSpec& cluster) {
  std::string text = StrCat(planner::ToString(study.mode), " scaling of ", model.name, " on ", cluster.name,
                            ", best plan by ", planner::ToString(options.objective.objective), "\n\n");
  text += planner::RenderTable(kHeader, Rows(study));
  text += study.knee_gpus > 0
              ? StrCat("\nknee: efficiency falls below ", FormatFixed(100 * study.knee_threshold, 0), "% at ",
                       study.knee_gpus, " GPUs\n")
              : StrCat("\nno knee: efficiency stays at or above ", FormatFixed(100 * study.knee_threshold, 0), "%\n");
  return text;
}

}  // namespace

ScaleOutput RunScaleCommand(const ScaleRequest& f, ReportFormat format, const PlanProgress& progress) {
  const planner::PlanOptions options = ToPlanOptions(f.settings, progress);
  planner::ScaleOptions scale;
  scale.mode = planner::ParseScaleMode(f.mode);
  scale.local_batch = f.local_batch;
  scale.global_batch = f.global_batch;
  scale.knee_threshold = f.knee;
  SpecInputs spec;
  spec.model = f.model;
  spec.cluster = f.cluster;
  spec.seq_len = f.seq_len;
  spec.stack = f.stack;
  spec.global_batch = scale.mode == planner::ScaleMode::kStrong ? f.global_batch : f.local_batch;
  const ModelSpec model = spec.LoadModelSpec();
  const ClusterSpec cluster = spec.LoadClusterSpec();
  const JobSpec job = spec.LoadJobSpec();
  const planner::ScaleStudy study = planner::RunScaleStudy(model, cluster, job, ParseGpuList(f.gpus), scale, options);
  ScaleOutput out;
  switch (format) {
    case ReportFormat::kJson: out.report = MakeReport(format, ToValue(study, options), ""); break;
    case ReportFormat::kCsv: out.report = MakeReport(format, Value(), ToCsv(study)); break;
    case ReportFormat::kTable: out.report = MakeReport(format, Value(), ToTable(study, options, model, cluster)); break;
  }
  if (f.plot) {
    const planner::PlotSpec plot = planner::ScalePlot(
        study, StrCat(planner::ToString(study.mode), " scaling of ", model.name, " on ", cluster.name));
    out.plot = PlotData{plot.data, plot.script};
  }
  return out;
}

}  // namespace parasim
