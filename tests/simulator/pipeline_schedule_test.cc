#include "simulator/pipeline_schedule.h"

#include <catch2/catch.hpp>

#include <map>
#include <tuple>

#include "cost_model/evaluator_stage_time.h"
#include "cost_model/memory.h"
#include "simulator/engine.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

// Time of each pass kind on each stage (seconds, per micro-batch and chunk).
struct PassTimes {
  std::vector<double> forward_s, backward_s, weight_s;
};

struct PipelineRun {
  double makespan_s = 0;
  double idle_fraction = 0;   // 1 - busy / (stages * makespan)
};

// Runs an order on the engine with free communication: one compute stream per
// stage; a pass waits for its upstream pass. Times are per stage, per chunk.
PipelineRun RunPipeline(const std::vector<std::vector<PipelinePass>>& order, int chunks,
                        const PassTimes& times) {
  const int p = static_cast<int>(order.size());
  TaskGraph g;
  std::map<std::tuple<int, int, int, int>, int32_t> op_of;
  double busy = 0;
  for (int s = 0; s < p; ++s) {
    int stream = g.AddStream(g.AddRank("stage"), StreamKind::kCompute);
    for (const PipelinePass& pass : order[s]) {
      double t = pass.kind == PassKind::kForward    ? times.forward_s[s]
                 : pass.kind == PassKind::kBackward ? times.backward_s[s]
                                                    : times.weight_s[s];
      busy += t;
      op_of[{s, static_cast<int>(pass.kind), pass.micro_batch, pass.chunk}] =
          g.AddOp(stream, {.kind = WorkKind::kMatmul, .duration_s = t});
    }
  }
  for (int s = 0; s < p; ++s) {
    for (const PipelinePass& pass : order[s]) {
      UpstreamPass up = PassUpstream(s, pass, p, chunks);
      if (!up.has_upstream) continue;
      auto key = std::make_tuple(up.stage, static_cast<int>(up.pass.kind), up.pass.micro_batch, up.pass.chunk);
      REQUIRE(op_of.count(key) == 1);
      g.AddDependency(op_of.at(key), op_of.at({s, static_cast<int>(pass.kind), pass.micro_batch, pass.chunk}));
    }
  }
  g.Finalize();
  Engine e;
  const Timeline& t = e.Run(g, {});
  return {t.makespan_s, 1.0 - busy / (p * t.makespan_s)};
}

PassTimes Equal(int p, double f, double b, double w = 0) {
  return PassTimes{std::vector<double>(p, f), std::vector<double>(p, b), std::vector<double>(p, w)};
}

TEST_CASE("simulator: every schedule runs each pass exactly once", "[simulator]") {
  auto [schedule, chunks] = GENERATE(std::make_pair(PipelineSchedule::kGpipe, 1),
                                     std::make_pair(PipelineSchedule::k1F1B, 1),
                                     std::make_pair(PipelineSchedule::kInterleaved, 2),
                                     std::make_pair(PipelineSchedule::kInterleaved, 4),
                                     std::make_pair(PipelineSchedule::kZeroBubble, 1));
  const int p = 4, m = 8;
  auto order = BuildPipelineOrder(schedule, p, m, chunks);
  for (int s = 0; s < p; ++s) {
    std::map<std::tuple<int, int, int>, int> seen;
    for (const auto& pass : order[s]) ++seen[{static_cast<int>(pass.kind), pass.micro_batch, pass.chunk}];
    int kinds = schedule == PipelineSchedule::kZeroBubble ? 3 : 2;
    REQUIRE(static_cast<int>(seen.size()) == kinds * m * chunks);
    for (auto& [key, count] : seen) REQUIRE(count == 1);
  }
}

TEST_CASE("simulator: 1F1B idle fraction is (p-1)/(m+p-1)", "[simulator]") {
  // Equal stages, F = 1, B = 2, free communication (Narayanan et al. 2021 §2.2).
  auto [p, m] = GENERATE(std::make_pair(2, 4), std::make_pair(4, 8), std::make_pair(8, 32),
                         std::make_pair(8, 128), std::make_pair(4, 3));
  PipelineRun run = RunPipeline(BuildPipelineOrder(PipelineSchedule::k1F1B, p, m, 1), 1, Equal(p, 1, 2));
  double expected = (p - 1.0) / (m + p - 1.0);
  REQUIRE_THAT(run.idle_fraction, WithinRel(expected, 0.01));
  REQUIRE_THAT(run.makespan_s, WithinRel(3.0 * (m + p - 1), 1e-12));
}

TEST_CASE("simulator: GPipe has the same bubble as 1F1B", "[simulator]") {
  const int p = 4, m = 16;
  PipelineRun run = RunPipeline(BuildPipelineOrder(PipelineSchedule::kGpipe, p, m, 1), 1, Equal(p, 1, 2));
  REQUIRE_THAT(run.idle_fraction, WithinRel((p - 1.0) / (m + p - 1.0), 0.01));
}

TEST_CASE("simulator: interleaved 1F1B idle fraction is (p-1)/(v*m+p-1)", "[simulator]") {
  // Each of v chunks takes 1/v of the stage's time (F = 1/v, B = 2/v).
  auto [p, m, v] = GENERATE(std::make_tuple(4, 8, 2), std::make_tuple(4, 16, 4), std::make_tuple(8, 32, 2),
                            std::make_tuple(2, 4, 3), std::make_tuple(4, 4, 2), std::make_tuple(8, 128, 5));
  PipelineRun run =
      RunPipeline(BuildPipelineOrder(PipelineSchedule::kInterleaved, p, m, v), v, Equal(p, 1.0 / v, 2.0 / v));
  double expected = (p - 1.0) / (v * m + p - 1.0);
  REQUIRE_THAT(run.idle_fraction, WithinRel(expected, 0.01));
}

TEST_CASE("simulator: ZB-H1 cuts the 1F1B bubble to a third with equal F, B, W", "[simulator]") {
  // Qi et al. 2023 §3: ZB-H1 bubble = (p-1)(T_F + T_B - T_W); with F = B = W = 1
  // a stage is busy 3m and idle p-1: idle fraction (p-1)/(3m+p-1).
  auto [p, m] = GENERATE(std::make_pair(4, 8), std::make_pair(8, 24), std::make_pair(4, 32));
  PipelineRun zb = RunPipeline(BuildPipelineOrder(PipelineSchedule::kZeroBubble, p, m, 1), 1, Equal(p, 1, 1, 1));
  REQUIRE_THAT(zb.idle_fraction, WithinRel((p - 1.0) / (3.0 * m + p - 1.0), 0.01));
  // 1F1B with the same total backward (B + W = 2) idles three times as long.
  PipelineRun f1b = RunPipeline(BuildPipelineOrder(PipelineSchedule::k1F1B, p, m, 1), 1, Equal(p, 1, 2));
  REQUIRE_THAT((f1b.makespan_s - 3.0 * m) / (zb.makespan_s - 3.0 * m), WithinRel(3.0, 0.01));
}

TEST_CASE("simulator: tier A's zero-bubble closed form is the replay of ZB-H1's order", "[simulator][zero_bubble]") {
  // Equal stages (any F, B, W, m below and above p) and a heavier last stage
  // (the LM head's): exact. The first stage of equals is the critical one.
  struct Shape {
    int p, m;
    double f, b, w, last;   // last: the last stage's passes scaled by it
  };
  const Shape shapes[] = {{4, 8, 1.0, 1.0, 1.0, 1.0},  {4, 16, 1.0, 1.3, 0.7, 1.0}, {8, 32, 0.9, 1.4, 0.6, 1.0},
                          {2, 4, 1.0, 0.8, 1.2, 1.0},  {4, 8, 0.5, 1.5, 1.0, 1.0},  {8, 3, 1.0, 1.3, 0.7, 1.0},
                          {4, 1, 1.0, 1.3, 0.7, 1.0},  {4, 8, 1.0, 1.4, 0.7, 1.3},  {2, 8, 1.0, 1.2, 0.8, 1.1},
                          {8, 16, 1.0, 1.4, 0.7, 1.25}, {4, 32, 1.0, 1.1, 0.9, 1.4}};
  for (const Shape& k : shapes) {
    INFO("p " << k.p << " m " << k.m << " F " << k.f << " B " << k.b << " W " << k.w << " last x" << k.last);
    PassTimes times = Equal(k.p, k.f, k.b, k.w);
    times.forward_s.back() *= k.last;
    times.backward_s.back() *= k.last;
    times.weight_s.back() *= k.last;
    const int crit = k.last > 1.0 ? k.p - 1 : 0;
    const PipelineRun run = RunPipeline(BuildPipelineOrder(PipelineSchedule::kZeroBubble, k.p, k.m, 1), 1, times);
    CHECK_THAT(ZeroBubblePipelineSeconds(times.forward_s.data(), times.backward_s.data(), times.weight_s.data(), k.p,
                                         k.m, crit),
               WithinRel(run.makespan_s, 1e-12));
  }
}

TEST_CASE("simulator: the slowest stage sets the pipeline's pace", "[simulator]") {
  // Unequal stages (the last holds the LM head: twice the time). Expectation:
  // steady state runs at the slowest stage's F+B per micro-batch, so the step
  // is at least m·(F+B)_slow, and more than the equal-stage step.
  const int p = 4, m = 32;
  PassTimes times = Equal(p, 1, 2);
  times.forward_s[p - 1] = 2;
  times.backward_s[p - 1] = 4;
  PipelineRun run = RunPipeline(BuildPipelineOrder(PipelineSchedule::k1F1B, p, m, 1), 1, times);
  REQUIRE(run.makespan_s >= m * 6.0);
  REQUIRE(run.makespan_s <= m * 6.0 + 3.0 * (p - 1) + 1e-9);
}

TEST_CASE("simulator: upstream passes follow the pipeline's data flow", "[simulator]") {
  // Interleaved with p = 4, v = 2: chunk 1 of stage 0 follows chunk 0 of the
  // last stage; the last backward chunk on the last stage follows the loss.
  UpstreamPass a = PassUpstream(0, {PassKind::kForward, 3, 1}, 4, 2);
  REQUIRE(a.has_upstream);
  REQUIRE(a.stage == 3);
  REQUIRE(a.pass == PipelinePass{PassKind::kForward, 3, 0});
  UpstreamPass b = PassUpstream(3, {PassKind::kBackward, 2, 1}, 4, 2);
  REQUIRE(b.stage == 3);
  REQUIRE(b.pass == PipelinePass{PassKind::kForward, 2, 1});
  UpstreamPass c = PassUpstream(3, {PassKind::kBackward, 2, 0}, 4, 2);
  REQUIRE(c.stage == 0);
  REQUIRE(c.pass == PipelinePass{PassKind::kBackward, 2, 1});
  REQUIRE_FALSE(PassUpstream(0, {PassKind::kForward, 0, 0}, 4, 2).has_upstream);
}

// The memory model's ZB-H1 counts are the replay of tier B's order: walking
// each stage's passes, the micro-batches holding activations (forward done, W
// not) and the deferred ones (I done, W not), at each forward's end and after
// each I before the W that follows, reach their largest values at the same
// pass (so held·A + deferred·G peaks there for any A, G ≥ 0).
TEST_CASE("simulator: the memory model's zero-bubble counts are the replay of ZB-H1's order",
          "[simulator][zero_bubble]") {
  for (int p = 2; p <= 8; ++p) {
    for (int m = 1; m <= 3 * p; ++m) {
      const auto order = BuildPipelineOrder(PipelineSchedule::kZeroBubble, p, m, 1);
      for (int s = 0; s < p; ++s) {
        INFO("p=" << p << " m=" << m << " stage " << s);
        int f = 0, b = 0, w = 0;
        int fwd_held = 0, fwd_deferred = 0, bwd_held = 0, bwd_deferred = 0;
        for (const PipelinePass& pass : order[s]) {
          if (pass.kind == PassKind::kForward) {
            ++f;
            fwd_held = std::max(fwd_held, f - w);
            fwd_deferred = std::max(fwd_deferred, b - w);
          } else if (pass.kind == PassKind::kBackward) {
            ++b;
            bwd_held = std::max(bwd_held, f - w);
            bwd_deferred = std::max(bwd_deferred, b - w);
          } else {
            ++w;
          }
        }
        REQUIRE(w == m);
        const ZeroBubbleHeld model = ZeroBubbleMicroBatchesHeld(p, m, s);
        CHECK(model.forward_held == fwd_held);
        CHECK(model.forward_deferred == fwd_deferred);
        CHECK(model.backward_held == bwd_held);
        CHECK(model.backward_deferred == bwd_deferred);
        CHECK(MicroBatchesInFlight(PipelineSchedule::kZeroBubble, p, m, 1, s) == std::max(fwd_held, bwd_held));
      }
    }
  }
}

}  // namespace
}  // namespace parasim::simulator

namespace parasim::simulator {
namespace {

// Micro-batches whose activations a stage holds at once: forward done, last
// backward pass (B, or W for ZB-H1) not yet.
int PeakInFlight(const std::vector<PipelinePass>& order, bool weight_frees) {
  int live = 0, peak = 0;
  for (const auto& pass : order) {
    if (pass.kind == PassKind::kForward) peak = std::max(peak, ++live);
    if (pass.kind == (weight_frees ? PassKind::kWeightGrad : PassKind::kBackward)) --live;
  }
  return peak;
}

TEST_CASE("simulator: ZB-H1 holds no more activations than 1F1B's first stage", "[simulator]") {
  const int p = 8, m = 32;
  auto zb = BuildPipelineOrder(PipelineSchedule::kZeroBubble, p, m, 1);
  auto f1b = BuildPipelineOrder(PipelineSchedule::k1F1B, p, m, 1);
  REQUIRE(PeakInFlight(f1b[0], false) == p);
  for (int s = 0; s < p; ++s) {
    REQUIRE(PeakInFlight(f1b[s], false) == p - s);
    REQUIRE(PeakInFlight(zb[s], true) <= p);
  }
}

}  // namespace
}  // namespace parasim::simulator
