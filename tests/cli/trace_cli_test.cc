// `simulate --trace FILE.json.gz`: the gzip stream inflates to exactly the
// bytes `--trace FILE.json` writes, and both are well-formed trace JSON.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibrate/gzip_file.h"
#include "run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;
using parasim_test::Run;

namespace {

std::string ReadBytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kSimulate =
    "simulate --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --seq-len 4096 --fidelity full "
    "--config dp=4,tp=2,pp=2,sharding=zero1 ";

}  // namespace

TEST_CASE("cli: a .json.gz trace inflates to the .json trace's bytes", "[cli][trace]") {
  if (!parasim::calibrate::GzipSupported()) {
    WARN("this build has no zlib: .json.gz is refused (exit 2), nothing to compare");
    CHECK(Parasim(kSimulate + "--trace step.json.gz").code == 2);
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("parasim_trace_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto plain = dir / "step.json";
  const auto gz = dir / "step.json.gz";
  REQUIRE(Parasim(kSimulate + "--trace " + plain.string()).code == 0);
  REQUIRE(Parasim(kSimulate + "--trace " + gz.string()).code == 0);
  const std::string json = ReadBytes(plain);
  const std::string packed = ReadBytes(gz);
  REQUIRE(packed.size() > 2);
  CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);   // the gzip magic
  CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
  CHECK(packed.size() < json.size());
  CHECK(parasim::calibrate::ReadMaybeGzipFile(gz.string()) == json);
  const nlohmann::json doc = nlohmann::json::parse(json);
  CHECK(doc.at("traceEvents").size() > 0);
  // The same step compresses to the same bytes (no time or name in the header).
  REQUIRE(Parasim(kSimulate + "--trace " + gz.string()).code == 0);
  CHECK(ReadBytes(gz) == packed);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: --trace-ranks needs --trace and a rank list it can read", "[cli][trace]") {
  Run r = Parasim(kSimulate + "--trace-ranks all");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--trace-ranks") && Contains("--trace FILE"));
  r = Parasim(kSimulate + "--trace never-written.json --trace-ranks 3-1");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--trace-ranks") && Contains("backwards"));
}
