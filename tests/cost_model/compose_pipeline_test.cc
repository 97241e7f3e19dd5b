// cost_model: ComposePipeline's once-per-step additions. Without
// interleaving the fill and drain run through every other stage's first
// forward and last backward, so each stage's additions on those passes
// count once each; the critical stage adds its own and the step ends with
// the largest addition after the passes. One stage: its extra, bit for bit.
#include <catch2/catch.hpp>

#include <vector>

#include "cost_model/evaluator_stage_time.h"
#include "cost_model/overlap.h"

using namespace parasim;

namespace {

// One shape per stage: per_mb, on_passes, after (extra = their sum).
StagePlan PlanOf(const std::vector<double>& per_mb, const std::vector<double>& on, const std::vector<double>& after) {
  StagePlan plan;
  for (size_t s = 0; s < per_mb.size(); ++s) {
    StageShape shape;
    shape.layers = 4;
    shape.first = s == 0;
    shape.last = s + 1 == per_mb.size();
    shape.t.per_mb = per_mb[s];
    shape.t.fwd_mb = per_mb[s] / 3;
    shape.t.bwd_mb = 2 * per_mb[s] / 3;
    shape.t.extra_on_passes = on[s];
    shape.t.extra_after = after[s];
    shape.t.extra = on[s] + after[s];
    plan.shapes.push_back(shape);
    plan.shape_of.push_back(static_cast<int>(s));
  }
  return plan;
}

}  // namespace

TEST_CASE("cost_model: the fill and drain pay each other stage's on-pass additions once", "[cost_model][pipeline]") {
  const std::vector<double> per_mb = {1.0, 1.0, 1.0, 1.25};   // the last stage critical
  const std::vector<double> on = {0.010, 0.020, 0.030, 0.040};
  const std::vector<double> after = {0.300, 0.100, 0.100, 0.200};
  ConfigShape cs;
  cs.pp = 4;
  cs.m = 8;
  const PipelineStep step = ComposePipeline(PlanOf(per_mb, on, after), cs);
  CHECK(step.critical == 3);
  const double pipeline = PipelineSeconds(per_mb.data(), 4, 8, 1);
  // Every stage's on-pass additions (three on the fill and drain, the
  // critical one's in its own run) and the largest after-pass one.
  CHECK(step.step_s == Approx(pipeline + (0.010 + 0.020 + 0.030) + 0.040 + 0.300).epsilon(1e-12));
  // More than the largest single stage's additions (what it charged before).
  CHECK(step.step_s > pipeline + 0.310 + 1e-6);

  // Interleaved stages keep their additions whole (TimeShape puts them all
  // after the passes): the largest extra.
  cs.v = 2;
  const PipelineStep inter = ComposePipeline(PlanOf(per_mb, {0, 0, 0, 0}, {0.31, 0.12, 0.13, 0.24}), cs);
  CHECK(inter.step_s == Approx(PipelineSeconds(per_mb.data(), 4, 8, 2) + 0.31).epsilon(1e-12));
}

TEST_CASE("cost_model: one stage's step adds its extra bit for bit", "[cost_model][pipeline]") {
  ConfigShape cs;
  cs.pp = 1;
  cs.m = 16;
  const double per_mb = 0.37;
  const PipelineStep step = ComposePipeline(PlanOf({per_mb}, {0.1}, {0.2}), cs);
  CHECK(step.step_s == PipelineSeconds(&per_mb, 1, 16, 1) + (0.1 + 0.2));
}
