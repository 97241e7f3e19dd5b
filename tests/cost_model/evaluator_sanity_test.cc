// Prints the seed-findings sanity numbers (run with the [.sanity] tag).
#include <catch2/catch.hpp>

#include <cstdio>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"

using namespace parasim;

namespace {
Report Run(const char* cluster, int nodes, int64_t batch, const std::string& cfg, const char* stack = "pytorch-fsdp") {
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = 4096;
  job.stack = stack;
  AnalyticalEvaluator ev(LoadModel("llama2-7b"), LoadCluster(cluster, nodes), job);
  return ev.Evaluate(ParseParallelConfig(cfg));
}
}  // namespace

TEST_CASE("cost_model: seed-finding sanity printout", "[.sanity]") {
  std::vector<Report> rs;
  rs.push_back(Run("dgx-h100", 32, 512, "dp=256,mbs=2,sharding=zero2"));
  rs.push_back(Run("dgx-a100", 32, 512, "dp=256,mbs=2,sharding=zero2"));
  for (int n : {1, 4, 16, 64, 256}) rs.push_back(Run("dgx-h100", n, 2LL * 8 * n, StrCat("dp=", 8 * n, ",mbs=2,sharding=zero2")));
  rs.push_back(Run("dgx-h100", 32, 512, "dp=128,tp=2,mbs=2,sharding=zero2"));
  rs.push_back(Run("dgx-h100", 32, 512, "dp=64,tp=4,mbs=2,sharding=zero2"));
  rs.push_back(Run("dgx-h100", 32, 512, "dp=128,pp=2,mbs=2,sharding=zero2"));
  std::printf("%s", ReportsToTable(rs).c_str());
  for (const auto& r : rs) {
    std::printf("%s  comm=%.4f exposed=%.4f compute=%.4f | ", r.config.ToString().c_str(), r.comm.si(), r.exposed_comm.si(), r.compute.si());
    for (const auto& e : r.by_op) std::printf("%s=%.4f ", e.name.c_str(), e.total.si());
    for (const auto& e : r.by_dimension) std::printf("%s=%.4f/%.4f ", e.name.c_str(), e.total.si(), e.exposed.si());
    std::printf("\n");
    // Exposed communication is part of all communication; the step holds the compute.
    INFO(r.config.ToString());
    CHECK(r.feasible);
    CHECK((r.exposed_comm >= Seconds(0) && r.exposed_comm <= r.comm));
    CHECK(r.step_time >= r.compute);
  }
}
