#include "planner/search_space.h"

#include <algorithm>
#include <cstdint>

#include "core/check.h"
#include "core/error.h"
#include "core/field_registry.h"
#include "core/layout_rules.h"
#include "core/validate.h"

namespace parasim::planner {
namespace {

// One rung of a recompute ladder and the forward share it recomputes.
struct Rung {
  RecomputeMode mode;
  int layers;      // ParallelConfig::recompute_layers
  double share;
};

// Rejection reasons (JSON keys of "rejected"): one per rule, fixed spelling.
constexpr const char* kReasonConstraint = "constraint";
constexpr const char* kReasonTpLimit = "limit: tp beyond two nodes";
constexpr const char* kReasonDegreeLimit = "limit: a degree above 32767";
constexpr const char* kReasonLayers = "divisibility: layers % pp";   // no enumerated split
constexpr const char* kReasonInterleave = "divisibility: micro-batches % pp (interleaved)";
constexpr const char* kReasonStack = "stack: not supported by the framework";
constexpr const char* kReasonCpHeads = "divisibility: heads % tp·cp (cp_comm=a2a)";

std::vector<std::string> AllOrders() {
  std::vector<std::string> dims = {"cp", "dp", "ep", "pp", "tp"};   // sorted: next_permutation visits all
  std::vector<std::string> out;
  do {
    out.push_back(StrCat(dims[0], "-", dims[1], "-", dims[2], "-", dims[3], "-", dims[4]));
  } while (std::next_permutation(dims.begin(), dims.end()));
  return out;
}

std::string ShardingName(ShardingMode mode, int group) {
  return mode == ShardingMode::kHsdp ? StrCat("hsdp:", group) : std::string(parasim::ToString(mode));
}

// (mode, hsdp group) pairs of a layout with `dp` data-parallel ranks, in order.
// (mode, hsdp group) pairs of a layout with `dp` data-parallel ranks, in
// order, as far as the stack supports them; `cut` counts the ones it does not.
std::vector<std::pair<ShardingMode, int>> ShardingChoices(int dp, int pp, const SpaceOptions& options, int& cut) {
  std::vector<std::pair<ShardingMode, int>> all = {{ShardingMode::kDdp, 0}, {ShardingMode::kZero1, 0}};
  if (options.zero2_replicated) all.push_back({ShardingMode::kZero2Replicated, 0});
  all.push_back({ShardingMode::kZero2, 0});
  all.push_back({ShardingMode::kZero3, 0});
  // hsdp:G with 1 < G < dp (G = dp is zero3, G = 1 is ddp).
  for (int64_t g : Divisors(dp)) {
    if (g > 1 && g < dp) all.push_back({ShardingMode::kHsdp, static_cast<int>(g)});
  }
  std::vector<std::pair<ShardingMode, int>> out;
  cut = 0;
  for (const auto& choice : all) {
    const ShardingMode m = choice.first;
    const bool fsdp_like = m == ShardingMode::kZero2 || m == ShardingMode::kZero3 || m == ShardingMode::kHsdp ||
                           m == ShardingMode::kZero2Replicated;
    const bool ok = (m != ShardingMode::kZero1 || options.zero1) && (!fsdp_like || options.fsdp) &&
                    (!fsdp_like || pp == 1 || options.sharding_with_pp);
    if (ok) out.push_back(choice);
    else ++cut;
  }
  return out;
}

struct ScheduleChoice {
  PipelineSchedule schedule;
  int vpp;
  int ends_lighter = 0;
};

}  // namespace

std::vector<int64_t> Divisors(int64_t n) {
  PARASIM_CHECK(n >= 1, "Divisors of ", n);
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

const std::string& DefaultOrder() {
  static const std::string order = ParallelConfig{}.order;
  return order;
}

std::vector<int> EndsLighterSplit(int64_t layers, int pp, int ends_lighter) {
  if (ends_lighter <= 0 || pp < 3 || (layers + 2 * ends_lighter) % pp != 0) return {};
  const int middle = static_cast<int>((layers + 2 * ends_lighter) / pp);
  if (middle - ends_lighter < 1) return {};
  std::vector<int> out(pp, middle);
  out.front() -= ends_lighter;
  out.back() -= ends_lighter;
  return out;
}

SpaceOptions SpaceFor(const SoftwareStack& stack, SpaceOptions options) {
  options.zero1 = options.zero1 && stack.supports_zero1;
  options.fsdp = options.fsdp && stack.supports_fsdp;
  options.sharding_with_pp = options.sharding_with_pp && stack.supports_sharding_with_pp;
  options.cp = options.cp && stack.supports_cp;
  options.cp_p2p = options.cp_p2p && stack.SupportsCp(CpComm::kP2p);
  options.cp_a2a = options.cp_a2a && stack.SupportsCp(CpComm::kA2a);
  options.cp_allgather = options.cp_allgather && stack.SupportsCp(CpComm::kAllGather);
  options.cp_a2a_p2p = options.cp_a2a_p2p && stack.SupportsCp(CpComm::kA2aP2p);
  options.interleaved = options.interleaved && stack.supports_interleaved;
  options.zero_bubble = options.zero_bubble && stack.supports_zero_bubble;
  options.partial_recompute = stack.supports_partial_recompute;
  options.selective_recompute_share = stack.sac_matmul_recompute_fraction;
  return options;
}

ParallelConfig SearchSpace::ToConfig(const Candidate& c) const {
  ParallelConfig config;
  config.dp = c.dp;
  config.tp = c.tp;
  config.pp = c.pp;
  config.cp = c.cp;
  config.ep = c.ep;
  config.micro_batch = c.mbs;
  config.sharding = static_cast<ShardingMode>(c.sharding);
  config.hsdp_group = c.hsdp_group;
  config.recompute = static_cast<RecomputeMode>(c.recompute);
  config.recompute_layers = c.recompute_layers;
  config.sequence_parallel = c.sp;
  config.vpp = c.vpp;
  config.schedule = static_cast<PipelineSchedule>(c.schedule);
  config.order = orders[c.order];
  config.prefetch = c.prefetch;
  config.cp_comm = static_cast<CpComm>(c.cp_comm);
  config.cp_a2a_size = c.cp_a2a_size;
  if (c.ends_lighter > 0) config.pp_layers = EndsLighterSplit(layers, c.pp, c.ends_lighter);
  return config;
}

SearchSpace EnumerateSpace(const ModelSpec& model, const JobSpec& job, int world_size, int gpus_per_node,
                           const ConstraintSet& constraints, const SpaceOptions& options) {
  SearchSpace space;
  EnumerateSpace(model, job, world_size, gpus_per_node, constraints, options, &space);
  return space;
}

void EnumerateSpace(const ModelSpec& model, const JobSpec& job, int world_size, int gpus_per_node,
                    const ConstraintSet& constraints, const SpaceOptions& options, SearchSpace* out) {
  if (world_size < 1) throw InvalidInput("", "gpus", StrCat("need at least one GPU, got ", world_size));
  // The specs' own checks (core/validate.h), not a copy of them.
  std::vector<Issue> issues = ValidateModel(model, model.source);
  for (Issue& issue : ValidateJob(job, job.file)) issues.push_back(std::move(issue));
  if (!issues.empty()) throw InvalidInput(issues);
  SearchSpace& space = *out;
  space.candidates.clear();
  space.ladders.clear();
  space.chains.clear();
  space.orders.clear();
  space.rejected.clear();
  space.searched = 0;
  space.layers = model.num_layers;

  // Placement orders: the default, unless the user lists some (or 'any').
  std::vector<std::string> listed = constraints.ListedWords(ConstraintKey::kOrder);
  if (std::find(listed.begin(), listed.end(), "any") != listed.end()) {
    space.orders = AllOrders();
  } else if (!listed.empty()) {
    space.orders = listed;
  } else {
    space.orders = {DefaultOrder()};
  }
  std::vector<int64_t> prefetches = {1};
  for (const Constraint& c : constraints.terms()) {
    if (c.key == ConstraintKey::kPrefetch && (c.op == ConstraintOp::kEq || c.op == ConstraintOp::kIn)) {
      prefetches.assign(c.numbers.begin(), c.numbers.end());
      std::sort(prefetches.begin(), prefetches.end());
      prefetches.erase(std::unique(prefetches.begin(), prefetches.end()), prefetches.end());
    }
  }

  // Default limit: two nodes' worth; a user who constrains tp chose the values.
  const int max_tp = options.max_tp > 0                          ? options.max_tp
                     : constraints.Mentions(ConstraintKey::kTp) ? world_size
                                                                : 2 * gpus_per_node;
  const int64_t layers = model.num_layers;

  // Rejections counted by reason constant (pointer), moved into the map at
  // the end: the innermost loops cut thousands of entries.
  std::vector<std::pair<const char*, int64_t>> tally;
  auto reject = [&](const char* reason) {
    ++space.searched;
    for (auto& [r, count] : tally) {
      if (r == reason) {
        ++count;
        return;
      }
    }
    tally.emplace_back(reason, 1);
  };
  const RecomputeMode kLadder[] = {RecomputeMode::kNone, RecomputeMode::kSelective, RecomputeMode::kFull};
  // One ladder's rungs for a smallest stage of `fewest` layers and `vpp`
  // chunks, in order of the forward share they recompute.
  std::vector<Rung> rungs;
  auto ladder_rungs = [&](int fewest, int vpp) {
    rungs.clear();
    rungs.push_back({RecomputeMode::kNone, 0, 0.0});
    rungs.push_back({RecomputeMode::kSelective, 0, options.selective_recompute_share});
    if (options.partial_recompute) {
      for (int quarters = 1; quarters <= 3; ++quarters) {
        const int n = fewest * quarters / 4 / vpp * vpp;   // whole layers per chunk
        if (n <= 0 || n >= fewest || n == rungs.back().layers) continue;
        rungs.push_back({RecomputeMode::kFull, n, static_cast<double>(n) / fewest});
      }
    }
    rungs.push_back({RecomputeMode::kFull, 0, 1.0});
    std::stable_sort(rungs.begin(), rungs.end(), [](const Rung& a, const Rung& b) { return a.share < b.share; });
  };
  // Constraint verdicts of the keys whose values do not depend on the layout.
  std::vector<char> recompute_ok(3), sp_ok(2), order_ok, prefetch_ok;
  for (RecomputeMode rc : kLadder) {
    recompute_ok[static_cast<int>(rc)] = constraints.Allows(ConstraintKey::kRecompute, parasim::ToString(rc));
  }
  sp_ok[0] = constraints.Allows(ConstraintKey::kSp, "off");
  sp_ok[1] = constraints.Allows(ConstraintKey::kSp, "on");
  for (const std::string& o : space.orders) order_ok.push_back(constraints.Allows(ConstraintKey::kOrder, o));
  for (int64_t f : prefetches) prefetch_ok.push_back(constraints.Allows(ConstraintKey::kPrefetch, f));

  for (int64_t tp : Divisors(world_size)) {
    for (int64_t pp : Divisors(world_size / tp)) {
      for (int64_t cp : Divisors(world_size / (tp * pp))) {
        const int64_t dp = world_size / (tp * pp * cp);
        const std::vector<int64_t> eps = model.IsMoe() ? Divisors(dp) : std::vector<int64_t>{1};
        for (int64_t ep : eps) {
          // Limits, then layout rules, in a fixed order: the first that fails names the reason.
          if (tp > max_tp) { reject(kReasonTpLimit); continue; }
          if (std::max({tp, pp, cp, ep}) > INT16_MAX) { reject(kReasonDegreeLimit); continue; }
          // The layout rules shared with ParallelConfig::Validate (core/layout_rules.h).
          if (const LayoutRule* broken = FirstBrokenLayoutRule(model, job, Layout{dp, tp, pp, cp, ep})) {
            reject(broken->reason);
            continue;
          }
          // Pipeline splits the search tries: balanced where the layers
          // divide, and (pp >= 3) the first and last stages lighter by one or
          // two layers; other splits are valid but not enumerated.
          std::vector<int> splits;
          if (layers % pp == 0) splits.push_back(0);
          for (int k = 1; k <= 2 && options.uneven_splits; ++k) {
            if (!EndsLighterSplit(layers, static_cast<int>(pp), k).empty()) splits.push_back(k);
          }
          if (splits.empty()) { reject(kReasonLayers); continue; }
          if (cp > 1 && !options.cp) { reject(kReasonStack); continue; }
          // CP kinds: those the stack runs, the constraints allow and the
          // model's heads split into (all-to-all); one entry (p2p) without cp.
          // a2a+p2p (Megatron's hierarchical kind, meant for "A2A in low-level
          // CP groups (e.g., via NVLink), P2P in high-level (e.g., via IB)":
          // Megatron-LM d98e8a6 transformer_config.py cp_comm_type) comes with
          // each all-to-all group size a that keeps the group's tp·a ranks
          // inside a node under the default order (tp innermost, cp next:
          // tp·a divides the node), strictly between 1 and cp (a = 1 is p2p,
          // a = cp is a2a, both already here).
          struct CpKind {
            CpComm kind;
            int a2a_size;
          };
          std::vector<CpKind> cp_kinds;
          if (cp == 1) {
            cp_kinds.push_back({CpComm::kP2p, 0});
          } else {
            std::vector<CpKind> kinds;
            if (options.cp_p2p) kinds.push_back({CpComm::kP2p, 0});
            if (options.cp_a2a) kinds.push_back({CpComm::kA2a, 0});
            if (options.cp_allgather) kinds.push_back({CpComm::kAllGather, 0});
            if (options.cp_a2a_p2p) {
              for (int64_t a : Divisors(cp)) {
                if (a > 1 && a < cp && a <= 255 && gpus_per_node > 0 && gpus_per_node % (tp * a) == 0) {
                  kinds.push_back({CpComm::kA2aP2p, static_cast<int>(a)});
                }
              }
            }
            const char* cut = nullptr;
            for (const CpKind& k : kinds) {
              if (!constraints.Allows(ConstraintKey::kCpComm, parasim::ToString(k.kind))) {
                cut = kReasonConstraint;
              } else if (!CpCommProblem(model, static_cast<int>(tp), static_cast<int>(cp), k.kind, k.a2a_size).empty()) {
                if (!cut) cut = kReasonCpHeads;
              } else {
                cp_kinds.push_back(k);
              }
            }
            if (cp_kinds.empty()) { reject(cut ? cut : kReasonStack); continue; }
          }
          if (!constraints.Allows(ConstraintKey::kDp, dp) || !constraints.Allows(ConstraintKey::kTp, tp) ||
              !constraints.Allows(ConstraintKey::kPp, pp) || !constraints.Allows(ConstraintKey::kCp, cp) ||
              !constraints.Allows(ConstraintKey::kEp, ep)) {
            reject(kReasonConstraint);
            continue;
          }

          for (const CpKind& cp_kind : cp_kinds) {
          std::vector<ScheduleChoice> schedules;
          if (pp == 1) {
            schedules.push_back({PipelineSchedule::k1F1B, 1});
          } else {
            for (int k : splits) {
              schedules.push_back({PipelineSchedule::kGpipe, 1, k});
              schedules.push_back({PipelineSchedule::k1F1B, 1, k});
              if (k == 0 && options.interleaved) {
                for (int64_t v : Divisors(layers / pp)) {
                  if (v > 1) schedules.push_back({PipelineSchedule::kInterleaved, static_cast<int>(v), 0});
                }
              }
              if (options.zero_bubble) schedules.push_back({PipelineSchedule::kZeroBubble, 1, k});
            }
          }
          int sharding_cut = 0;
          const auto shardings = ShardingChoices(static_cast<int>(dp), static_cast<int>(pp), options, sharding_cut);
          if (sharding_cut > 0) {
            space.rejected[kReasonStack] += sharding_cut;
            space.searched += sharding_cut;
          }
          const int64_t local_batch = job.global_batch / dp;
          const std::vector<int64_t> mbs_values = Divisors(local_batch);
          // What the constraints allow, per value of each key of this layout.
          std::vector<char> sharding_ok, schedule_ok, mbs_ok;
          for (const auto& [mode, group] : shardings) {
            sharding_ok.push_back(constraints.Allows(ConstraintKey::kSharding, ShardingName(mode, group)) &&
                                  (mode != ShardingMode::kHsdp || constraints.Allows(ConstraintKey::kHsdpGroup, group)));
          }
          for (const ScheduleChoice& sc : schedules) {
            schedule_ok.push_back(constraints.Allows(ConstraintKey::kSchedule, parasim::ToString(sc.schedule)) &&
                                  constraints.Allows(ConstraintKey::kVpp, sc.vpp));
          }
          for (int64_t mbs : mbs_values) mbs_ok.push_back(constraints.Allows(ConstraintKey::kMbs, mbs));

          for (size_t si = 0; si < shardings.size(); ++si) {
            const auto [mode, group] = shardings[si];
            for (size_t ki = 0; ki < schedules.size(); ++ki) {
              const ScheduleChoice& sc = schedules[ki];
              for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                for (size_t oi = 0; oi < space.orders.size(); ++oi) {
                  for (size_t fi = 0; fi < prefetches.size(); ++fi) {
                    const int64_t prefetch = prefetches[fi];
                    const bool allowed = sharding_ok[si] && schedule_ok[ki] && sp_ok[sp] && order_ok[oi] && prefetch_ok[fi];
                    Chain chain{static_cast<uint32_t>(space.ladders.size()), 0};
                    for (size_t mi = 0; mi < mbs_values.size(); ++mi) {
                      const int64_t mbs = mbs_values[mi];
                      const int64_t micro_batches = local_batch / mbs;
                      Candidate c;
                      c.dp = static_cast<int32_t>(dp);
                      c.tp = static_cast<int16_t>(tp);
                      c.pp = static_cast<int16_t>(pp);
                      c.cp = static_cast<int16_t>(cp);
                      c.ep = static_cast<int16_t>(ep);
                      c.cp_comm = static_cast<uint8_t>(cp_kind.kind);
                      c.cp_a2a_size = static_cast<uint8_t>(cp_kind.a2a_size);
                      c.mbs = static_cast<int32_t>(mbs);
                      c.sharding = static_cast<uint8_t>(mode);
                      c.hsdp_group = group;
                      c.schedule = static_cast<uint8_t>(sc.schedule);
                      c.vpp = static_cast<int16_t>(sc.vpp);
                      c.ends_lighter = static_cast<uint8_t>(sc.ends_lighter);
                      c.sp = sp == 1;
                      c.order = static_cast<uint16_t>(oi);
                      c.prefetch = static_cast<int16_t>(prefetch);
                      const bool mbs_allowed = allowed && mbs_ok[mi];
                      Ladder ladder{static_cast<uint32_t>(space.candidates.size()), 0};
                      ladder_rungs(sc.ends_lighter > 0 ? static_cast<int>((layers + 2 * sc.ends_lighter) / pp) -
                                                             sc.ends_lighter
                                                       : static_cast<int>(layers / pp),
                                   sc.vpp);
                      for (const Rung& rung : rungs) {
                        const RecomputeMode rc = rung.mode;
                        if (!mbs_allowed || !recompute_ok[static_cast<int>(rc)]) {
                          reject(kReasonConstraint);
                          continue;
                        }
                        // Interleaving needs the micro-batches to fill every stage's chunks in turn.
                        if (sc.schedule == PipelineSchedule::kInterleaved && micro_batches % pp != 0) {
                          reject(kReasonInterleave);
                          continue;
                        }
                        c.recompute = static_cast<uint8_t>(rc);
                        c.recompute_layers = static_cast<int16_t>(rung.layers);
                        space.candidates.push_back(c);
                        ++ladder.count;
                        ++space.searched;
                      }
                      if (ladder.count > 0) {
                        space.ladders.push_back(ladder);
                        ++chain.count;
                      }
                    }
                    if (chain.count > 0) space.chains.push_back(chain);
                  }
                }
              }
            }
          }
          }   // cp kinds
        }
      }
    }
  }
  for (const auto& [reason, count] : tally) space.rejected[reason] += count;
  PARASIM_CHECK(space.candidates.size() < (size_t{1} << 32), "search space too large to index");
}

}  // namespace parasim::planner
