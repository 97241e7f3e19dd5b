// cost_model: ComposePipeline's once-per-step additions. Without
// interleaving the fill and drain run through every other stage's first
// forward and last backward, so each stage's additions on those passes
// count once each; the critical stage adds its own and the step ends with
// the largest addition after the passes. One stage: its extra, bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
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

// ZB-H1's pipeline on made-up pass times (F forward, B input gradient, W
// weight gradient per micro-batch, sends included). Equal stages: the 1F1B
// bubble (p − 1)(F + B + W) becomes (p − 1)(F + B − W) (Qi et al. 2023 §3)
// while W is the shortest pass; a W longer than F or B leaves (p − 1)·max(F, B).
TEST_CASE("cost_model: the zero-bubble pipeline's bubble in closed form", "[cost_model][pipeline][zero_bubble]") {
  auto equal = [](int p, int m, double f, double b, double w) {
    const std::vector<double> fs(p, f), bs(p, b), ws(p, w);
    return ZeroBubblePipelineSeconds(fs.data(), bs.data(), ws.data(), p, m, 0);
  };
  CHECK(equal(4, 8, 1.0, 1.0, 1.0) == Approx(8 * 3.0 + 3 * 1.0).epsilon(1e-12));
  CHECK(equal(4, 16, 1.0, 1.3, 0.7) == Approx(16 * 3.0 + 3 * (1.0 + 1.3 - 0.7)).epsilon(1e-12));
  CHECK(equal(8, 32, 0.9, 1.4, 0.6) == Approx(32 * 2.9 + 7 * (0.9 + 1.4 - 0.6)).epsilon(1e-12));
  CHECK(equal(2, 4, 1.0, 1.5, 0.5) == Approx(4 * 3.0 + 1 * 2.0).epsilon(1e-12));
  // W longer than B: the fill's forwards are all that is left.
  CHECK(equal(4, 8, 1.0, 0.8, 1.2) == Approx(8 * 3.0 + 3 * 1.0).epsilon(1e-12));
  // W longer than F: the backwards' way up.
  CHECK(equal(4, 8, 0.5, 1.5, 1.0) == Approx(8 * 3.0 + 3 * 1.5).epsilon(1e-12));
  // Fewer micro-batches than stages: only m − 1 of the p − 1 W passes fill the bubble.
  CHECK(equal(4, 1, 1.0, 1.3, 0.7) == Approx(4 * (1.0 + 1.3) + 0.7).epsilon(1e-12));
  CHECK(equal(8, 3, 1.0, 1.3, 0.7) == Approx(3 * 3.0 + 7 * 1.6 + 5 * 0.7).epsilon(1e-12));
  // Never more than 1F1B's bubble with the same passes, less whenever W > 0.
  for (int p : {2, 4, 8}) {
    for (int m : {1, 4, 8, 32}) {
      const std::vector<double> per(p, 3.0);
      CHECK(equal(p, m, 1.0, 1.3, 0.7) < PipelineSeconds(per.data(), p, m, 1));
    }
  }
}

TEST_CASE("cost_model: a heavier last stage ends the zero-bubble step on the first stage's W",
          "[cost_model][pipeline][zero_bubble]") {
  // The last stage (the LM head) runs its m micro-batches from the fill's
  // forwards on; its last B reaches stage 0 through the others' B, then
  // stage 0's one W; the last stage's own p W passes end beside that.
  const int p = 4, m = 8;
  const std::vector<double> f = {1.0, 1.0, 1.0, 1.3}, b = {1.4, 1.4, 1.4, 1.8}, w = {0.7, 0.7, 0.7, 0.9};
  const double last = m * (1.3 + 1.8 + 0.9);
  const double fill = 3 * 1.0;
  const double tail = std::max(0.0, 3 * 1.4 + 0.7 - p * 0.9);
  CHECK(ZeroBubblePipelineSeconds(f.data(), b.data(), w.data(), p, m, 3) == Approx(fill + last + tail).epsilon(1e-12));
}

TEST_CASE("cost_model: ComposePipeline runs the zero-bubble pipeline over F, B and W",
          "[cost_model][pipeline][zero_bubble]") {
  const std::vector<double> per_mb = {1.0, 1.0, 1.0, 1.25};
  const std::vector<double> on = {0.010, 0.020, 0.030, 0.040};
  const std::vector<double> after = {0.300, 0.100, 0.100, 0.200};
  ConfigShape cs;
  cs.pp = 4;
  cs.m = 8;
  StagePlan plan = PlanOf(per_mb, on, after);
  const PipelineStep one_f_one_b = ComposePipeline(plan, cs);
  plan.zero_bubble = true;
  std::vector<double> f(4), b(4), w(4);
  for (int s = 0; s < 4; ++s) {
    StageResult& t = plan.shapes[s].t;
    t.wgrad_mb = 0.3 * t.bwd_mb;
    t.fwd_side_mb = 0.0;
    f[s] = t.fwd_mb;
    w[s] = t.wgrad_mb;
    b[s] = t.per_mb - f[s] - w[s];
  }
  const PipelineStep zb = ComposePipeline(plan, cs);
  CHECK(zb.critical == 3);
  // The same once-per-step additions as 1F1B, around the zero-bubble pipeline.
  CHECK(zb.step_s ==
        Approx(ZeroBubblePipelineSeconds(f.data(), b.data(), w.data(), 4, 8, 3) + 0.060 + 0.040 + 0.300).epsilon(1e-12));
  CHECK(zb.step_s < one_f_one_b.step_s);
}
