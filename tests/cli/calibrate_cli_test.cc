// cli: `parasim calibrate` end to end on the committed measurements (no GPU).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;

namespace {

using CalRun = parasim_test::Run;
CalRun ParasimCal(const std::string& args) { return parasim_test::Parasim(args); }

std::string CalData(const std::string& rel) {
  return std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/" + rel;
}

}  // namespace

TEST_CASE("cli: calibrate fit writes a profile that loads back", "[cli]") {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("parasim_cal_" + std::to_string(::getpid()) + ".yaml");
  CalRun r = ParasimCal("calibrate fit --profile h100-sxm --measurements " + CalData("h100-sxm") + " -o " +
                        out.string());
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());  // the YAML went to the file, the report to stderr
  CHECK_THAT(r.err, Contains("gemm_max_efficiency") && Contains("memory_efficiency"));
  r = ParasimCal("profiles show " + out.string() + " --format json");
  std::filesystem::remove(out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"name\": \"h100-sxm-calibrated\"") && Contains("by parasim calibrate"));
}

TEST_CASE("cli: calibrate fit --format json prints the fit report as JSON", "[cli]") {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("parasim_cal_json_" + std::to_string(::getpid()) + ".yaml");
  const std::string args =
      "calibrate fit --profile h100-sxm --measurements " + CalData("h100-sxm") + " -o " + out.string();
  const CalRun table = ParasimCal(args);
  REQUIRE(table.code == 0);
  std::ifstream in(out);
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const CalRun json = ParasimCal(args + " --format json");
  std::filesystem::remove(out);
  REQUIRE(json.code == 0);
  CHECK(json.out.empty());
  const nlohmann::json report = nlohmann::json::parse(json.err);
  CHECK(report["fit"] == "gpu-profile");
  CHECK(report["summary"] == "calibrated h100-sxm -> h100-sxm-calibrated from NVIDIA H100 80GB HBM3 (2026-11-23)");
  REQUIRE(report["parameters"].size() > 3);
  CHECK(report["parameters"][0]["parameter"] == "gemm_max_efficiency");
  CHECK(report["parameters"][0]["points"] == 49);
  CHECK(report["residuals"].size() > 0);
  // The table carries the same rows.
  for (const auto& row : report["parameters"])
    CHECK_THAT(table.err, Contains(row["parameter"].get<std::string>()));
  CHECK(yaml.rfind("# NVIDIA H100 SXM5 80GB (h100-sxm-calibrated).", 0) == 0);
  CHECK_THAT(yaml, Contains("\nname: \"h100-sxm-calibrated\"\n"));
  CHECK(ParasimCal("calibrate fit --measurements " + CalData("h100-sxm") + " --format csv").code != 0);
}

TEST_CASE("cli: calibrate import-nccl-tests fits alpha-beta per table", "[cli]") {
  CalRun r = ParasimCal("calibrate import-nccl-tests " + CalData("nccl-tests/all_reduce_ring_h100x8.out") + " " +
                        CalData("nccl-tests/all_gather_ring_h100x8.out") + " --min-size 64MiB --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"collective\": \"all_reduce\"") && Contains("\"collective\": \"all_gather\"") &&
                        Contains("\"beta_Bps\""));
  r = ParasimCal("calibrate import-nccl-tests " + CalData("nccl-tests/all_reduce_ring_h100x8.out"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("alpha") && Contains("busbw"));
}

TEST_CASE("cli: calibrate reports bad input with exit code 2", "[cli]") {
  const std::filesystem::path bad =
      std::filesystem::temp_directory_path() / ("parasim_cal_bad_" + std::to_string(::getpid()) + ".out");
  {
    std::ofstream f(bad);
    f << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
         "busbw #wrong\n"
      << "     1048576        262144     float     sum      -1    44.38   23.63\n";
  }
  CalRun r = ParasimCal("calibrate import-nccl-tests " + bad.string());
  std::filesystem::remove(bad);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains(bad.filename().string()) && Contains("line 2"));
  r = ParasimCal("calibrate fit --profile h100-sxm --measurements /nonexistent-dir");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("not a directory"));
}

#ifndef PARASIM_HAVE_CUDA
TEST_CASE("cli: calibrate run without CUDA exits 2 (a feature this build lacks)", "[cli]") {
  const CalRun r = ParasimCal("calibrate run --out " +
                              (std::filesystem::temp_directory_path() / "parasim_cal_run").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("built without CUDA"));
}
#endif

namespace {
std::string Trace(const std::string& name) {
  return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/traces/" + name;
}
}  // namespace

// Numbers derived in tests/calibrate/kineto_trace_test.cc.
TEST_CASE("cli: calibrate import-trace summarizes the profiled steps", "[cli]") {
  CalRun r = ParasimCal("calibrate import-trace --trace " + Trace("fsdp_two_steps.json") + " --skip-steps 1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("cpu_annotations, 3 found, 1 skipped, 2 used (#1-#2)") &&
                        Contains("NVIDIA H100 80GB HBM3") && Contains("reduce_scatter") && Contains("all_gather"));
  r = ParasimCal("calibrate import-trace --trace " + Trace("fsdp_two_steps.json") +
                 " --skip-steps 1 --device 0 --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"step_source\": \"cpu_annotations\"") && Contains("\"exposed_comm_s\": 3.75e-05") &&
                        Contains("\"steps_used\": 2"));
}

TEST_CASE("cli: calibrate import-trace reads a simulated timeline", "[cli]") {
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / ("parasim_cal_trace_" + std::to_string(::getpid()) + ".json");
  CalRun r = ParasimCal(
      "simulate --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --seq-len 4096 --config "
      "\"dp=8,tp=2,pp=1,mbs=1,sharding=zero3\" --fidelity simulated --trace " + trace.string());
  REQUIRE(r.code == 0);
  r = ParasimCal("calibrate import-trace --trace " + trace.string() + " --format json");
  std::filesystem::remove(trace);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"format\": \"parasim\"") && Contains("\"step_source\": \"whole_trace\""));
}

TEST_CASE("cli: calibrate import-trace rejects bad traces with exit code 2", "[cli]") {
  struct Case {
    const char* file;
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"bad_not_json.json", "", "not valid JSON"},
      {"bad_no_trace_events.json", "", "traceEvents: missing"},
      {"bad_negative_dur.json", "", "traceEvents[1]: \"ncclDevKernel_AllGather"},
      {"bad_negative_dur.json", "", "negative \"dur\""},
      {"bad_missing_ts.json", "", "traceEvents[0]"},
      {"fsdp_two_steps.json", " --skip-steps 3", "skip_steps: skipping 3 warm-up steps leaves none"},
      {"fsdp_two_steps.json", " --device 5", "5 has no GPU events; the trace has devices 0"},
  };
  for (const Case& c : cases) {
    INFO(c.file << c.args);
    const CalRun r = ParasimCal("calibrate import-trace --trace " + Trace(c.file) + c.args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains(c.file) && Contains(c.message));
  }
}

TEST_CASE("cli: calibrate fit-stack writes a stack that --stack loads", "[cli]") {
  const std::filesystem::path yaml =
      std::filesystem::temp_directory_path() / ("parasim_fit_stack_" + std::to_string(::getpid()) + ".yaml");
  const std::string spec = " --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8,mbs=1,sharding=zero2";
  const CalRun fit = ParasimCal("calibrate fit-stack --trace " + std::string(PARASIM_SOURCE_DIR) +
                                "/tests/testdata/traces/fsdp_two_steps.json --name tiny" + spec + " -o " +
                                yaml.string());
  REQUIRE(fit.code == 0);
  CHECK_THAT(fit.err, Contains("refitted pytorch-fsdp -> tiny"));
  // The fixture is microseconds long: the fit says it does not match the config.
  CHECK_THAT(fit.err, Contains("is the trace of this model"));
  CHECK_THAT(fit.err, Contains("  residuals:") && Contains("optimizer_bytes_per_param"));
  const CalRun sim = ParasimCal("simulate --stack " + yaml.string() + spec);
  std::filesystem::remove(yaml);
  CHECK(sim.code == 0);
  CHECK_THAT(sim.out, Contains("dp=8"));
  // The report as JSON: the same fit, the stack still on stdout.
  const CalRun json = ParasimCal("calibrate fit-stack --trace " + std::string(PARASIM_SOURCE_DIR) +
                                 "/tests/testdata/traces/fsdp_two_steps.json --name tiny" + spec + " --format json");
  REQUIRE(json.code == 0);
  CHECK_THAT(json.out, Contains("name: \"tiny\""));
  const nlohmann::json report = nlohmann::json::parse(json.err);
  CHECK(report["fit"] == "software-stack");
  CHECK(report["summary"] == "refitted pytorch-fsdp -> tiny");
  CHECK(report["residuals"].back()["class"] == "step");
  CHECK(report["parameters"][0]["parameter"] == "optimizer_bytes_per_param");
  CHECK(report["parameters"][0]["fitted"].get<double>() < report["parameters"][0]["base"].get<double>());
}

TEST_CASE("cli: calibrate fit-stack refuses a simulated timeline with exit code 2", "[cli]") {
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / ("parasim_fit_stack_sim_" + std::to_string(::getpid()) + ".json");
  const std::string spec = " --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8,mbs=1,sharding=zero2";
  CalRun r = ParasimCal("simulate --fidelity simulated --trace " + trace.string() + spec);
  REQUIRE(r.code == 0);
  r = ParasimCal("calibrate fit-stack --trace " + trace.string() + spec);
  std::filesystem::remove(trace);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("Kineto"));
}
