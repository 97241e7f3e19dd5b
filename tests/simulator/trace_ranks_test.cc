// Which ranks a trace holds (simulator/trace_ranks.h): the default keeps the
// first rank of each pipeline stage and the slowest rank; `all` keeps every
// rank; a list keeps the ranks simulating the listed GPUs. Every selection
// is well-formed Chrome Trace JSON.
#include "simulator/trace_ranks.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/evaluator.h"

namespace parasim::simulator {
namespace {

JobSpec Job(int64_t batch, int64_t seq) {
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = seq;
  return job;
}

// The processes (pids) of a trace, checking every event is complete.
std::set<int> TracedRanks(const std::string& trace_json) {
  const nlohmann::json doc = nlohmann::json::parse(trace_json);   // throws if malformed
  std::set<int> pids;
  for (const auto& ev : doc.at("traceEvents")) {
    for (const char* key : {"ph", "ts", "dur", "pid", "tid"}) REQUIRE(ev.contains(key));
    pids.insert(ev["pid"].get<int>());
  }
  return pids;
}

struct TierC {
  AnalyticalEvaluator eval{LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job(64, 4096)};
  ParallelConfig config = ParseParallelConfig("dp=4,tp=2,pp=4,sharding=zero1");
  SimulationResult Run(const TraceRanks& ranks, int straggler = -1) const {
    SimulationOptions opt;
    opt.fidelity = Fidelity::kFull;
    opt.trace = true;
    opt.trace_ranks = ranks;
    if (straggler >= 0) opt.stragglers.push_back({straggler, 1.5});
    return SimulateConfig(eval, config, opt);
  }
};

}  // namespace

TEST_CASE("trace ranks: default, all, lists and ranges parse; anything else names the flag", "[simulator][trace]") {
  CHECK(ParseTraceRanks("").kind == TraceRanks::Kind::kDefault);
  CHECK(ParseTraceRanks("default").kind == TraceRanks::Kind::kDefault);
  CHECK(ParseTraceRanks("all").kind == TraceRanks::Kind::kAll);
  const TraceRanks list = ParseTraceRanks("17,0,64-66,17");
  CHECK(list.kind == TraceRanks::Kind::kList);
  CHECK(list.gpus == std::vector<int>{0, 17, 64, 65, 66});
  for (const char* bad : {"x", "5-3", "1,,2", "-1", "3-", "all,1"}) {
    INFO(bad);
    CHECK_THROWS_AS(ParseTraceRanks(bad), InvalidInput);
  }
}

TEST_CASE("trace ranks: the default keeps one rank per stage and the slowest", "[simulator][trace]") {
  const TierC t;
  // A straggler in stage 2 that is not its stage's first GPU: its lane is the slowest.
  const SimulationResult all = t.Run(ParseTraceRanks("all"));
  const int pp = 4;
  int straggler = -1;
  std::vector<int> first_of_stage(pp, -1);
  for (size_t r = 0; r < all.ranks.size(); ++r) {
    const int s = all.ranks[r].stage;
    if (first_of_stage[s] < 0) first_of_stage[s] = static_cast<int>(r);
    else if (s == 2 && straggler < 0) straggler = all.ranks[r].gpu;
  }
  REQUIRE(straggler >= 0);
  CHECK(TracedRanks(all.trace_json).size() == all.ranks.size());

  const SimulationResult slow = t.Run(TraceRanks{}, straggler);
  std::set<int> expect(first_of_stage.begin(), first_of_stage.end());
  const auto busiest = std::max_element(slow.ranks.begin(), slow.ranks.end(), [](const RankResult& a, const RankResult& b) {
    return a.compute.si() + a.exposed_comm.si() < b.compute.si() + b.exposed_comm.si();
  });
  REQUIRE(busiest->gpu == straggler);
  expect.insert(static_cast<int>(busiest - slow.ranks.begin()));
  CHECK(expect.size() == pp + 1);
  CHECK(TracedRanks(slow.trace_json) == expect);
  // Selecting changes the trace, never the prediction.
  CHECK(t.Run(ParseTraceRanks("all"), straggler).report.step_time.si() == slow.report.step_time.si());
}

TEST_CASE("trace ranks: a list keeps the ranks that simulate the listed GPUs", "[simulator][trace]") {
  const TierC t;
  const SimulationResult r = t.Run(ParseTraceRanks("0"));
  REQUIRE(TracedRanks(r.trace_json).size() == 1);
  // GPU 0 and its TP partner are one lane (tp = 2): the same single rank.
  const SimulationResult both = t.Run(ParseTraceRanks("0-1"));
  CHECK(TracedRanks(both.trace_json) == TracedRanks(r.trace_json));
  CHECK_THROWS_AS(t.Run(ParseTraceRanks("32")), InvalidInput);   // 32 GPUs: 0..31
}

}  // namespace parasim::simulator
