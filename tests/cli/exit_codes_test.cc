// cli: one exit-code table (docs/exit-codes.md), one case per code.
#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "core/provenance.h"
#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;
using parasim_test::Run;

TEST_CASE("exit codes: each library exception type maps to its code", "[cli][exit]") {
  using namespace parasim;
  CHECK(cli::ExitCodeOf(InvalidInput("f.yaml", "a.b", "bad")) == 2);
  CHECK(cli::ExitCodeOf(NoAnswer("nothing fits", {"memory: 3 configs"})) == 3);
  CHECK(cli::ExitCodeOf(EnvironmentError("no GPU")) == 3);
  CHECK(cli::ExitCodeOf(InternalError("bug")) == 1);
  CHECK(cli::ExitCodeOf(std::runtime_error("anything else")) == 1);
  // Every library exception is a parasim::Error.
  const NoAnswer none("nothing fits", {"memory: 3 configs", "divisibility: 1 configs"});
  const Error& base = none;
  CHECK_THAT(std::string(base.what()), Contains("nothing fits") && Contains("memory: 3 configs"));
  CHECK(none.reasons().size() == 2);
}

TEST_CASE("exit code 0: success", "[cli][exit]") {
  const Run r = Parasim("models list");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("exit code 2: bad input names the flag or field; a malformed config is bad input", "[cli][exit]") {
  Run r = Parasim("plan --model no-such-model --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("no-such-model"));
  r = Parasim("plan --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048 --no-such-flag");
  CHECK(r.code == 2);
  // dp·tp·pp·cp = 4 on 8 GPUs: malformed, not infeasible.
  r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048 "
              "--config dp=4,tp=1,pp=1");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--config") && Contains("dp"));
  CHECK(r.out.empty());
  // More virtual stages than layers per stage.
  r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048 "
              "--config dp=1,tp=1,pp=8,vpp=8,schedule=interleaved");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("vpp"));
}

TEST_CASE("exit code 0 with fits: false for a well-formed config that does not fit", "[cli][exit]") {
  const Run r = Parasim("simulate --model llama2-70b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 4096 "
                        "--config dp=8,tp=1,pp=1,sharding=ddp --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["feasible"] == false);
  CHECK_THAT(j["infeasible_reason"].get<std::string>(), Contains("memory"));
}

TEST_CASE("exit code 3: plan with nothing feasible says why per pruned dimension", "[cli][exit]") {
  const auto out = std::filesystem::temp_directory_path() / "parasim_exit3_plan.json";
  std::filesystem::remove(out);
  const Run r = Parasim("plan --model llama3-405b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 4096 -o " +
                        out.string());
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Contains("no feasible plan") && Contains("memory:"));
  CHECK_FALSE(std::filesystem::exists(out));   // nothing written
}

TEST_CASE("exit code 4: validate exits 4 exactly when a row fails", "[cli][exit]") {
  const Run r = Parasim("validate --only F1,F3 --no-whole-space --format json");
  REQUIRE((r.code == 0 || r.code == 4));
  const nlohmann::json j = nlohmann::json::parse(r.out);   // the report is written whole either way
  bool any_failed = false;
  for (const auto& row : j["rows"]) any_failed = any_failed || row["status"] == "FAIL";
  CHECK(r.code == (any_failed ? 4 : 0));
}

TEST_CASE("provenance: every JSON report opens with schema, version and hashed inputs", "[cli][provenance]") {
  const Run r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --seq-len 2048 "
                        "--config dp=8,tp=1,pp=1 --format json");
  REQUIRE(r.code == 0);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);
  CHECK(j.begin().key() == "schema_version");
  CHECK(j["schema_version"] == parasim::kReportSchemaVersion);
  CHECK(j["parasim_version"] == parasim::ParasimVersion());
  CHECK(j["inputs"]["cluster"]["sha256"] == parasim::EmbeddedSha256("clusters/dgx-h100.yaml"));
  CHECK(j["inputs"]["gpu_profile"]["sha256"] == parasim::EmbeddedSha256("gpus/h100-sxm.yaml"));
  CHECK(j["inputs"]["stack"]["sha256"].get<std::string>().size() == 64);
  CHECK(j["inputs"]["model"]["name"] == "llama2-7b");
  CHECK(j.contains("step_time_s"));   // the report itself follows
  // A command without specs still carries the versions.
  const Run v = Parasim("validate --only F1 --no-whole-space --format json");
  const nlohmann::json jv = nlohmann::json::parse(v.out);
  CHECK(jv["schema_version"] == parasim::kReportSchemaVersion);
}
