// `whatif --study` and `plan --uncertainty` through the executable.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_parasim.h"

using parasim_test::Parasim;
namespace fs = std::filesystem;

namespace {

const std::string kDemo = "plan --model llama2-7b --cluster dgx-h100 --nodes 4 --global-batch 64 --seq-len 4096 --top 4";

}  // namespace

TEST_CASE("cli: plan --uncertainty 0 is the plain plan; N > 0 is deterministic and says what it perturbed",
          "[cli][uncertainty]") {
  const auto plain = Parasim(kDemo);
  REQUIRE(plain.code == 0);
  CHECK(Parasim(kDemo + " --uncertainty 0").out == plain.out);
  const auto one = Parasim(kDemo + " --uncertainty 3 --threads 1 --format json");
  const auto two = Parasim(kDemo + " --uncertainty 3 --threads 2 --format json");
  REQUIRE(one.code == 0);
  CHECK(one.out == two.out);
  const nlohmann::json j = nlohmann::json::parse(one.out);
  CHECK(j["uncertainty"]["samples"] == 3);
  CHECK(j["uncertainty"]["fields_perturbed"].get<int>() == static_cast<int>(j["uncertainty"]["fields"].size()));
  CHECK(j["uncertainty"]["plans"].size() == j["plans"].size());
  const auto table = Parasim(kDemo + " --uncertainty 2");
  CHECK(table.out.rfind(plain.out, 0) == 0);   // the plan first, unchanged
  CHECK(table.out.find("fields perturbed") != std::string::npos);
  CHECK(Parasim(kDemo + " --uncertainty 2 --format csv").code == 2);
  CHECK(Parasim(kDemo + " --uncertainty -1").code == 2);
}

TEST_CASE("cli: whatif --study runs a built-in study and draws it", "[cli][study]") {
  const auto bad = Parasim("whatif --study a100-to-h10");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("a100-to-h100") != std::string::npos);
  CHECK(Parasim("whatif --global-batch 64").code == 2);   // neither --vary nor --study
  CHECK(Parasim("whatif --study power-cap --vary nodes=1,2").code == 2);
  CHECK(Parasim("whatif --study power-cap --format json").code == 2);   // a table only, said before any work
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) { WARN("gnuplot is not installed: skipped"); return; }
  const fs::path d = fs::temp_directory_path() / ("parasim_study_" + std::to_string(::getpid()));
  fs::create_directories(d);
  const auto r = Parasim("whatif --study a100-to-h100 --plot " + (d / "a.svg").string());
  CHECK(r.code == 0);
  CHECK(r.out.find("study a100-to-h100") != std::string::npos);
  std::ifstream svg(d / "a.svg");
  std::stringstream ss;
  ss << svg.rdbuf();
  CHECK(ss.str().find("<svg") != std::string::npos);
  CHECK(fs::exists(d / "a.dat"));
  fs::remove_all(d);
}
