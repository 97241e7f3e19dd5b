// The tied word embedding's gradient all-reduce between the first and last
// pipeline stage (comm_plan.h TiedEmbeddingCollective): a blocking step-end
// AllReduce of V·h/tp elements in stack.tied_grad_bytes over the pair, on
// the first stage's embedding and the last stage's LM head.
#include <catch2/catch.hpp>

#include <string>

#include "cost_model/collective_cost.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"
#include "report_dimensions.h"
#include "test_specs.h"
#include "topology/group_path.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

constexpr int64_t kHidden = 4096;
constexpr int64_t kVocab = 50304;

ModelSpec Model(bool tied, int64_t vocab = kVocab) {
  ModelSpec m = testing::Gpt(kHidden, 48, 32, vocab);
  m.tied_embeddings = tied;
  return m;
}

// 8 nodes of 8 H100s; with the default order pp is the outermost dimension,
// so the first and last stage sit on different nodes.
ClusterSpec Cluster() { return testing::Dgx(testing::H100(), 8); }

AnalyticalEvaluator Make(const ModelSpec& m, const std::string& stack = "megatron-core") {
  return AnalyticalEvaluator(m, Cluster(), testing::Job(128, 2048), LoadSoftwareStack(stack));
}

// The tied all-reduce as the workload records it on `stage` (null when absent).
const WorkloadCollective* Tied(const StepWorkload& wl, int stage) {
  for (const LayerWork& l : wl.stages[stage].layers)
    for (const WorkloadCollective& c : l.collectives)
      if (c.what == "pp_tied_embedding") return &c;
  return nullptr;
}

int TiedCount(const StepWorkload& wl) {
  int n = 0;
  for (const StageWork& s : wl.stages)
    for (const LayerWork& l : s.layers)
      for (const WorkloadCollective& c : l.collectives) n += c.what == "pp_tied_embedding";
  return n;
}

}  // namespace

TEST_CASE("tied embedding pp: closed form on the pp = 2 pair", "[cost_model][tied_pp]") {
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=8,pp=2,sharding=zero1");
  const StepWorkload wl = Make(Model(true)).BuildWorkload(c);
  const WorkloadCollective* first = Tied(wl, 0);
  const WorkloadCollective* last = Tied(wl, 1);
  REQUIRE(first != nullptr);
  REQUIRE(last != nullptr);
  CHECK(first->op == CollectiveOp::kAllReduce);
  CHECK(first->phase == CommPhase::kStepEnd);
  CHECK(first->blocking);
  CHECK(first->dim == ParallelDim::kPp);
  // V·h/tp elements of the fp32 main_grad.
  const double bytes = static_cast<double>(kVocab) * kHidden / 8 * 4;
  CHECK(first->size.si() == bytes);
  // At pp = 2 the pair is the whole pp group: the placed path's AllReduce.
  const ClusterSpec cluster = Cluster();
  const GroupPath path = ResolveGroupPath(cluster, c, ParallelDim::kPp);
  REQUIRE(path.ranks == 2);
  REQUIRE(path.crosses_nodes);
  const double t = EstimateCollective(CollectiveOp::kAllReduce, Bytes(bytes), path,
                                      NcclFeaturesFor(cluster, LoadSoftwareStack("megatron-core").nccl_version))
                       .time.si();
  CHECK_THAT(first->duration.si(), WithinRel(t, 1e-12));
  CHECK_THAT(last->duration.si(), WithinRel(t, 1e-12));
  CHECK(TiedCount(wl) == 2);
}

TEST_CASE("tied embedding pp: the first-last pair of a longer pipeline", "[cost_model][tied_pp]") {
  // pp = 4: stages one node pair apart (stride 16 GPUs); the pair has one
  // member per node and its own NIC share, as the pp = 2 group: same time.
  const AnalyticalEvaluator e = Make(Model(true));
  const StepWorkload wl2 = e.BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=2,sharding=zero1"));
  const StepWorkload wl4 = e.BuildWorkload(ParseParallelConfig("dp=2,tp=8,pp=4,sharding=zero1"));
  REQUIRE(Tied(wl4, 0) != nullptr);
  REQUIRE(Tied(wl4, 3) != nullptr);
  CHECK(Tied(wl4, 1) == nullptr);
  CHECK(Tied(wl4, 2) == nullptr);
  CHECK(TiedCount(wl4) == 2);
  CHECK_THAT(Tied(wl4, 0)->duration.si(), WithinRel(Tied(wl2, 0)->duration.si(), 1e-12));
  // The recorded group is the pair (the simulator's tier C times it there):
  // resolved, it gives the recorded time back.
  for (const char* config : {"dp=4,tp=8,pp=2,sharding=zero1", "dp=2,tp=8,pp=4,sharding=zero1"}) {
    INFO(config);
    const ParallelConfig c = ParseParallelConfig(config);
    const StepWorkload wl = e.BuildWorkload(c);   // kept: w points into it
    const WorkloadCollective* w = Tied(wl, 0);
    REQUIRE(w != nullptr);
    CHECK(w->sub.ends);
    const double t = EstimateCollective(w->op, w->size, ResolveGroupPath(e.cluster(), c, w->dim, w->sub),
                                        NcclFeaturesFor(e.cluster(), LoadSoftwareStack("megatron-core").nccl_version))
                         .time.si();
    CHECK_THAT(w->duration.si(), WithinRel(t, 1e-12));
  }
}

TEST_CASE("tied embedding pp: untied, pp = 1 and stacks without it are unchanged", "[cost_model][tied_pp]") {
  const ParallelConfig pp4 = ParseParallelConfig("dp=2,tp=8,pp=4,sharding=zero1");
  CHECK(TiedCount(Make(Model(false)).BuildWorkload(pp4)) == 0);
  CHECK(TiedCount(Make(Model(true)).BuildWorkload(ParseParallelConfig("dp=8,tp=8,sharding=zero1"))) == 0);
  // torchtitan refuses weight tying under pipeline parallelism.
  CHECK(LoadSoftwareStack("torchtitan").tied_grad_bytes == 0);
  CHECK(TiedCount(Make(Model(true), "torchtitan").BuildWorkload(pp4)) == 0);
}

TEST_CASE("tied embedding pp: priced as pp communication, blocking, once per step", "[cost_model][tied_pp]") {
  const ParallelConfig c = ParseParallelConfig("dp=2,tp=8,pp=4,sharding=zero1");
  const Report tied = Make(Model(true)).Evaluate(c);
  const Report untied = Make(Model(false)).Evaluate(c);
  const double t = Tied(Make(Model(true)).BuildWorkload(c), 0)->duration.si();
  REQUIRE(t > 0);
  // The critical rank pays it once, exposed, as pp communication; nothing
  // else moves (both copies were already in memory and in the dp reduction).
  CHECK_THAT(testing::DimTotal(tied, "pp") - testing::DimTotal(untied, "pp"), WithinRel(t, 1e-9));
  CHECK_THAT(testing::DimExposed(tied, "pp") - testing::DimExposed(untied, "pp"), WithinRel(t, 1e-9));
  CHECK_THAT(tied.exposed_comm.si() - untied.exposed_comm.si(), WithinRel(t, 1e-9));
  CHECK_THAT(testing::DimTotal(tied, "dp"), WithinRel(testing::DimTotal(untied, "dp"), 1e-12));
  CHECK_THAT(testing::DimExposed(tied, "dp"), WithinRel(testing::DimExposed(untied, "dp"), 1e-12));
  // No dimension is exposed beyond its own total.
  for (const auto& d : tied.by_dimension) {
    INFO(d.name);
    CHECK(d.exposed.si() <= d.total.si() * (1 + 1e-12));
  }
  CHECK(tied.step_time.si() > untied.step_time.si());
  CHECK(tied.step_time.si() <= untied.step_time.si() + t * (1 + 1e-9));
}

TEST_CASE("tied embedding pp: grows with the vocabulary and the gradient bytes", "[cost_model][tied_pp]") {
  const ParallelConfig c = ParseParallelConfig("dp=2,tp=8,pp=4,sharding=zero1");
  double prev = 0;
  for (int64_t v : {32000, 64000, 128000, 256000}) {
    const double t = Tied(Make(Model(true, v)).BuildWorkload(c), 0)->duration.si();
    CHECK(t > prev);
    prev = t;
  }
  // fp16 gradients (megatron-lm-2021): half the bytes, less time.
  const double fp32 = Tied(Make(Model(true)).BuildWorkload(c), 0)->duration.si();
  const double fp16 = Tied(Make(Model(true), "megatron-lm-2021").BuildWorkload(c), 0)->duration.si();
  CHECK(fp16 < fp32);
}
