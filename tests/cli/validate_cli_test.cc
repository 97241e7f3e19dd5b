// cli: `parasim validate` with Megatron-LM Table 1 (T1) beside the findings.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;
using parasim_test::Run;

TEST_CASE("cli: validate --only T1 prints Table 1 as JSON with ten finite rows", "[cli]") {
  const Run r = Parasim("validate --only T1 --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["total"] == 0);   // --only T1 runs no finding
  REQUIRE(j.contains("megatron_table1"));
  const nlohmann::json& t = j["megatron_table1"];
  REQUIRE(t["rows"].size() == 10);
  for (const auto& row : t["rows"]) {
    for (const char* key : {"params_b", "published_tflops", "predicted_tflops", "error"}) {
      INFO(key);
      REQUIRE(row[key].is_number());
      CHECK(std::isfinite(row[key].get<double>()));
    }
    CHECK(row["tp"].get<int>() >= 1);
    CHECK(row["pp"].get<int>() >= 1);
    CHECK(row["gpus"].get<int>() >= 32);
    CHECK_THAT(row["config"].get<std::string>(), Contains("recompute=full"));
  }
  CHECK(std::isfinite(t["median_abs_error"].get<double>()));
  CHECK(std::isfinite(t["spearman"].get<double>()));
  CHECK(t["pass"].is_boolean());
}

TEST_CASE("cli: validate --only F-rows and --no-published leave Table 1 out", "[cli]") {
  Run r = Parasim("validate --only F1 --no-whole-space --format json");
  REQUIRE(r.code == 0);
  CHECK_FALSE(nlohmann::json::parse(r.out).contains("megatron_table1"));
  r = Parasim("validate --only T1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("Megatron-LM Table 1") && Contains("1008.0B") && Contains("median |error|"));
  CHECK(r.out.find("rows pass") == std::string::npos);
  r = Parasim("validate --only F13");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("F13") && Contains("T1"));
}
