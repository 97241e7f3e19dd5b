// Pictures of study results (`--plot`): each study becomes a data table and a
// gnuplot script, both plain values. The data table is deterministic text
// (byte-identical across runs and thread counts, numbers printed with 17
// significant digits so they parse back to the JSON report's doubles); the
// picture gnuplot draws from it is not (fonts vary), so it stays outside the
// determinism rule. The script reads the table from the gnuplot variable
// `datafile`; the caller sets the terminal and the output.
#pragma once

#include <string>
#include <vector>

#include "cost_model/report.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "planner/whatif.h"

namespace parasim::planner {

struct PlotSpec {
  std::string data;     // whitespace-separated table; '#' lines are comments
  std::string script;   // gnuplot commands, no terminal or output
};

// Throughput, MFU, exposed communication and tokens/J against GPUs (feasible sizes only).
PlotSpec ScalePlot(const ScaleStudy& study, const std::string& title);
// Pareto front of throughput against cluster power; the winner marked, the top plans as dots.
PlotSpec PlanPlot(const PlanResult& result, const std::string& title);
// One varied field: a line over its values; two: a heat map; more: a line over grid points.
PlotSpec WhatifPlot(const std::vector<Variation>& variations, const std::vector<WhatifPoint>& points,
                    const std::string& title);

// One rank's step split into compute, exposed communication and idle time.
struct StageBar {
  std::string name;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double idle_s = 0;
};
// A per-stage overview of one simulated step: a horizontal bar per rank.
PlotSpec TimelinePlot(const std::vector<StageBar>& bars, const std::string& title);

// A gnuplot string literal (single-quoted, quotes doubled).
std::string GnuplotQuote(const std::string& text);

}  // namespace parasim::planner
