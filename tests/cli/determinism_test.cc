// Output is a function of the input alone: byte-identical across runs and
// thread counts; `-o -` is stdout; -o FILE appears whole or not at all.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "run_parasim.h"

using parasim_test::Parasim;
namespace fs = std::filesystem;

namespace {

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("cli: plan output is byte-identical across runs and thread counts", "[cli][determinism]") {
  const std::string args = "plan --global-batch 64 --nodes 2 --top 8";
  for (const char* format : {"table", "json"}) {
    INFO(format);
    const auto one = Parasim(args + " --threads 1 --format " + format);
    const auto two = Parasim(args + " --threads 2 --format " + format);
    const auto again = Parasim(args + " --threads 2 --format " + format);
    REQUIRE(one.code == 0);
    REQUIRE(!one.out.empty());
    CHECK(one.out == two.out);
    CHECK(two.out == again.out);
  }
}

TEST_CASE("cli: -o - writes to stdout, -o FILE writes the same bytes", "[cli][determinism]") {
  const fs::path file = fs::temp_directory_path() / ("parasim_det_" + std::to_string(::getpid()) + ".json");
  const std::string args = "plan --global-batch 64 --nodes 1 --top 2 --threads 1 --format json";
  const auto to_stdout = Parasim(args + " -o -");
  const auto to_file = Parasim(args + " -o " + file.string());
  REQUIRE(to_stdout.code == 0);
  REQUIRE(to_file.code == 0);
  CHECK(!fs::exists("-"));
  CHECK(to_stdout.out == Slurp(file));
  CHECK(!fs::exists(file.string() + ".parasim-tmp"));
  fs::remove(file);
}
