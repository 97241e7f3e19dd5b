// `--plot`: gnuplot draws a well-formed SVG or PNG, the data file beside it
// holds the JSON report's numbers, is byte-identical across thread counts,
// and bad requests exit 2 naming --plot. Skipped (with a warning) where
// gnuplot is absent; scripts/install-deps.sh installs it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.h"

namespace {
namespace fs = std::filesystem;
using parasim_test::Parasim;

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("parasim_plot_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Well-formed XML with an <svg> root: tags nest and close, one root element.
bool IsSvgDocument(const std::string& text) {
  std::vector<std::string> open;
  std::string root;
  size_t i = 0;
  while ((i = text.find('<', i)) != std::string::npos) {
    if (text.compare(i, 4, "<!--") == 0) { i = text.find("-->", i); if (i == std::string::npos) return false; continue; }
    if (text.compare(i, 9, "<![CDATA[") == 0) { i = text.find("]]>", i); if (i == std::string::npos) return false; continue; }
    const size_t end = text.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = text.substr(i + 1, end - i - 1);
    i = end;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1, tag.find_first_of(" \t\n", 1) - 1)) return false;
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
    if (open.empty()) {
      if (!root.empty()) return false;   // a second root
      root = name;
    }
    if (tag.back() != '/') open.push_back(name);
  }
  return open.empty() && root == "svg";
}

// Numeric data rows of a plot data file.
std::vector<std::vector<double>> DataRows(const std::string& data) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<double> row;
    double v = 0;
    while (fields >> v) row.push_back(v);
    rows.push_back(row);
  }
  return rows;
}

TEST_CASE("cli: scale --plot draws an SVG whose data match the JSON report", "[cli][plot]") {
  if (!HaveGnuplot()) { WARN("gnuplot is not installed: skipped"); return; }
  const fs::path d = TempDir("scale");
  const std::string base = "scale --gpus 8,16,32 --format json ";
  const auto r = Parasim(base + "--threads 1 -o " + (d / "s.json").string() + " --plot " + (d / "s.svg").string());
  REQUIRE(r.code == 0);
  CHECK(IsSvgDocument(Slurp(d / "s.svg")));
  CHECK(fs::exists(d / "s.gp"));
  const auto json = nlohmann::json::parse(Slurp(d / "s.json"));
  const auto rows = DataRows(Slurp(d / "s.dat"));
  REQUIRE(rows.size() == json["points"].size());
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& p = json["points"][k];
    CHECK(rows[k][0] == p["gpus"].get<double>());
    CHECK(rows[k][1] == p["useful_tokens_per_s"].get<double>());
    CHECK(rows[k][2] == p["best"]["mfu"].get<double>());
    CHECK(rows[k][3] == p["best"]["exposed_comm_fraction"].get<double>());
    CHECK(rows[k][4] == p["best"]["tokens_per_joule"].get<double>());
  }
  // The data file is inside the determinism rule: same bytes with 2 threads.
  REQUIRE(Parasim(base + "--threads 2 --plot " + (d / "t.svg").string()).code == 0);
  CHECK(Slurp(d / "t.dat") == Slurp(d / "s.dat"));
  CHECK_FALSE(fs::exists(d / "s.svg.parasim-tmp"));
  fs::remove_all(d);
}

TEST_CASE("cli: plan --plot draws a PNG of the Pareto front with the winner", "[cli][plot]") {
  if (!HaveGnuplot()) { WARN("gnuplot is not installed: skipped"); return; }
  const fs::path d = TempDir("plan");
  const auto r = Parasim("plan --global-batch 64 --nodes 2 --format json -o " + (d / "p.json").string() +
                         " --plot " + (d / "p.png").string());
  REQUIRE(r.code == 0);
  const std::string png = Slurp(d / "p.png");
  REQUIRE(png.size() > 8);
  CHECK(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  const auto json = nlohmann::json::parse(Slurp(d / "p.json"));
  const auto rows = DataRows(Slurp(d / "p.dat"));
  const size_t pareto = json["pareto"].size();
  REQUIRE(rows.size() == pareto + 1 + json["plans"].size());
  const auto& winner = json["plans"][0];
  CHECK(rows[pareto][1] == winner["tokens_per_s"].get<double>());
  CHECK(rows[pareto][0] == Approx(winner["power_w_per_gpu"].get<double>() * json["gpus"].get<double>() / 1e3));
  fs::remove_all(d);
}

TEST_CASE("cli: whatif and simulate --plot draw their pictures", "[cli][plot]") {
  if (!HaveGnuplot()) { WARN("gnuplot is not installed: skipped"); return; }
  const fs::path d = TempDir("whatif");
  CHECK(Parasim("whatif --global-batch 64 --nodes 2 --vary inter_node.nic_bandwidth=200Gb/s,400Gb/s "
                "--vary seq_len=2048,4096 --plot " + (d / "w.svg").string()).code == 0);
  CHECK(IsSvgDocument(Slurp(d / "w.svg")));
  CHECK(DataRows(Slurp(d / "w.dat")).size() == 4);
  CHECK(Parasim("simulate --global-batch 16 --nodes 2 --config dp=4,tp=2,pp=2 --fidelity simulated --plot " +
                (d / "t.svg").string()).code == 0);
  CHECK(IsSvgDocument(Slurp(d / "t.svg")));
  CHECK(DataRows(Slurp(d / "t.dat")).size() == 2);   // one bar per pipeline stage
  fs::remove_all(d);
}

TEST_CASE("cli: --plot with a wrong name or no gnuplot exits 2 naming --plot", "[cli][plot]") {
  const fs::path d = TempDir("bad");
  const auto wrong = Parasim("scale --gpus 8 --plot " + (d / "s.pdf").string());
  CHECK(wrong.code == 2);
  CHECK(wrong.err.find("--plot") != std::string::npos);
  // No gnuplot on PATH: refused before the study runs, nothing written.
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  ::setenv("PATH", (d / "empty").c_str(), 1);
  const auto no_gnuplot = Parasim("scale --gpus 8 --plot " + (d / "s.svg").string());
  ::setenv("PATH", saved.c_str(), 1);
  CHECK(no_gnuplot.code == 2);
  CHECK(no_gnuplot.err.find("--plot") != std::string::npos);
  CHECK(no_gnuplot.err.find("gnuplot") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "s.dat"));
  fs::remove_all(d);
}

}  // namespace
