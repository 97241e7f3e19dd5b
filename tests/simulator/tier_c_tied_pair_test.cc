// Tier C's tied-embedding all-reduce (cost_model/comm_plan.h
// TiedEmbeddingCollective): one group op per pipeline over the GPUs of
// stages 0 and pp − 1 only (SubGroup::ends), its traffic on the links
// between exactly those two GPUs of every pair, and its time what tiers A
// and B give it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"
#include "simulator/step_builder.h"
#include "simulator/tier_c.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

// A 12-layer Llama-2-7B (12 splits over 3 and 4 stages), tied or not.
ModelSpec Model(bool tied) {
  ModelSpec m = LoadModel("llama2-7b");
  m.num_layers = 12;
  m.tied_embeddings = tied;
  return m;
}

JobSpec Job() {
  JobSpec job;
  job.global_batch = 64;
  job.seq_len = 2048;
  return job;
}

// Tier C's graph of the step, lanes as SimulateStep lays them out.
StepGraph TierCGraph(const StepWorkload& wl, const ClusterSpec& cluster, bool step_level = true) {
  Placement placement(wl.config, wl.world_size);
  std::vector<int> stage_of(wl.world_size, 0);
  for (const auto& group : placement.AllGroups(ParallelDim::kPp))
    for (size_t k = 0; k < group.size(); ++k) stage_of[group[k]] = static_cast<int>(k);
  std::vector<std::vector<int>> lanes(wl.config.pp);
  for (int gpu : FlowCollectives::LaneGpus(wl.config, wl.world_size)) lanes[stage_of[gpu]].push_back(gpu);
  FlowCollectives factory(wl, cluster, {}, step_level);
  return BuildStepGraph(wl, lanes, wl.config.tp, factory);
}

struct TiedTraffic {
  int activities = 0;
  std::set<int> gpus;     // GPUs of the ranks taking part
  std::set<int> links;    // links its flow sets load
};

TiedTraffic TiedOf(const StepGraph& sg) {
  const TaskGraph& g = sg.graph;
  TiedTraffic out;
  for (int32_t act = 0; act < g.num_activities(); ++act) {
    if (g.name(g.activity(act).name) != "pp_tied_embedding") continue;
    ++out.activities;
    REQUIRE(g.activity_num_ops(act) == 2);   // the two ends of one pipeline
    for (int k = 0; k < g.activity_num_ops(act); ++k)
      out.gpus.insert(sg.rank_gpu[g.op_rank(g.activity_first_op(act) + k)]);
    const ActivitySpec& a = g.activity(act);
    for (int c = 0; c < a.flow_classes && a.flow_set >= 0; ++c)
      for (const LinkUse& use : g.flow_links(a.flow_set + c)) out.links.insert(use.link);
  }
  return out;
}

// Links of the routes both ways between stage 0 and stage pp − 1 of every
// pipeline (every TP rank's pipeline, as the op carries its TP siblings).
std::set<int> PairLinks(const ParallelConfig& c, const ClusterSpec& cluster, int world) {
  const Topology t = Topology::Build(cluster);
  std::set<int> out;
  for (const auto& group : Placement(c, world).AllGroups(ParallelDim::kPp)) {
    for (const auto& [a, b] : {std::pair{group.front(), group.back()}, std::pair{group.back(), group.front()}})
      for (int32_t link : t.RouteBetween(a, b)) out.insert(link);
  }
  return out;
}

std::set<int> StageGpus(const ParallelConfig& c, int world, int stage) {
  std::set<int> out;
  for (const auto& group : Placement(c, world).AllGroups(ParallelDim::kPp)) out.insert(group[stage]);
  return out;
}

double Step(const StepWorkload& wl, const ClusterSpec& cluster, Fidelity fidelity) {
  SimulationOptions opt;
  opt.fidelity = fidelity;
  opt.tier_c = TierCSchedule::kStep;
  return SimulateStep(wl, cluster, opt).report.step_time.si();
}

struct Case {
  const char* config;
  int nodes;
};
// pp = 4 and pp = 3 with the pair on different nodes (pp outermost: one
// stage per node or half a node), with and without TP siblings.
const Case kCases[] = {
    {"dp=4,pp=4,mbs=1,sharding=zero1", 2},
    {"dp=2,tp=2,pp=4,mbs=1,sharding=zero1", 2},
    {"dp=8,pp=3,mbs=1,sharding=zero1", 3},
    {"dp=4,tp=2,pp=3,mbs=1,sharding=zero1", 3},
};

}  // namespace

TEST_CASE("tier C: the tied all-reduce runs between stage 0 and stage pp-1 only", "[simulator][tied_pair]") {
  for (const Case& k : kCases) {
    INFO(k.config);
    const ClusterSpec cluster = LoadCluster("dgx-h100", k.nodes);
    AnalyticalEvaluator eval(Model(true), cluster, Job(), LoadSoftwareStack("megatron-core"));
    const ParallelConfig c = ParseParallelConfig(k.config);
    const StepWorkload wl = eval.BuildWorkload(c);
    std::set<int> ends = StageGpus(c, wl.world_size, 0);
    for (int gpu : StageGpus(c, wl.world_size, c.pp - 1)) ends.insert(gpu);
    for (bool step_level : {true, false}) {
      INFO((step_level ? "step schedule" : "coarse"));
      const StepGraph sg = TierCGraph(wl, cluster, step_level);
      const TiedTraffic tied = TiedOf(sg);
      // One op per pipeline of TP leaders (it carries its TP siblings' pairs).
      REQUIRE(tied.activities == wl.world_size / c.pp / c.tp);
      for (int gpu : tied.gpus) CHECK(ends.count(gpu) == 1);
      REQUIRE(tied.gpus.size() == static_cast<size_t>(2 * tied.activities));
      // Its links are exactly those of the pairs' routes: none towards a middle stage.
      CHECK(tied.links == PairLinks(c, cluster, wl.world_size));
    }
  }
}

TEST_CASE("tier C: the tied model's step agrees with tiers A and B at pp 3 and 4", "[simulator][tied_pair]") {
  // Tier C equals tier B where no two flow sets share a link (a collective's
  // nominal rate is its rate with its symmetric peers); here each pair's hop
  // leaves through its own GPUs' NICs, and the later end waits for stage 0,
  // whose last backward ends the 1F1B step anyway: 1% (measured: 1e-5 to
  // 4e-3, the rest from TP and pipeline sends meeting on links). The tied
  // op's own cost, step(tied) − step(untied), is the same in both to 1%,
  // and the whole all-reduce: it waits for the data-parallel reductions
  // still queued on the dp stream after the last backward (the step
  // builder's StepEnd; before that order it ran beside them and cost 73-85%
  // of its time here). Tier A exposes it whole too.
  for (const Case& k : kCases) {
    INFO(k.config);
    const ClusterSpec cluster = LoadCluster("dgx-h100", k.nodes);
    const ParallelConfig c = ParseParallelConfig(k.config);
    AnalyticalEvaluator tied(Model(true), cluster, Job(), LoadSoftwareStack("megatron-core"));
    AnalyticalEvaluator untied(Model(false), cluster, Job(), LoadSoftwareStack("megatron-core"));
    const StepWorkload wl = tied.BuildWorkload(c);
    const StepWorkload wl_untied = untied.BuildWorkload(c);
    double ar = 0;
    for (const LayerWork& l : wl.stages[0].layers)
      for (const WorkloadCollective& x : l.collectives)
        if (x.what == "pp_tied_embedding") ar = x.duration.si();
    REQUIRE(ar > 0);
    const double a = tied.Evaluate(c).step_time.si();
    const double a_untied = untied.Evaluate(c).step_time.si();
    const double b = Step(wl, cluster, Fidelity::kSimulated);
    const double full = Step(wl, cluster, Fidelity::kFull);
    const double b_untied = Step(wl_untied, cluster, Fidelity::kSimulated);
    const double full_untied = Step(wl_untied, cluster, Fidelity::kFull);
    INFO("A " << a << " (untied " << a_untied << ") B " << b << " (" << b_untied << ") C " << full << " ("
              << full_untied << ") all-reduce " << ar);
    CHECK_THAT(full, WithinRel(b, 0.01));
    CHECK_THAT(full - full_untied, WithinRel(b - b_untied, 0.01));
    CHECK(full - full_untied <= ar * 1.01);
    CHECK(full - full_untied >= 0.99 * ar);
    CHECK(b - b_untied >= 0.99 * ar);
    CHECK(a - a_untied >= ar * (1 - 1e-9));
  }
}

TEST_CASE("tier C: untied models and pp = 2 keep their groups", "[simulator][tied_pair]") {
  // Untied: no cross-stage op, so no stream beyond the six per rank.
  const ClusterSpec cluster = LoadCluster("dgx-h100", 2);
  {
    AnalyticalEvaluator eval(Model(false), cluster, Job(), LoadSoftwareStack("megatron-core"));
    const StepGraph sg = TierCGraph(eval.BuildWorkload(ParseParallelConfig("dp=4,pp=4,mbs=1,sharding=zero1")), cluster);
    CHECK(TiedOf(sg).activities == 0);
    CHECK(sg.graph.num_streams() == 6 * sg.graph.num_ranks());
  }
  // pp = 2: the pair is the whole pp group, its links the pp group's ring.
  const ParallelConfig c = ParseParallelConfig("dp=8,pp=2,mbs=1,sharding=zero1");
  AnalyticalEvaluator eval(Model(true), cluster, Job(), LoadSoftwareStack("megatron-core"));
  const StepWorkload wl = eval.BuildWorkload(c);
  const StepGraph sg = TierCGraph(wl, cluster);
  const TiedTraffic tied = TiedOf(sg);
  REQUIRE(tied.activities == 8);
  CHECK(tied.links == PairLinks(c, cluster, wl.world_size));
  Placement placement(c, wl.world_size);
  CHECK(placement.AllGroups(ParallelDim::kPp, GroupEnds()) == placement.AllGroups(ParallelDim::kPp));
  CHECK_THAT(Step(wl, cluster, Fidelity::kFull), WithinRel(Step(wl, cluster, Fidelity::kSimulated), 0.01));
}

}  // namespace parasim::simulator
