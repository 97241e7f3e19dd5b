// The plot data tables: one row per drawn point, numbers that parse back to
// the study's doubles exactly, the heat map's grid shape, gnuplot quoting.
#include "planner/plot_data.h"

#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace parasim::planner {
namespace {

// The data rows (no comments, no blank lines), split on whitespace.
std::vector<std::vector<std::string>> Rows(const std::string& data) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    std::string f;
    while (fields >> f) row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

ScalePoint Point(int gpus, bool feasible, double tps, double mfu) {
  ScalePoint p;
  p.gpus = gpus;
  p.feasible = feasible;
  p.useful_tokens_per_s = tps;
  p.best.mfu = mfu;
  p.best.exposed_comm_fraction = 1.0 / 3.0;
  p.best.tokens_per_joule = 0.1 + 0.2;
  return p;
}

TEST_CASE("plot data: scale rows are the feasible sizes, numbers exact", "[planner][plot]") {
  ScaleStudy s;
  s.points = {Point(8, true, 12345.678901234567, 0.4567), Point(16, false, 0, 0), Point(32, true, 1e6 / 3, 0.41)};
  const PlotSpec p = ScalePlot(s, "t");
  const auto rows = Rows(p.data);
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[0][0]) == 8);
  CHECK(std::stod(rows[0][1]) == 12345.678901234567);
  CHECK(std::stod(rows[1][1]) == 1e6 / 3);
  CHECK(std::stod(rows[1][2]) == 0.41);
  CHECK(std::stod(rows[1][3]) == 1.0 / 3.0);
  CHECK(std::stod(rows[1][4]) == 0.1 + 0.2);
  CHECK(ScalePlot(s, "t").data == p.data);   // a value: same study, same bytes
  CHECK(p.script.find("datafile") != std::string::npos);
}

TEST_CASE("plot data: two varied fields make a heat map over the whole grid", "[planner][plot]") {
  const std::vector<Variation> v = {{"a", {"1", "2", "3"}}, {"b", {"x", "y"}}};
  std::vector<WhatifPoint> points(6);
  for (size_t k = 0; k < points.size(); ++k) {
    points[k].feasible = k != 4;
    points[k].best.tokens_per_s = 100.0 * (k + 1);
  }
  const PlotSpec p = WhatifPlot(v, points, "t");
  const auto rows = Rows(p.data);
  REQUIRE(rows.size() == 6);
  CHECK(rows[3] == std::vector<std::string>{"1", "1", "400"});   // a=2, b=y
  CHECK(rows[4] == std::vector<std::string>{"2", "0", "0"});     // no plan: drawn as 0
  CHECK(p.script.find("with image") != std::string::npos);
  // One field: a line, infeasible points left out.
  const PlotSpec line = WhatifPlot({{"a", {"1", "2", "3"}}}, {points[0], points[4], points[2]}, "t");
  CHECK(Rows(line.data).size() == 2);
}

TEST_CASE("plot data: gnuplot strings double their quotes", "[planner][plot]") {
  CHECK(GnuplotQuote("it's") == "'it''s'");
  CHECK(GnuplotQuote("a\nb") == "'ab'");
}

}  // namespace
}  // namespace parasim::planner
