// Built-in what-if studies (`parasim whatif --study NAME`): each is data — a
// model, a cluster, a job and the --vary lines — run by the same what-if
// engine as a user's grid. Nothing here holds a result; the studies' numbers
// are whatever the model says (README "What-if studies").
#pragma once

#include <string>
#include <vector>

#include "planner/plot_data.h"
#include "planner/whatif.h"

namespace parasim::planner {

// One what-if run of a study: the base it starts from and the grid it varies.
// The last --vary line is the picture's x axis; the others make its series.
struct StudyRun {
  std::string label;          // "llama3-70b, 2,048 GPUs"
  std::string model;          // preset name
  std::string cluster;        // preset name
  int gpus = 0;
  int64_t global_batch = 0;
  int64_t seq_len = 4096;
  std::vector<std::string> set;   // key=value applied to the base before sizing it (one value each)
  std::vector<std::string> vary;
};

struct StudySpec {
  std::string name;
  std::string question;       // what the study asks, one line
  std::string objective;      // planner objective ("throughput", "tokens-per-joule")
  std::string metric;         // plotted: "speedup" (tokens/s over the run's first point) or "tokens-per-joule"
  std::vector<StudyRun> runs;
  // Ratios over the run's first point (the hardware of today, when every grid
  // point is the same cluster size) instead of each series' first point.
  bool vs_run_start = false;
};

const std::vector<StudySpec>& BuiltInStudies();
// Throws InvalidInput naming --study (and the known names) when there is none.
const StudySpec& FindStudy(const std::string& name);

struct StudyRunResult {
  StudyRun run;
  std::vector<Variation> variations;
  std::vector<WhatifPoint> points;
};

// Every run of the study, in order; `options` gives threads and the like
// (its objective is replaced by the study's).
std::vector<StudyRunResult> RunStudy(const StudySpec& study, const PlanOptions& options);

// The table printed for a study: one row per grid point of every run.
std::string RenderStudyTable(const StudySpec& study, const std::vector<StudyRunResult>& results);

// One line per run and series over the last varied field.
PlotSpec StudyPlot(const StudySpec& study, const std::vector<StudyRunResult>& results);

}  // namespace parasim::planner
