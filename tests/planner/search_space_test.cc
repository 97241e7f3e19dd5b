#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "planner/search_space.h"
#include "test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::Job;
using parasim::planner::testing::TinyModel;

namespace {

SpaceOptions Small() {
  SpaceOptions o;
  o.zero_bubble = false;
  o.zero2_replicated = false;
  return o;
}

std::set<std::string> ConfigStrings(const SearchSpace& s) {
  std::set<std::string> out;
  for (size_t i = 0; i < s.candidates.size(); ++i) out.insert(s.ToConfig(i).ToString());
  return out;
}

}  // namespace

TEST_CASE("planner: divisors", "[planner]") {
  CHECK(Divisors(1) == std::vector<int64_t>{1});
  CHECK(Divisors(12) == std::vector<int64_t>{1, 2, 3, 4, 6, 12});
  CHECK(Divisors(16) == std::vector<int64_t>{1, 2, 4, 8, 16});
}

TEST_CASE("planner: enumeration of 2 GPUs matches a hand count", "[planner]") {
  // 2 GPUs, 2 layers, 2 heads, batch 2, sequence 4. Layouts (tp,pp,cp,dp):
  //  (1,1,1,2): mbs {1} x {ddp,zero1,zero2,zero3} x 3 recompute            = 12
  //  (1,1,2,1): mbs {1,2} x 4 shardings x cp_comm {p2p,a2a,allgather} x 3 = 72
  //  (1,2,1,1): mbs {1,2} x 4 x {gpipe,1f1b} (no vpp: 1 layer/stage) x 3   = 48
  //  (2,1,1,1): mbs {1,2} x 4 x sp {off,on} x 3                            = 48
  const SearchSpace s = EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, ConstraintSet{}, Small());
  CHECK(s.candidates.size() == 180);
  CHECK(s.searched == 180);
  CHECK(s.rejected.empty());
  CHECK(s.ladders.size() == 60);
  for (const Ladder& l : s.ladders) CHECK(l.count == 3);

  // tp=1 cuts the tp=2 layout as one entry; recompute=none cuts 2 of each ladder.
  const SearchSpace c =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, ConstraintSet::Parse("tp=1,recompute=none"), Small());
  CHECK(c.candidates.size() == 44);
  CHECK(c.rejected.at("constraint") == 1 + 2 * 44);
  CHECK(c.searched == 133);
}

TEST_CASE("planner: cp is searched only with the kinds the stack runs and the heads allow", "[planner]") {
  // 2 GPUs, cp=2 only: 2 heads split over cp=2 (a2a fine), 1 head not.
  const ConstraintSet cp2 = ConstraintSet::Parse("cp=2");
  auto kinds = [&](const SearchSpace& s) {
    std::set<std::string> out;
    for (size_t i = 0; i < s.candidates.size(); ++i) out.insert(ToString(s.ToConfig(i).cp_comm));
    return out;
  };
  const SearchSpace all = EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, Small());
  CHECK(kinds(all) == std::set<std::string>{"p2p", "a2a", "allgather"});
  // Megatron-Core runs all three; DeepSpeed only Ulysses; PyTorch 2.3 only the ring; nanotron none.
  const SearchSpace megatron =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("megatron-core"), Small()));
  CHECK(kinds(megatron) == std::set<std::string>{"p2p", "a2a", "allgather"});
  const SearchSpace deepspeed =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("deepspeed-zero"), Small()));
  CHECK(kinds(deepspeed) == std::set<std::string>{"a2a"});
  const SearchSpace torch23 =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("pytorch-fsdp"), Small()));
  CHECK(kinds(torch23) == std::set<std::string>{"p2p"});
  const SearchSpace titan =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("torchtitan"), Small()));
  CHECK(kinds(titan) == std::set<std::string>{"p2p", "allgather"});
  const SearchSpace nano =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("nanotron"), Small()));
  CHECK(nano.candidates.empty());
  // One head cannot split over cp=2: Ulysses-only DeepSpeed has no cp layout left.
  const SearchSpace one_head =
      EnumerateSpace(TinyModel(2, 1), Job(2, 4), 2, 8, cp2, SpaceFor(LoadSoftwareStack("deepspeed-zero"), Small()));
  CHECK(one_head.candidates.empty());
  CHECK(one_head.rejected.at("divisibility: heads % tp·cp (cp_comm=a2a)") == 1);
  // A constraint picks the kind.
  const SearchSpace picked =
      EnumerateSpace(TinyModel(2, 2), Job(2, 4), 2, 8, ConstraintSet::Parse("cp=2,cp_comm=allgather"), Small());
  CHECK(kinds(picked) == std::set<std::string>{"allgather"});
}

TEST_CASE("planner: enumeration counts divisibility cuts once per layout", "[planner]") {
  // 4 GPUs, 2 layers, 2 heads, sequence 4, batch 2: tp=4 breaks the heads
  // (1 layout), pp=4 the layers (1), cp=4 the 2·cp sequence split (1), and
  // dp=4 the batch of 2 (1).
  const SearchSpace s = EnumerateSpace(TinyModel(2, 2), Job(2, 4), 4, 8, ConstraintSet{}, Small());
  CHECK(s.rejected.at("divisibility: attention heads % tp") == 1);
  CHECK(s.rejected.at("layers: pp above the layers") == 1);
  CHECK(s.rejected.at("divisibility: seq_len % (2 cp)") == 1);   // cp=4: 4 % 8; cp=2: 4 % 4 is fine
  CHECK(s.rejected.at("divisibility: global batch % dp") == 1);
  int64_t rejected = 0;
  for (const auto& [reason, n] : s.rejected) rejected += n;
  CHECK(s.searched == static_cast<int64_t>(s.candidates.size()) + rejected);
}

TEST_CASE("planner: the space equals a brute force filtered by ParallelConfig::Validate", "[planner]") {
  // Brute force over raw domains; the planner's extra space rules are listed
  // here explicitly (layers % pp, hsdp 1 < G < dp, pp = 1 runs 1f1b only).
  const ModelSpec model = TinyModel(4, 4, 64);
  const JobSpec job = Job(8, 16);
  const int gpus = 8;
  SpaceOptions options;   // full space: zero-bubble and zero2-replicated included
  const SearchSpace space = EnumerateSpace(model, job, gpus, 4, ConstraintSet{}, options);

  std::set<std::string> brute;
  const PipelineSchedule schedules[] = {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B,
                                        PipelineSchedule::kInterleaved, PipelineSchedule::kZeroBubble};
  const ShardingMode shardings[] = {ShardingMode::kDdp, ShardingMode::kZero1, ShardingMode::kZero2Replicated,
                                    ShardingMode::kZero2, ShardingMode::kZero3, ShardingMode::kHsdp};
  const RecomputeMode recomputes[] = {RecomputeMode::kNone, RecomputeMode::kSelective, RecomputeMode::kFull};
  for (int tp = 1; tp <= gpus; ++tp)
    for (int pp = 1; pp <= gpus; ++pp)
      for (int cp = 1; cp <= gpus; ++cp)
        for (int dp = 1; dp <= gpus; ++dp) {
          if (tp * pp * cp * dp != gpus) continue;
          if (model.num_layers % pp != 0) continue;
          for (int mbs = 1; mbs <= job.global_batch; ++mbs)
            for (ShardingMode sh : shardings)
              for (int g = 0; g <= dp; ++g) {
                if ((sh == ShardingMode::kHsdp) != (g > 0)) continue;
                if (sh == ShardingMode::kHsdp && (g == 1 || g == dp)) continue;
                for (RecomputeMode rc : recomputes)
                  for (int sp = 0; sp < 2; ++sp)
                    for (int vpp = 1; vpp <= model.num_layers; ++vpp)
                      for (PipelineSchedule sc : schedules) {
                        if (pp == 1 && sc != PipelineSchedule::k1F1B) continue;
                        ParallelConfig c;
                        c.dp = dp; c.tp = tp; c.pp = pp; c.cp = cp;
                        c.micro_batch = mbs; c.sharding = sh; c.hsdp_group = g;
                        c.recompute = rc; c.sequence_parallel = sp == 1; c.vpp = vpp; c.schedule = sc;
                        for (CpComm kind : {CpComm::kP2p, CpComm::kA2a, CpComm::kAllGather}) {
                          if (cp == 1 && kind != CpComm::kP2p) continue;   // no kind without cp
                          c.cp_comm = kind;
                          if (c.Validate(model, job, gpus).empty()) brute.insert(c.ToString());
                        }
                        // a2a+p2p: all-to-all groups strictly inside cp whose tp·a ranks
                        // divide the node of 4 (the planner's node rule).
                        for (int a = 2; a < cp; ++a) {
                          if (4 % (tp * a) != 0) continue;
                          ParallelConfig h = c;
                          h.cp_comm = CpComm::kA2aP2p;
                          h.cp_a2a_size = a;
                          if (h.Validate(model, job, gpus).empty()) brute.insert(h.ToString());
                        }
                      }
              }
        }
  const std::set<std::string> planned = ConfigStrings(space);
  CHECK(planned.size() == space.candidates.size());   // no duplicates
  CHECK(planned == brute);
  CHECK(brute.size() > 500);
}

TEST_CASE("planner: a2a+p2p comes with the all-to-all groups that stay in a node", "[planner]") {
  // 16 GPUs in nodes of 4, cp = 16: the all-to-all group a (1 < a < cp)
  // with tp·a dividing the node; the heads (8) split over tp·a.
  auto sizes = [](const SearchSpace& s) {
    std::set<int> out;
    for (size_t i = 0; i < s.candidates.size(); ++i) {
      const ParallelConfig c = s.ToConfig(i);
      if (c.cp_comm != CpComm::kA2aP2p) continue;
      CHECK(c.CpA2aSize() * c.CpRingSize() == c.cp);
      CHECK(c.Validate(TinyModel(2, 8), Job(1, 64), 16).empty());
      out.insert(c.cp_a2a_size);
    }
    return out;
  };
  const SpaceOptions megatron = SpaceFor(LoadSoftwareStack("megatron-core"), Small());
  CHECK(sizes(EnumerateSpace(TinyModel(2, 8), Job(1, 64), 16, 4, ConstraintSet::Parse("cp=16"), megatron)) ==
        std::set<int>{2, 4});
  CHECK(sizes(EnumerateSpace(TinyModel(2, 8), Job(1, 64), 16, 4, ConstraintSet::Parse("cp=8,tp=2"), megatron)) ==
        std::set<int>{2});
  // Nodes of 8: a = 8 (all-to-all inside the node, ring of 2 across).
  CHECK(sizes(EnumerateSpace(TinyModel(2, 8), Job(1, 64), 16, 8, ConstraintSet::Parse("cp=16"), megatron)) ==
        std::set<int>{2, 4, 8});
  // Two heads: only a = 2 splits them.
  CHECK(sizes(EnumerateSpace(TinyModel(2, 2), Job(1, 64), 16, 8, ConstraintSet::Parse("cp=16"), megatron)) ==
        std::set<int>{2});
  // Stacks without the kind, and the constraint word.
  CHECK(sizes(EnumerateSpace(TinyModel(2, 8), Job(1, 64), 16, 4, ConstraintSet::Parse("cp=16"),
                             SpaceFor(LoadSoftwareStack("torchtitan"), Small())))
            .empty());
  const SearchSpace picked = EnumerateSpace(TinyModel(2, 8), Job(1, 64), 16, 4,
                                            ConstraintSet::Parse("cp=16,cp_comm=a2a+p2p"), megatron);
  CHECK_FALSE(picked.candidates.empty());
  for (size_t i = 0; i < picked.candidates.size(); ++i) CHECK(picked.ToConfig(i).cp_comm == CpComm::kA2aP2p);
}

TEST_CASE("planner: enumeration is in canonical order and deterministic", "[planner]") {
  const ModelSpec model = TinyModel(4, 4, 64);
  const SearchSpace a = EnumerateSpace(model, Job(8, 16), 8, 4, ConstraintSet{});
  const SearchSpace b = EnumerateSpace(model, Job(8, 16), 8, 4, ConstraintSet{});
  REQUIRE(a.candidates.size() == b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) CHECK(a.ToConfig(i).ToString() == b.ToConfig(i).ToString());
  // Lexicographic: tp never decreases along the candidates.
  for (size_t i = 1; i < a.candidates.size(); ++i) CHECK(a.candidates[i - 1].tp <= a.candidates[i].tp);
}

TEST_CASE("planner: tp is limited to two nodes unless asked", "[planner]") {
  const ModelSpec model = TinyModel(4, 64, 256);
  const SearchSpace s = EnumerateSpace(model, Job(64, 16), 64, 8, ConstraintSet::Parse("pp=1,cp=1"));
  int max_tp = 0;
  for (const Candidate& c : s.candidates) max_tp = std::max(max_tp, static_cast<int>(c.tp));
  CHECK(max_tp == 16);
  CHECK(s.rejected.at("limit: tp beyond two nodes") > 0);
  SpaceOptions wide;
  wide.max_tp = 64;
  const SearchSpace w = EnumerateSpace(model, Job(64, 16), 64, 8, ConstraintSet::Parse("pp=1,cp=1"), wide);
  max_tp = 0;
  for (const Candidate& c : w.candidates) max_tp = std::max(max_tp, static_cast<int>(c.tp));
  CHECK(max_tp == 64);
  // Naming tp in a constraint lifts the default limit.
  const SearchSpace asked = EnumerateSpace(model, Job(64, 16), 64, 8, ConstraintSet::Parse("pp=1,cp=1,tp>=32"));
  REQUIRE(!asked.candidates.empty());
  CHECK(asked.candidates.back().tp == 64);
}

TEST_CASE("planner: placement orders come only when asked", "[planner]") {
  const ModelSpec model = TinyModel(2, 2);
  const SearchSpace d = EnumerateSpace(model, Job(2, 4), 2, 8, ConstraintSet{});
  CHECK(d.orders == std::vector<std::string>{DefaultOrder()});
  const SearchSpace any = EnumerateSpace(model, Job(2, 4), 2, 8, ConstraintSet::Parse("order=any"));
  CHECK(any.orders.size() == 120);
  CHECK(any.candidates.size() == 120 * d.candidates.size());
  const SearchSpace two =
      EnumerateSpace(model, Job(2, 4), 2, 8, ConstraintSet::Parse("order in tp-cp-ep-dp-pp|dp-tp-cp-ep-pp"));
  CHECK(two.candidates.size() == 2 * d.candidates.size());
}

TEST_CASE("planner: MoE layouts put ep inside dp", "[planner]") {
  ModelSpec moe = TinyModel(2, 2);
  moe.num_experts = 4;
  moe.experts_per_token = 2;
  moe.moe_ffn_hidden_size = 64;
  const SearchSpace s = EnumerateSpace(moe, Job(8, 4), 8, 8, ConstraintSet::Parse("tp=1,pp=1,cp=1"));
  std::set<int> eps;
  for (const Candidate& c : s.candidates) {
    CHECK(c.dp % c.ep == 0);
    CHECK(moe.num_experts % c.ep == 0);
    eps.insert(c.ep);
  }
  CHECK(eps == std::set<int>{1, 2, 4});
  CHECK(s.rejected.at("divisibility: experts % ep") == 1);   // ep=8 of 4 experts
}

TEST_CASE("planner: uneven pipeline splits: first and last stages lighter by one or two layers", "[planner]") {
  CHECK(EndsLighterSplit(126, 16, 1) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  CHECK(EndsLighterSplit(32, 4, 2) == std::vector<int>{7, 9, 9, 7});
  CHECK(EndsLighterSplit(32, 4, 1).empty());   // 34 does not split in 4
  CHECK(EndsLighterSplit(32, 2, 1).empty());   // two stages: both are ends
  CHECK(EndsLighterSplit(4, 4, 2).empty());    // an end stage would have no layer
  // Llama-3-405B: 126 layers on pp 16 (126 % 16 != 0) is in the space, split 7:8…8:7.
  ModelSpec m = TinyModel(126, 16, 256);
  const SearchSpace space = EnumerateSpace(m, Job(64, 64), 32, 8, ConstraintSet::Parse("pp=16", "test"));
  REQUIRE_FALSE(space.candidates.empty());
  for (size_t i = 0; i < space.candidates.size(); ++i) {
    const ParallelConfig c = space.ToConfig(i);
    REQUIRE(c.pp_layers.size() == 16);
    CHECK(c.pp_layers.front() == 7);
    CHECK(c.schedule != PipelineSchedule::kInterleaved);
  }
}

TEST_CASE("planner: the stack limits the space to what its framework supports", "[planner]") {
  ModelSpec m = TinyModel(8, 16, 256);
  const JobSpec job = Job(64, 64);
  auto modes = [&](const std::string& stack, bool pp_only) {
    const SearchSpace space =
        EnumerateSpace(m, job, 32, 8, ConstraintSet::Parse(pp_only ? "pp=2" : "pp=1", "test"),
                       SpaceFor(LoadSoftwareStack(stack)));
    std::set<std::string> out;
    for (size_t i = 0; i < space.candidates.size(); ++i) {
      const ParallelConfig c = space.ToConfig(i);
      out.insert(ToString(c.sharding));
      if (c.cp > 1) out.insert("cp");
      out.insert(ToString(c.schedule));
    }
    return out;
  };
  const auto m2021 = modes("megatron-lm-2021", true);
  CHECK(m2021.count("zero1") == 0);
  CHECK(m2021.count("zero3") == 0);
  CHECK(m2021.count("cp") == 0);
  CHECK(m2021.count("interleaved") == 1);
  const auto ds_pp = modes("deepspeed-zero", true);   // ZeRO-2/3 do not run under DeepSpeed's pipeline
  CHECK(ds_pp.count("zero1") == 1);
  CHECK(ds_pp.count("zero2") == 0);
  CHECK(ds_pp.count("zero3") == 0);
  const auto ds = modes("deepspeed-zero", false);
  CHECK(ds.count("zero3") == 1);
  const auto fsdp = modes("pytorch-fsdp", true);
  CHECK(fsdp.count("zb-h1") == 0);   // zero-bubble schedules came after PyTorch 2.3
  // Compiled blocks cannot run PyTorch's zero-bubble schedules; eager ones can.
  CHECK(modes("torchtitan", true).count("zb-h1") == 0);
  CHECK(modes("pytorch-fsdp2", true).count("zb-h1") == 0);
  CHECK(modes("pytorch-fsdp2-eager", true).count("zb-h1") == 1);
}

TEST_CASE("planner: partial recompute rungs come only with a stack that runs them, valid and in share order",
          "[planner][recompute]") {
  // 16 layers on 8 GPUs: at pp=4 a stage holds 4 layers, so N = 1, 2, 3.
  const ConstraintSet none;
  const SearchSpace megatron =
      EnumerateSpace(TinyModel(16, 8), Job(16, 64), 8, 8, none, SpaceFor(LoadSoftwareStack("megatron-core"), Small()));
  const SearchSpace fsdp =
      EnumerateSpace(TinyModel(16, 8), Job(16, 64), 8, 8, none, SpaceFor(LoadSoftwareStack("pytorch-fsdp"), Small()));
  const ModelSpec model = TinyModel(16, 8);
  const JobSpec job = Job(16, 64);
  int partial = 0;
  for (size_t i = 0; i < megatron.candidates.size(); ++i) {
    const ParallelConfig c = megatron.ToConfig(i);
    if (c.recompute_layers == 0) continue;
    ++partial;
    INFO(c.ToString());
    CHECK(c.Validate(model, job, 8).empty());
    CHECK(c.RecomputedLayers(c.StageLayers(model).front()) < c.StageLayers(model).front());
  }
  CHECK(partial > 0);
  for (size_t i = 0; i < fsdp.candidates.size(); ++i) CHECK(fsdp.ToConfig(i).recompute_layers == 0);
  // A ladder's rungs: none, selective (attention-only: a small share), then N
  // rising, then full.
  for (const Ladder& l : megatron.ladders) {
    double share = -1;
    for (uint32_t k = 0; k < l.count; ++k) {
      const ParallelConfig c = megatron.ToConfig(l.first + k);
      const std::vector<int> stages = c.StageLayers(model);
      const int stage = *std::min_element(stages.begin(), stages.end());
      const double s = c.recompute == RecomputeMode::kNone        ? 0.0
                       : c.recompute == RecomputeMode::kSelective ? 0.0
                                                                  : static_cast<double>(c.RecomputedLayers(stage)) / stage;
      CHECK(s >= share);
      share = s;
    }
  }
}

TEST_CASE("planner: megatron-core's interleaved candidates hold whole chunks of layers", "[planner]") {
  // 40 layers on 8 GPUs: pp=4 gives 10 layers a stage, which split into
  // vpp = 2, 5, 10 equal chunks but not 3 or 4. Megatron-Core builds equal
  // chunks only (get_num_layers_to_build asserts layers per rank % vpp == 0,
  // NVIDIA/Megatron-LM d98e8a6 megatron/core/transformer/transformer_block.py);
  // other splits need a hand-written --pipeline-model-parallel-layout, which
  // the planner does not write.
  const SpaceOptions megatron = SpaceFor(LoadSoftwareStack("megatron-core"), Small());
  const SearchSpace s = EnumerateSpace(TinyModel(40, 2), Job(8, 4), 8, 8, ConstraintSet::Parse("tp=1,dp=2,pp=4"), megatron);
  std::set<int> vpps;
  for (size_t i = 0; i < s.candidates.size(); ++i) {
    const ParallelConfig c = s.ToConfig(i);
    if (c.vpp <= 1) continue;
    INFO(c.ToString());
    REQUIRE(c.pp == 4);
    CHECK(40 / c.pp % c.vpp == 0);
    vpps.insert(c.vpp);
  }
  CHECK(vpps == std::set<int>{2, 5, 10});
}
