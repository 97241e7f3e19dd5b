// What-if keys of every kind (absolute, multiplier, linked, power cap, NVLink
// domain) and the built-in studies' structural facts.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/power_cap.h"
#include "planner/scaling.h"
#include "planner/study.h"
#include "planner/whatif.h"
#include "tests/planner/llama7b_64_h100.h"
#include "tests/planner/test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::Job;

namespace {

PlanOptions Throughput() {
  PlanOptions o;
  o.threads = 2;
  o.objective.objective = Objective::kThroughput;
  return o;
}

std::vector<double> Throughputs(const std::vector<WhatifPoint>& points) {
  std::vector<double> out;
  for (const WhatifPoint& p : points) {
    REQUIRE(p.feasible);
    out.push_back(p.best.tokens_per_s);
  }
  return out;
}

}  // namespace

TEST_CASE("whatif: multipliers scale the base value; linked keys move together", "[planner][whatif]") {
  ClusterSpec c = LoadCluster("dgx-h100");
  JobSpec j = Job(64, 4096);
  const double bw = c.inter_node.nic_bandwidth.si(), bf16 = c.gpu.bf16_dense.si(), fp8 = c.gpu.fp8_dense.si();
  ApplyVariation(c, j, "inter_node.nic_bandwidth", "x2");
  CHECK(c.inter_node.nic_bandwidth.si() == Approx(2 * bw));
  ApplyVariation(c, j, "gpu.bf16_dense+gpu.fp8_dense", "x3");
  CHECK(c.gpu.bf16_dense.si() == Approx(3 * bf16));
  CHECK(c.gpu.fp8_dense.si() == Approx(3 * fp8));
  ApplyVariation(c, j, "gpu.hbm_capacity", "x1.5");
  ApplyVariation(c, j, "inter_node.nics_per_node", "x0.5");   // counts round to whole numbers
  CHECK(c.inter_node.nics_per_node == 4);
  ApplyVariation(c, j, "seq_len", "x2");
  CHECK(j.seq_len == 8192);
  ApplyVariation(c, j, "stack.kernel_gap_s", "x2");   // a stack multiplier needs the stack: loaded, checked
  // A multiplier that leaves the range, a bad multiplier, an unknown linked key.
  CHECK_THROWS_WITH(ApplyVariation(c, j, "inter_node.oversubscription", "x0.5"), Catch::Contains("oversubscription"));
  CHECK_THROWS_WITH(ParseVariation("gpu.tdp=x-1"), Catch::Contains("must be > 0"));
  CHECK_THROWS_WITH(ParseVariation("gpu.tdp+gpu.nonsense=x2"), Catch::Contains("nonsense"));
}

TEST_CASE("whatif: every fabric and GPU kind of key re-plans, and faster never hurts", "[planner][whatif]") {
  const parasim::testing::Llama7bOn64H100 c;
  const ModelSpec& model = c.model;
  const ClusterSpec& cluster = c.cluster;
  const JobSpec& job = c.job;
  // Each list goes from worse to better hardware: the best plan's throughput never falls.
  for (const char* line : {"inter_node.nic_bandwidth=100Gb/s,x1,x2", "inter_node.nics_per_node=2,4,8",
                           "inter_node.oversubscription=4,2,1", "gpu.hbm_bandwidth=x0.5,x1,x1.5",
                           "gpu.bf16_dense+gpu.fp16_dense+gpu.fp32=x0.5,x1,x2", "gpu.hbm_capacity=40GB,x1,x1.5",
                           "gpu.nvlink_bandwidth=x0.5,x1,x2"}) {
    INFO(line);
    const std::vector<double> t = Throughputs(RunWhatif(model, cluster, job, {ParseVariation(line)}, Throughput()));
    for (size_t k = 1; k < t.size(); ++k) CHECK(t[k] >= t[k - 1] * (1 - 1e-9));
  }
  // Switch tiers and GPUs per node are accepted and re-plan (no order implied).
  for (const char* line : {"inter_node.tiers=2,3", "gpus_per_node=4,8", "inter_node.switch_radix=32,64"}) {
    INFO(line);
    CHECK(Throughputs(RunWhatif(model, cluster, job, {ParseVariation(line)}, Throughput())).size() >= 2);
  }
}

TEST_CASE("whatif: an NVLink domain larger than a node changes the topology", "[planner][whatif][topology]") {
  const ModelSpec model = LoadModel("llama3-70b");
  const ClusterSpec cluster = ResizeCluster(LoadCluster("dgx-h100"), 512);
  const JobSpec job = Job(256, 8192);
  const std::vector<WhatifPoint> points =
      RunWhatif(model, cluster, job, {ParseVariation("intra_node.nvlink_domain_size=8,16,64,512")}, Throughput());
  const std::vector<double> t = Throughputs(points);
  // Nested domains: every group that fit in a smaller domain still does.
  for (size_t k = 1; k < t.size(); ++k) CHECK(t[k] >= t[k - 1] * (1 - 1e-9));
  CHECK(t.back() > t.front() * 1.001);   // a single 512-GPU domain carries no fabric traffic
  // 8 -> 36 -> 72 -> 576 on 4-GPU trays (whole 576-GPU domains, 1,152 GPUs).
  ClusterSpec trays = LoadCluster("gb200-nvl72");
  JobSpec j = Job(1152, 4096);
  ApplyVariation(trays, j, "gpus_per_node", "4");
  CHECK(trays.intra_node.nvlink_domain_size == 4);   // a domain that was the node follows it
  ApplyVariation(trays, j, "inter_node.nics_per_node", "4");
  trays = ResizeCluster(trays, 1152);
  const std::vector<double> d = Throughputs(RunWhatif(
      LoadModel("llama3-8b"), trays, j, {ParseVariation("intra_node.nvlink_domain_size=8,36,72,576")}, Throughput()));
  CHECK(d.size() == 4);
  CHECK(d[3] >= d[0]);
  CHECK_THROWS_WITH(ApplyVariation(trays, j, "intra_node.nvlink_domain_size", "7"), Catch::Contains("divide"));
}

TEST_CASE("power cap: the clock falls as the cube root of the dynamic power", "[cost_model][power]") {
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  const double idle = h100.idle_power.si(), tdp = h100.tdp.si();
  // At the rated limit nothing changes.
  const GpuProfile same = ApplyPowerCap(h100, h100.tdp, "cap");
  CHECK(same.bf16_dense.si() == h100.bf16_dense.si());
  // Half the dynamic power: clock ratio 0.5^(1/3) for a state at the limit.
  const double cap = idle + 0.5 * (tdp * h100.power_matmul_fraction - idle);
  const GpuProfile g = ApplyPowerCap(h100, Watts(cap), "cap");
  CHECK(g.bf16_dense.si() / h100.bf16_dense.si() == Approx(std::cbrt(0.5)));
  CHECK(g.hbm_bandwidth.si() == h100.hbm_bandwidth.si());   // memory clock untouched
  CHECK(g.tdp.si() * g.power_matmul_fraction <= cap * (1 + 1e-12));
  CHECK(g.tdp.si() * g.power_memory_fraction <= cap * (1 + 1e-12));
  CHECK_THROWS_WITH(ApplyPowerCap(h100, Watts(idle), "cap"), Catch::Contains("idle"));
  CHECK_THROWS_WITH(ApplyPowerCap(h100, Watts(tdp + 1), "cap"), Catch::Contains("rated"));
  // A lower cap never raises the best plan's throughput.
  const parasim::testing::Llama7bOn64H100 llama;
  const std::vector<double> t =
      Throughputs(RunWhatif(llama.model, llama.cluster, llama.job,
                            {ParseVariation("gpu.power_cap=700W,550W,x0.6,300W")}, Throughput()));
  for (size_t k = 1; k < t.size(); ++k) CHECK(t[k] <= t[k - 1] * (1 + 1e-9));
  CHECK(t.back() < t.front());
}

TEST_CASE("studies: every built-in study runs and shows the trends its physics implies", "[planner][study]") {
  PlanOptions o;
  o.threads = 2;
  CHECK_THROWS_WITH(FindStudy("nvlink"), Catch::Contains("nvlink-domain"));
  REQUIRE(BuiltInStudies().size() == 5);
  for (const StudySpec& s : BuiltInStudies()) {
    INFO(s.name);
    const std::vector<StudyRunResult> r = RunStudy(s, o);
    REQUIRE(r.size() == s.runs.size());
    const std::string table = RenderStudyTable(s, r);
    CHECK(table.find(s.name) != std::string::npos);
    const PlotSpec plot = StudyPlot(s, r);
    CHECK(plot.script.find("datafile index 0") != std::string::npos);
    for (const StudyRunResult& run : r) {
      const size_t n = run.variations.back().values.size();
      for (size_t k = 0; k < run.points.size(); ++k) {
        const WhatifPoint& p = run.points[k];
        REQUIRE(p.feasible);
        if (k % n == 0) continue;
        const WhatifPoint& prev = run.points[k - 1];
        // Along the x axis: faster NICs, more compute, a newer GPU never slow the best
        // throughput plan down; a lower power cap never lowers tokens per joule above
        // the cap where static power dominates (far below 300 W on an H100).
        if (s.name == "power-cap") {
          CHECK(p.best.tokens_per_joule >= prev.best.tokens_per_joule * (1 - 1e-9));
        } else if (s.name != "nvlink-domain") {
          CHECK(p.best.tokens_per_s >= prev.best.tokens_per_s * (1 - 1e-9));
        }
      }
      if (s.name == "nvlink-domain") {   // 72-GPU domains against 8 at each size (72 holds 9 whole 8s)
        for (size_t k = 0; k < run.points.size(); k += n) {
          CHECK(run.points[k + n - 1].best.tokens_per_s >= run.points[k].best.tokens_per_s * (1 - 1e-9));
        }
      }
    }
  }
}
