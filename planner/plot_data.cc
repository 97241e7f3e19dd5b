// Data tables and gnuplot scripts for `--plot` (see plot_data.h).
#include "planner/plot_data.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/number_format.h"

namespace parasim::planner {
namespace {

// 17 significant digits: parses back to the same double the JSON report holds.
std::string Num(double v) { return FormatSignificant(v, 17); }

// A data-file string column: double-quoted, inner double quotes made single.
std::string Label(std::string text) {
  for (char& c : text)
    if (c == '"') c = '\'';
  return "\"" + text + "\"";
}

std::string Header(const std::string& title) {
  return "set title " + GnuplotQuote(title) + " noenhanced\nset grid\nset key noenhanced\n";
}

}  // namespace

std::string GnuplotQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\n') continue;
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

PlotSpec ScalePlot(const ScaleStudy& study, const std::string& title) {
  PlotSpec p;
  p.data = "# gpus useful_tokens_per_s mfu exposed_comm_fraction tokens_per_joule\n";
  for (const ScalePoint& pt : study.points) {
    if (!pt.feasible) continue;
    p.data += Num(pt.gpus) + " " + Num(pt.useful_tokens_per_s) + " " + Num(pt.best.mfu) + " " +
              Num(pt.best.exposed_comm_fraction) + " " + Num(pt.best.tokens_per_joule) + "\n";
  }
  p.script = "set multiplot layout 2,2 title " + GnuplotQuote(title) + " noenhanced\n"
             "set grid\nset logscale x 2\nset xlabel 'GPUs'\nunset key\n"
             "set ylabel 'tokens/s'\nplot datafile using 1:2 with linespoints pt 7\n"
             "set ylabel 'MFU (%)'\nplot datafile using 1:($3*100) with linespoints pt 7\n"
             "set ylabel 'exposed communication (%)'\nplot datafile using 1:($4*100) with linespoints pt 7\n"
             "set ylabel 'tokens/J'\nplot datafile using 1:5 with linespoints pt 7\n"
             "unset multiplot\n";
  return p;
}

PlotSpec PlanPlot(const PlanResult& result, const std::string& title) {
  PlotSpec p;
  const auto row = [&](const Report& r) {
    return Num(r.power_per_gpu.si() * result.gpus / 1e3) + " " + Num(r.tokens_per_s) + " " +
           Label(r.config.ToString()) + "\n";
  };
  // Three blocks (gnuplot `index`): the Pareto front, the winner, the top plans.
  p.data = "# cluster_power_kw tokens_per_s config\n# index 0: Pareto front\n";
  for (const Report& r : result.pareto) p.data += row(r);
  p.data += "\n\n# index 1: winner\n";
  if (!result.plans.empty()) p.data += row(result.plans.front());
  p.data += "\n\n# index 2: top plans\n";
  for (const Report& r : result.plans) p.data += row(r);
  p.script = Header(title) +
             "set xlabel 'cluster power (kW)'\nset ylabel 'tokens/s'\nset key bottom right\n"
             "plot datafile index 2 using 1:2 with points pt 6 lc rgb 'gray60' title 'top plans', \\\n"
             "     datafile index 0 using 1:2 with linespoints pt 7 lc rgb 'blue' title 'Pareto front', \\\n"
             "     datafile index 1 using 1:2 with points pt 5 ps 2 lc rgb 'red' title 'winner'\n";
  return p;
}

namespace {

std::string Tics(const std::string& axis, const std::vector<std::string>& labels) {
  std::string out = "set " + axis + " (";
  for (size_t i = 0; i < labels.size(); ++i) out += (i ? ", " : "") + GnuplotQuote(labels[i]) + " " + std::to_string(i);
  return out + ")\n";
}

PlotSpec WhatifHeatMap(const std::vector<Variation>& v, const std::vector<WhatifPoint>& points,
                       const std::string& title) {
  PlotSpec p;
  p.data = "# i(" + v[0].key + ") j(" + v[1].key + ") tokens_per_s (0 = no feasible plan)\n";
  const size_t n1 = v[1].values.size();
  for (size_t k = 0; k < points.size(); ++k) {
    const WhatifPoint& pt = points[k];
    p.data += Num(k / n1) + " " + Num(k % n1) + " " + Num(pt.feasible ? pt.best.tokens_per_s : 0.0) + "\n";
    if (k % n1 == n1 - 1) p.data += "\n";
  }
  p.script = Header(title) + "set xlabel " + GnuplotQuote(v[0].key) + " noenhanced\nset ylabel " +
             GnuplotQuote(v[1].key) + " noenhanced\n" + Tics("xtics", v[0].values) + Tics("ytics", v[1].values) +
             "unset grid\nset cblabel 'tokens/s'\nset palette rgb 33,13,10\n"
             "plot datafile using 1:2:3 with image notitle, \\\n"
             "     datafile using 1:2:(sprintf('%.0f', $3)) with labels tc rgb 'white' notitle\n";
  return p;
}

}  // namespace

PlotSpec WhatifPlot(const std::vector<Variation>& variations, const std::vector<WhatifPoint>& points,
                    const std::string& title) {
  if (variations.empty()) throw Error("whatif plot: no varied field");
  if (variations.size() == 2) return WhatifHeatMap(variations, points, title);
  PlotSpec p;
  std::vector<std::string> labels;
  std::string xlabel;
  for (const Variation& v : variations) xlabel += (xlabel.empty() ? "" : ", ") + v.key;
  p.data = "# point tokens_per_s mfu tokens_per_joule setting\n";
  for (size_t k = 0; k < points.size(); ++k) {
    const WhatifPoint& pt = points[k];
    std::string setting;
    for (const auto& kv : pt.setting) setting += (setting.empty() ? "" : " ") + kv.second;
    labels.push_back(setting);
    if (!pt.feasible) continue;   // no point drawn where no plan fits
    p.data += Num(k) + " " + Num(pt.best.tokens_per_s) + " " + Num(pt.best.mfu) + " " +
              Num(pt.best.tokens_per_joule) + " " + Label(setting) + "\n";
  }
  p.script = Header(title) + "set xlabel " + GnuplotQuote(xlabel) + " noenhanced\n" + Tics("xtics", labels) +
             "set xrange [-0.5:" + std::to_string(points.size()) + "-0.5]\nset ylabel 'tokens/s'\n"
             "set y2label 'MFU (%)'\nset y2tics\nset ytics nomirror\nset key top left\n"
             "plot datafile using 1:2 with linespoints pt 7 title 'tokens/s', \\\n"
             "     datafile using 1:($3*100) axes x1y2 with linespoints pt 5 title 'MFU (%)'\n";
  return p;
}

PlotSpec TimelinePlot(const std::vector<StageBar>& bars, const std::string& title) {
  PlotSpec p;
  p.data = "# row compute_s exposed_comm_s idle_s name\n";
  for (size_t k = 0; k < bars.size(); ++k) {
    const StageBar& b = bars[k];
    p.data += Num(k) + " " + Num(b.compute_s) + " " + Num(b.exposed_comm_s) + " " + Num(b.idle_s) + " " +
              Label(b.name) + "\n";
  }
  // Each rank's step laid end to end: compute, then exposed communication, then idle.
  p.script = Header(title) +
             "set xlabel 'time in step (s)'\nset yrange [-0.6:" + std::to_string(bars.size()) +
             "-0.4] reverse\nset style fill solid 0.8 border -1\nset key outside bottom horizontal\n"
             "plot datafile using ($2/2):1:($2/2):(0.35):ytic(5) with boxxyerror lc rgb '#4477aa' title 'compute', \\\n"
             "     datafile using ($2+$3/2):1:($3/2):(0.35) with boxxyerror lc rgb '#ee6677' title 'exposed comm', \\\n"
             "     datafile using ($2+$3+$4/2):1:($4/2):(0.35) with boxxyerror lc rgb '#bbbbbb' title 'idle'\n";
  return p;
}

}  // namespace parasim::planner
