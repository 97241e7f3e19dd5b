// The small planning problem several planner tests share: a tiny model on 32
// GPUs scored by the hand-made FakeScorer, so they do not depend on the cost model.
#pragma once

#include "planner/planner.h"
#include "planner/search_space.h"
#include "fake_scorer.h"
#include "test_specs.h"

namespace parasim::planner::testing {

struct TinyPlanSetup {
  ModelSpec model = TinyModel(8, 16, 256);
  JobSpec job = Job(64, 64);
  int gpus = 32;
  int gpus_per_node = 8;
  FakeScorer fake{Job(64, 64)};
  Scorer scorer() const {
    return [f = fake](const ParallelConfig& c) { return f(c); };
  }
  SearchSpace Space(const PlanOptions& o) const {
    return EnumerateSpace(model, job, gpus, gpus_per_node, o.constraints, o.space);
  }
  PlanResult Run(const PlanOptions& o) const { return RunPlan(model, job, gpus, gpus_per_node, scorer(), o); }
};

}  // namespace parasim::planner::testing
