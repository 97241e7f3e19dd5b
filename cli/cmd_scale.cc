// `parasim scale`: the best plan at each GPU count, weak or strong scaling,
// with marginal throughput per added GPU and the knee.
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/spec_options.h"
#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/report_format.h"
#include "cost_model/report_json.h"
#include "planner/plan_format.h"
#include "planner/plot_data.h"
#include "planner/scaling.h"

namespace parasim::cli {
namespace {

struct ScaleFlags {
  std::string model = "llama2-7b";
  std::string cluster = "dgx-h100";
  std::string gpus = "8,16,32,64,128,256,512,1024,2048";
  long long seq_len = 4096;
  std::string stack;
  std::string mode = "weak";
  long long local_batch = 2;
  long long global_batch = 0;
  double knee = 0.8;
  PlannerFlags planner;
  OutputOptions out;
  std::string plot;
  bool quiet = false;
};

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

std::string ToJson(const planner::ScaleStudy& s, const planner::PlanOptions& o) {
  nlohmann::ordered_json j;
  j["mode"] = planner::ToString(s.mode);
  j["objective"] = planner::ToString(o.objective.objective);
  j["knee_threshold"] = s.knee_threshold;
  j["knee_gpus"] = s.knee_gpus;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const auto& p : s.points) {
    nlohmann::ordered_json pj;
    pj["gpus"] = p.gpus;
    pj["global_batch"] = p.global_batch;
    pj["feasible"] = p.feasible;
    pj["searched"] = p.searched;
    pj["feasible_configs"] = p.feasible_configs;
    pj["goodput"] = p.goodput;
    pj["useful_tokens_per_s"] = p.useful_tokens_per_s;
    pj["efficiency"] = p.efficiency;
    pj["marginal_tokens_per_s_per_added_gpu"] = p.marginal_tokens_per_s_per_gpu;
    pj["marginal_fraction"] = p.marginal_fraction;
    if (p.feasible) {
      pj["objective_value"] = p.objective_value;
      pj["config_string"] = p.best.config.ToString();
      pj["best"] = ReportToJsonValue(p.best);
    }
    points.push_back(pj);
  }
  j["points"] = points;
  return j.dump(2) + "\n";
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

void RunScaleCommand(const ScaleFlags& f) {
  CheckPlotRequest(f.plot);
  planner::PlanOptions options = f.planner.ToOptions();
  ProgressLine progress("scale", ProgressLine::Wanted(f.quiet, f.out.Parsed() == Format::kJson), "GPU counts");
  options.sweep_progress = progress.Callback();
  planner::ScaleOptions scale;
  scale.mode = planner::ParseScaleMode(f.mode);
  scale.local_batch = f.local_batch;
  scale.global_batch = f.global_batch;
  scale.knee_threshold = f.knee;
  SpecOptions spec;
  spec.model = f.model;
  spec.cluster = f.cluster;
  spec.seq_len = f.seq_len;
  spec.stack = f.stack;
  spec.global_batch = scale.mode == planner::ScaleMode::kStrong ? f.global_batch : f.local_batch;
  const ModelSpec model = spec.LoadModelSpec();
  const ClusterSpec cluster = spec.LoadClusterSpec();
  const JobSpec job = spec.LoadJobSpec();
  const planner::ScaleStudy study =
      planner::RunScaleStudy(model, cluster, job, ParseGpuList(f.gpus), scale, options);
  switch (f.out.Parsed()) {
    case Format::kJson: WriteOutput(f.out, ToJson(study, options)); break;
    case Format::kCsv: {
      std::string csv;
      for (size_t i = 0; i < kHeader.size(); ++i) csv += kHeader[i] + (i + 1 < kHeader.size() ? "," : "\n");
      for (const auto& row : Rows(study)) {
        for (size_t i = 0; i < row.size(); ++i) {
          const bool quote = row[i].find(',') != std::string::npos;
          csv += (quote ? "\"" + row[i] + "\"" : row[i]) + (i + 1 < row.size() ? "," : "\n");
        }
      }
      WriteOutput(f.out, csv);
      break;
    }
    case Format::kTable: {
      std::string text = StrCat(planner::ToString(study.mode), " scaling of ", model.name, " on ", cluster.name,
                                ", best plan by ", planner::ToString(options.objective.objective), "\n\n");
      text += planner::RenderTable(kHeader, Rows(study));
      text += study.knee_gpus > 0
                  ? StrCat("\nknee: efficiency falls below ", FormatFixed(100 * study.knee_threshold, 0), "% at ",
                           study.knee_gpus, " GPUs\n")
                  : StrCat("\nno knee: efficiency stays at or above ", FormatFixed(100 * study.knee_threshold, 0), "%\n");
      WriteOutput(f.out, text);
      break;
    }
  }
  if (!f.plot.empty()) {
    WritePlot(planner::ScalePlot(study, StrCat(planner::ToString(study.mode), " scaling of ", model.name, " on ",
                                               cluster.name)),
              f.plot);
  }
}

const CommandRegistration kScale{
    "scale", "Best plan per GPU count (weak or strong scaling), marginal throughput per added GPU, the knee",
    [](CLI::App& cmd) {
      auto f = std::make_shared<ScaleFlags>();
      f->planner.objective = "throughput";
      cmd.add_option("--model", f->model, "Model: a preset, a YAML file or a HF config.json")->capture_default_str();
      cmd.add_option("--cluster", f->cluster, "Cluster preset or YAML file (resized to each GPU count)")
          ->capture_default_str();
      cmd.add_option("--gpus", f->gpus, "GPU counts, increasing, comma-separated")->capture_default_str();
      cmd.add_option("--seq-len", f->seq_len, "Tokens per sequence")->capture_default_str();
      cmd.add_option("--stack", f->stack, "Software stack: a preset or a stack YAML file (default: pytorch-fsdp)");
      cmd.add_option("--mode", f->mode, "weak (fixed sequences per GPU) | strong (fixed global batch)")
          ->check(CLI::IsMember({"weak", "strong"}))
          ->capture_default_str();
      cmd.add_option("--local-batch", f->local_batch, "Weak mode: sequences per GPU per step")->capture_default_str();
      cmd.add_option("--global-batch", f->global_batch, "Strong mode: sequences per step");
      cmd.add_option("--knee", f->knee, "Efficiency threshold that marks the knee (fraction)")->capture_default_str();
      AddPlannerFlags(cmd, f->planner, false);
      AddOutputOptions(cmd, f->out);
      AddPlotOption(cmd, f->plot);
      cmd.add_flag("--quiet", f->quiet, "No progress line on stderr (shown only on a terminal, after ~2 s)");
      return std::function<void()>([f] { RunScaleCommand(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
