#include "planner/study.h"

#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/loaders.h"
#include "core/number_format.h"
#include "planner/plan_format.h"
#include "planner/scaling.h"

namespace parasim::planner {
namespace {

// 17 significant digits: parses back to the same double the JSON report holds.
std::string Num(double v) { return FormatSignificant(v, 17); }

// The run's base: the cluster preset with the run's fixed settings, sized.
void BaseSpecs(const StudyRun& run, ClusterSpec& cluster, JobSpec& job) {
  cluster = LoadCluster(run.cluster);
  job.global_batch = run.global_batch;
  job.seq_len = run.seq_len;
  for (const std::string& line : run.set) {
    const Variation v = ParseVariation(line, "study set");
    if (v.values.size() != 1) throw InternalError(StrCat("study set line '", line, "' must have one value"));
    ApplyVariation(cluster, job, v.key, v.values.front());
  }
  if (run.gpus > 0) cluster = ResizeCluster(cluster, run.gpus);
}

// The grid points of one series: all but the last variation fixed.
size_t SeriesLength(const StudyRunResult& r) { return r.variations.back().values.size(); }

// The point a ratio is taken over: the series' first, or the run's.
const WhatifPoint& RatioBase(const StudySpec& study, const StudyRunResult& r, size_t k) {
  return study.vs_run_start ? r.points.front() : r.points[k - k % SeriesLength(r)];
}

std::string SeriesLabel(const StudyRunResult& r, size_t series) {
  const WhatifPoint& first = r.points[series * SeriesLength(r)];
  std::string label = r.run.label;
  for (size_t k = 0; k + 1 < first.setting.size(); ++k) label += ", " + first.setting[k].first + "=" + first.setting[k].second;
  return label;
}

}  // namespace

std::vector<StudyRunResult> RunStudy(const StudySpec& study, const PlanOptions& options) {
  PlanOptions o = options;
  o.objective.objective = ParseObjective(study.objective, StrCat("study ", study.name));
  std::vector<StudyRunResult> out;
  for (const StudyRun& run : study.runs) {
    StudyRunResult r;
    r.run = run;
    ClusterSpec cluster;
    JobSpec job;
    BaseSpecs(run, cluster, job);
    for (const std::string& line : run.vary) r.variations.push_back(ParseVariation(line, StrCat("study ", study.name)));
    r.points = RunWhatif(LoadModel(run.model), cluster, job, r.variations, o);
    out.push_back(std::move(r));
  }
  return out;
}

std::string RenderStudyTable(const StudySpec& study, const std::vector<StudyRunResult>& results) {
  std::string out = StrCat("study ", study.name, ": ", study.question, "\nbest plan at each point by ", study.objective,
                           study.vs_run_start ? "; vs_first: tokens/s over the run's first point\n"
                                              : "; vs_first: tokens/s over the series' first point\n");
  for (const StudyRunResult& r : results) {
    std::vector<std::string> header;
    for (const Variation& v : r.variations) header.push_back(v.key);
    for (const char* h : {"gpus", "tokens/s", "vs_first", "MFU%", "exposed%", "W/GPU", "tokens/J", "config"}) header.push_back(h);
    std::vector<std::vector<std::string>> rows;
    for (size_t k = 0; k < r.points.size(); ++k) {
      const WhatifPoint& p = r.points[k];
      const WhatifPoint& base = RatioBase(study, r, k);
      std::vector<std::string> row;
      for (const auto& kv : p.setting) row.push_back(kv.second);
      row.push_back(std::to_string(p.gpus));
      if (!p.feasible) {
        row.push_back("no feasible plan");
      } else {
        const Report& b = p.best;
        const std::string rel = base.feasible ? FormatFixed(b.tokens_per_s / base.best.tokens_per_s, 3) + "x" : "-";
        for (const std::string& cell : {FormatFixed(b.tokens_per_s, 0), rel, FormatFixed(100 * b.mfu, 1),
                                        FormatFixed(100 * b.exposed_comm_fraction, 1), FormatFixed(b.power_per_gpu.si(), 0),
                                        FormatFixed(b.tokens_per_joule, 3), b.config.ToString()}) {
          row.push_back(cell);
        }
      }
      rows.push_back(std::move(row));
    }
    out += StrCat("\n", r.run.label, " (", r.run.model, " on ", r.run.cluster, ", global batch ", r.run.global_batch, " x ",
                  r.run.seq_len, ")\n") +
           RenderTable(header, rows);
  }
  return out;
}

PlotSpec StudyPlot(const StudySpec& study, const std::vector<StudyRunResult>& results) {
  PlotSpec p;
  // Ratios over the series' (or the run's) first point, so runs of different sizes share an axis.
  const bool energy = study.metric == "tokens-per-joule";
  p.data = StrCat("# study ", study.name, ": one block per series; columns: x_index speedup tokens_per_joule_gain ",
                  "tokens_per_s tokens_per_joule x_value\n");
  std::string plot, xlabel, tics;
  int block = 0;
  for (const StudyRunResult& r : results) {
    const size_t n = SeriesLength(r);
    xlabel = r.variations.back().key;
    tics.clear();
    for (size_t i = 0; i < n; ++i) {
      tics += StrCat(tics.empty() ? "" : ", ", GnuplotQuote(r.variations.back().values[i]), " ", i);
    }
    for (size_t s = 0; s < r.points.size() / n; ++s) {
      const WhatifPoint& base = RatioBase(study, r, s * n);
      p.data += StrCat("# ", SeriesLabel(r, s), "\n");
      for (size_t i = 0; i < n; ++i) {
        const WhatifPoint& pt = r.points[s * n + i];
        if (!pt.feasible || !base.feasible) continue;   // no point where no plan fits
        p.data += StrCat(i, " ", Num(pt.best.tokens_per_s / base.best.tokens_per_s), " ",
                         Num(pt.best.tokens_per_joule / base.best.tokens_per_joule), " ", Num(pt.best.tokens_per_s), " ",
                         Num(pt.best.tokens_per_joule), " \"", r.variations.back().values[i], "\"\n");
      }
      p.data += "\n\n";
      const std::string label = GnuplotQuote(SeriesLabel(r, s) + (energy ? ": tokens/J" : ""));
      plot += StrCat(plot.empty() ? "plot " : ", \\\n     ", "datafile index ", block, " using 1:", energy ? 3 : 2,
                     " with linespoints lw 2 pt 7 lc ", block + 1, " title ", label);
      if (energy) {
        plot += StrCat(", \\\n     datafile index ", block, " using 1:2 with linespoints dt 2 pt 6 lc ", block + 1,
                       " title ", GnuplotQuote(SeriesLabel(r, s) + ": tokens/s"));
      }
      ++block;
    }
  }
  p.script = StrCat("set title ", GnuplotQuote(StrCat(study.name, ": ", study.question)),
                    " noenhanced font ',10'\nset grid\nset key noenhanced below vertical font ',9'\n",
                    "set xlabel ", GnuplotQuote(xlabel), " noenhanced\nset xtics (", tics, ")\nset offsets 0.2, 0.2, 0, 0\n",
                    "set ylabel ", energy ? "'over the first point (solid: tokens/J, dashed: tokens/s)'"
                                         : study.vs_run_start ? "'tokens/s over the run''s first point'"
                                                              : "'tokens/s over the series'' first point'",
                    "\n", plot, "\n");
  return p;
}

}  // namespace parasim::planner
