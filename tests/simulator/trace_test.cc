#include "simulator/trace.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>

#include "simulator/timeline_stats.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

// Two ranks: each computes a layer's forward (matmul 2 s) then a norm
// (memory-bound 1 s); an all-reduce (1.5 s) over both follows the matmul and
// overlaps the norm by 1 s.
struct Fixture {
  TaskGraph g;
  Timeline t;
  PowerModel power{700, 500, 300, 100};
  Fixture() {
    std::vector<int32_t> comm;
    std::vector<int32_t> fwd;
    for (int r = 0; r < 2; ++r) {
      int rank = g.AddRank("rank \"" + std::to_string(r) + "\"");  // quotes must be escaped
      int c = g.AddStream(rank, StreamKind::kCompute);
      comm.push_back(g.AddStream(rank, StreamKind::kTp));
      fwd.push_back(g.AddOp(c, {.kind = WorkKind::kMatmul, .duration_s = 2, .name = g.InternName("forward"),
                                .layer = 3, .micro_batch = 1}));
      g.AddOp(c, {.kind = WorkKind::kMemory, .duration_s = 1, .name = g.InternName("norm"), .layer = 3,
                  .micro_batch = 1});
    }
    int32_t ar = g.AddGroupOp(comm, {.kind = WorkKind::kComm, .duration_s = 1.5,
                                     .name = g.InternName("tp_allreduce"), .layer = 3, .micro_batch = 1,
                                     .bytes = 64e6});
    for (int r = 0; r < 2; ++r) g.AddDependency(fwd[r], ar + r);
    g.Finalize();
    Engine e;
    t = e.Run(g, {});
  }
};

TEST_CASE("simulator: rank summaries split compute, exposed comm, idle and energy", "[simulator]") {
  // Expectation per rank over [0, 4]: compute 0-3 (3 s), comm 2-3.5 (1.5 s),
  // exposed 3-3.5 (0.5 s), idle 3.5-4 (0.5 s). Energy = 2·700 + 1·500 +
  // 0.5·300 + 0.5·100 = 2100 J.
  Fixture f;
  REQUIRE_THAT(f.t.makespan_s, WithinRel(3.5, 1e-12));
  std::vector<std::vector<PowerStep>> steps;
  auto sums = SummarizeRanks(f.g, f.t, f.power, 4.0, &steps);
  for (const auto& s : sums) {
    REQUIRE_THAT(s.compute_s, WithinRel(3.0, 1e-12));
    REQUIRE_THAT(s.comm_s, WithinRel(1.5, 1e-12));
    REQUIRE_THAT(s.exposed_comm_s, WithinRel(0.5, 1e-12));
    REQUIRE_THAT(s.idle_s, WithinRel(0.5, 1e-12));
    REQUIRE_THAT(s.energy_J, WithinRel(2100.0, 1e-12));
  }
  // Power steps: 700 at 0, 500 at 2, 300 at 3, 100 at 3.5.
  REQUIRE(steps[0].size() == 4);
  REQUIRE(steps[0][1].start_s == 2.0);
  REQUIRE(steps[0][3].watts == 100.0);
}

TEST_CASE("simulator: the trace is valid Chrome Trace Event JSON", "[simulator]") {
  Fixture f;
  std::string text = WriteChromeTrace(f.g, f.t, f.power);
  nlohmann::json doc = nlohmann::json::parse(text);  // throws if invalid
  REQUIRE(doc.contains("traceEvents"));
  int complete = 0, counters = 0;
  std::set<std::pair<int, int>> threads;
  for (const auto& ev : doc["traceEvents"]) {
    for (const char* key : {"ph", "ts", "dur", "pid", "tid"}) REQUIRE(ev.contains(key));
    std::string ph = ev["ph"];
    if (ph == "X") {
      ++complete;
      threads.insert({ev["pid"].get<int>(), ev["tid"].get<int>()});
      REQUIRE(ev["dur"].get<double>() >= 0);
      std::string name = ev["name"];
      REQUIRE(name.find("L3") != std::string::npos);
      REQUIRE(name.find("mb1") != std::string::npos);
      if (ev["cat"] == "comm") REQUIRE_THAT(ev["args"]["bytes"].get<double>(), WithinRel(64e6, 1e-12));
    } else if (ph == "C") {
      ++counters;
      REQUIRE(ev["args"].contains("watts"));
    } else {
      REQUIRE(ph == "M");
    }
  }
  // One complete event per op: 2 ranks × (2 compute + 1 collective participant).
  REQUIRE(complete == f.g.num_ops());
  REQUIRE(complete == 6);
  REQUIRE(threads.size() == 4);      // compute + tp stream on each rank
  REQUIRE(counters == 2 * (4 + 1));  // four steps and a closing sample per GPU
  // The all-reduce starts after the forward: 2 s = 2e6 µs.
  bool found = false;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X" && ev["cat"] == "comm") {
      REQUIRE_THAT(ev["ts"].get<double>(), WithinAbs(2e6, 1e-3));
      found = true;
    }
  }
  REQUIRE(found);
}

}  // namespace
}  // namespace parasim::simulator
