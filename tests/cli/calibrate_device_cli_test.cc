// cli: `parasim calibrate nccl | step` without a GPU: argument checks (exit
// 2), a build without CUDA (exit 2), a CUDA build on a machine with no GPU
// (exit 3); and `simulate --export-schedule`, whose file `calibrate step`
// replays. On a machine with a GPU the tiny runs below may succeed (exit 0).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;

namespace {

std::string Src(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/" + rel; }

std::filesystem::path Temp(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("parasim_dev_" + std::to_string(::getpid()) + "_" + name);
}

#ifdef PARASIM_HAVE_CUDA
constexpr bool kCudaBuild = true;
#else
constexpr bool kCudaBuild = false;
#endif

}  // namespace

TEST_CASE("cli: calibrate nccl rejects bad arguments before looking for a GPU", "[cli]") {
  parasim_test::Run r = parasim_test::Parasim("calibrate nccl --ops all_reduce,broadcastx");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--ops") && Contains("broadcastx"));
  r = parasim_test::Parasim("calibrate nccl --groups all,pod");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--groups") && Contains("pod"));
  r = parasim_test::Parasim("calibrate nccl --gemm 8192,8192");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--gemm"));
  r = parasim_test::Parasim("calibrate nccl -n 0");
  CHECK(r.code == 2);
}

TEST_CASE("cli: calibrate nccl and step answer by build and machine", "[cli]") {
  const std::filesystem::path out = Temp("nccl.json");
  parasim_test::Run r = parasim_test::Parasim("calibrate nccl -b 8 -e 64 -w 0 -n 1 --ops all_reduce -o " + out.string());
  if (!kCudaBuild) {
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("without CUDA"));
  } else if (r.code == 0) {  // a GPU is here: the file is nccl_bench JSON that import-nccl-tests reads
    CHECK(parasim_test::Parasim("calibrate import-nccl-tests " + out.string()).code == 0);
  } else {
    CHECK(r.code == 3);
    CHECK_THAT(r.err, Contains("GPU") || Contains("missing"));
  }
  std::filesystem::remove(out);
  const std::filesystem::path step = Temp("step.json");
  r = parasim_test::Parasim("calibrate step --schedule " +
                            Src("tests/data/calibration/h100-sxm/reference-step/llama3.2-1b_mbs1_schedule.json") +
                            " --warmup 0 --steps 1 -o " + step.string());
  CHECK(r.code == (kCudaBuild ? r.code == 0 ? 0 : 3 : 2));
  std::filesystem::remove(step);
  // Without --schedule, --config is needed to export one.
  r = parasim_test::Parasim("calibrate step --model " + Src("calibrate/torch/llama3.2-1b.yaml"));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--config"));
}

TEST_CASE("cli: simulate --export-schedule writes the schedule calibrate step replays", "[cli]") {
  const std::filesystem::path sched = Temp("sched.json");
  const std::string args = "simulate --model " + Src("calibrate/torch/llama3.2-1b.yaml") +
                           " --cluster " + Src("tests/data/calibration/h100-sxm/one-h100.yaml") +
                           " --global-batch 1 --seq-len 4096 --config dp=1,mbs=1,sharding=zero3 --export-schedule ";
  parasim_test::Run r = parasim_test::Parasim(args + sched.string());
  REQUIRE(r.code == 0);
  std::ifstream f(sched);
  std::stringstream ss;
  ss << f.rdbuf();
  std::filesystem::remove(sched);
  // The committed schedule the H100 reference step ran came from this
  // command: same model, config and layers (its predicted times may have
  // moved with the cost model since).
  std::ifstream committed(Src("tests/data/calibration/h100-sxm/reference-step/llama3.2-1b_mbs1_schedule.json"));
  const nlohmann::json now = nlohmann::json::parse(ss.str()), then = nlohmann::json::parse(committed);
  CHECK(now["kind"] == "parasim_schedule");
  CHECK(now["model"] == then["model"]);
  CHECK(now["config"] == then["config"]);
  REQUIRE(now["layers"].size() == then["layers"].size());
  for (size_t i = 0; i < now["layers"].size(); ++i) CHECK(now["layers"][i]["name"] == then["layers"][i]["name"]);
}
