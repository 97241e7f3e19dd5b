// Predicted / measured training throughput on the Ultra-Scale Playbook's
// nanotron sweep (issue 13; docs/accuracy.md "Throughput ratios: nanotron
// H100 sweep"): 1,740 measured runs of Llama-style 1B-80B models on 1-64
// nodes of 8 x H100 over AWS EFA, every dp x tp x pp x micro-batch x ZeRO-0/1
// layout that ran (tests/data/throughput_hf_ultrascale_nanotron_h100.csv).
// Each run goes through tier A as it ran: stack nanotron, cluster aws-p5 at
// the run's node count, sequence parallel when tp > 1 (tp_mode
// REDUCE_SCATTER), 1F1B, no recompute. ratio = predicted / measured tokens/s
// per GPU (> 1: the model is too fast). Nothing here feeds back into the
// model. The test fails when a row cannot be evaluated, and when a group's
// median |ratio - 1|, or the planner's pick among each sweep group's measured
// configs, gets worse than the committed table by more than 2 points.
// PARASIM_PRINT_THROUGHPUT_TABLE=1 prints the tables, PARASIM_PRINT_THROUGHPUT_ROWS=1
// every row (measured, predicted tokens/s per GPU, step, compute, exposed
// communication and bubble seconds).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/loaders.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "core/statistics.h"
#include "cost_model/collective_cost.h"
#include "cost_model/evaluator.h"
#include "cost_model/nanotron_stage_split.h"
#include "cost_model/software_stack.h"
#include "planner/planner.h"
#include "topology/group_path.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/cost_model/nanotron_sweep.h"

using namespace parasim;

namespace {

using testing::NanotronModel;

struct Run : testing::NanotronRun {
  double measured = 0;    // tokens/s per GPU
  Report report;
  double Ratio() const { return report.tokens_per_s_per_gpu / measured; }
};

std::vector<Run> EvaluateSweep() {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  std::vector<Run> runs;
  for (const testing::NanotronRun& row : testing::ReadNanotronSweep()) {
    Run run;
    static_cast<testing::NanotronRun&>(run) = row;
    run.measured = row.tokens_per_s_per_gpu;
    run.report = testing::EvaluateNanotronRun(row, stack);
    runs.push_back(std::move(run));
  }
  return runs;
}

std::string Bucket(const char* name, int degree) {
  return std::string(name) + (degree >= 16 ? ">=16" : "=" + std::to_string(degree));
}

struct Stats {
  size_t n = 0;
  double median = 0, lo = 0, hi = 0, median_error = 0;
};

Stats Summarize(const std::vector<double>& ratios) {
  std::vector<double> errors;
  for (double r : ratios) errors.push_back(std::fabs(r - 1));
  return {ratios.size(), Median(ratios), *std::min_element(ratios.begin(), ratios.end()),
          *std::max_element(ratios.begin(), ratios.end()), Median(errors)};
}

void PrintRow(const std::string& group, const Stats& s) {
  std::printf("| %s | %zu | %.3f | %.3f | %.3f | %.1f |\n", group.c_str(), s.n, s.median, s.lo, s.hi,
              100 * s.median_error);
}

}  // namespace

TEST_CASE("planner: predicted/measured throughput on the Ultra-Scale Playbook nanotron H100 sweep", "[planner]") {
  const std::vector<Run> runs = EvaluateSweep();
  REQUIRE(runs.size() == 1758);
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  const bool print_rows = std::getenv("PARASIM_PRINT_THROUGHPUT_ROWS") != nullptr;
  std::map<std::string, std::vector<double>> by_tp_pp, by_model;
  std::map<int, std::vector<double>> by_nodes;
  std::vector<double> all;
  // The fastest measured run of each model x nodes x tp x pp cell: a slow
  // outlier (a bad node, a noisy neighbour) cannot make a cell faster, so
  // these ratios say what the layout costs with the noise taken out.
  std::map<std::string, const Run*> best_of_cell;
  // model x nodes: the sweep group in which the planner's pick is judged.
  std::map<std::string, std::vector<const Run*>> sweep_groups;
  int scored = 0, predicted_oom = 0, unexpressible = 0;
  std::map<int, std::vector<double>> pre_fix_pipeline;   // nodes -> ratios of the unscored pre-fix pp > 1 runs
  // Scored runs whose nanotron split leaves a stage without a decoder layer
  // (the LM head alone): parasim gives that stage one layer.
  int clamped_split = 0;
  for (const Run& r : runs) {
    INFO(r.model << " nodes=" << r.nodes << " " << r.report.config.ToString() << ": " << r.report.infeasible_reason);
    // Every row, suspect or not, must be expressible: a step time comes back
    // (a memory verdict still prices the step). The one known exception:
    // nanotron spreads its embedding, final norm and head over pipeline
    // blocks too, so it ran pp above the layer count (3B at pp=32), which a
    // parasim stage (at least one layer) cannot express; such rows are listed.
    if (r.report.tokens_per_s_per_gpu <= 0) {
      REQUIRE(r.pp > NanotronModel(r).num_layers);
      ++unexpressible;
      if (print) std::printf("not expressible: %s nodes=%d dp=%d tp=%d pp=%d mbs=%d: %s\n", r.model.c_str(), r.nodes,
                             r.dp, r.tp, r.pp, r.mbs, r.report.infeasible_reason.c_str());
      continue;
    }
    REQUIRE(std::isfinite(r.Ratio()));
    if (print_rows) {
      std::printf("row,%s,%d,%d,%d,%d,%d,%d,%d,%d,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f\n", r.model.c_str(), r.kv_heads,
                  r.nodes, r.dp, r.tp, r.pp, r.mbs, r.zero, r.suspect, r.measured, r.report.tokens_per_s_per_gpu,
                  r.report.step_time.si(), r.report.compute.si(), r.report.exposed_comm.si(), r.report.bubble.si());
    }
    if (r.suspect) continue;
    // pp > 1 runs measured before the sweep's pipeline fix timed nanotron's
    // pipeline engine as it was before the playbook's authors improved it for
    // multi-node runs (the raw sweep CSV's after_pp_fix; they re-ran those
    // configs after it). parasim prices the fixed engine: reported, not scored.
    if (r.pp > 1 && !r.after_pp_fix) {
      pre_fix_pipeline[r.nodes].push_back(r.Ratio());
      continue;
    }
    ++scored;
    if (NanotronBalancedStageLayers(NanotronModel(r), r.pp, testing::NanotronClosesAtThreshold(r)).clamped_stages > 0)
      ++clamped_split;
    if (!r.report.feasible) ++predicted_oom;
    const double ratio = r.Ratio();
    all.push_back(ratio);
    const std::string tp_pp = Bucket("tp", r.tp) + "," + Bucket("pp", r.pp);
    by_tp_pp[tp_pp].push_back(ratio);
    by_nodes[r.nodes].push_back(ratio);
    by_model[r.model].push_back(ratio);
    const std::string group = r.model + "/kv" + std::to_string(r.kv_heads) + "/n" + std::to_string(r.nodes);
    const Run*& best = best_of_cell[tp_pp + "|" + group + "/tp" + std::to_string(r.tp) + "/pp" + std::to_string(r.pp)];
    if (best == nullptr || r.measured > best->measured) best = &r;
    sweep_groups[group].push_back(&r);
  }
  CHECK(unexpressible == 1);
  CHECK(scored == 1265);   // 1,739 less the 474 pre-fix pp > 1 runs
  CHECK(predicted_oom == 0);   // every scored run ran on 80 GB
  CHECK(clamped_split == 184);  // docs/accuracy.md, "Pipelines at tp = 1"
  if (print) std::printf("nanotron split clamped (a stage given one layer): %d scored runs\n", clamped_split);

  std::map<std::string, std::vector<double>> best_by_tp_pp;
  std::vector<double> best_all;
  for (const auto& [cell, r] : best_of_cell) {
    best_by_tp_pp[cell.substr(0, cell.find('|'))].push_back(r->Ratio());
    best_all.push_back(r->Ratio());
  }

  // The planner's pick among each group's measured configs (the fastest
  // predicted, memory-feasible one), judged by its measured throughput over
  // the group's measured best.
  std::vector<double> pick_quality;
  int picked_best = 0;
  for (const auto& [group, members] : sweep_groups) {
    if (members.size() < 2) continue;
    const Run* pick = nullptr;
    const Run* best = nullptr;
    for (const Run* r : members) {
      const bool faster = pick == nullptr || r->report.tokens_per_s_per_gpu > pick->report.tokens_per_s_per_gpu;
      if (r->report.feasible && faster) pick = r;
      if (best == nullptr || r->measured > best->measured) best = r;
    }
    REQUIRE(pick != nullptr);
    pick_quality.push_back(pick->measured / best->measured);
    if (pick == best) ++picked_best;
    if (print) {
      std::printf("pick | %s | %zu | %s | %.0f | %s | %.0f | %.3f |\n", group.c_str(), members.size(),
                  pick->report.config.ToString().c_str(), pick->measured, best->report.config.ToString().c_str(),
                  best->measured, pick->measured / best->measured);
    }
  }

  // The planner's own search over the sweep's options (throughput objective;
  // ZeRO-0/1, no recompute, no cp, 1F1B): the first of its 16 best plans that
  // the sweep measured (same dp, tp, pp, mbs and ZeRO stage), its rank, and
  // its measured throughput over the group's measured best.
  std::vector<double> planner_quality;
  int planner_top_measured = 0;
  // The split as the scored pp > 1 runs (after the pipeline fix) mostly built
  // it: closed at the threshold (tests/cost_model/nanotron_sweep.h).
  SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  stack.pp_balance_close_at_threshold = true;
  for (const auto& [group, members] : sweep_groups) {
    if (members.size() < 2) continue;
    const Run& any = *members.front();
    JobSpec job;
    job.global_batch = 256;
    job.seq_len = 4096;
    job.stack = stack.name;
    planner::PlanOptions options;
    options.constraints =
        planner::ConstraintSet::Parse("recompute=none,cp=1,sharding in ddp|zero1,schedule=1f1b,vpp=1", "test");
    options.objective.objective = planner::Objective::kThroughput;
    options.threads = 2;
    options.baseline = false;
    const planner::PlanResult plan = planner::RunPlan(
        AnalyticalEvaluator(NanotronModel(any), LoadCluster("aws-p5", any.nodes), job, stack),
        options);
    const Run* best = *std::max_element(members.begin(), members.end(),
                                        [](const Run* a, const Run* b) { return a->measured < b->measured; });
    int rank = 0;
    const Run* found = nullptr;
    for (const Report& p : plan.plans) {
      ++rank;
      for (const Run* r : members) {
        const ParallelConfig& c = p.config;
        if (c.dp == r->dp && c.tp == r->tp && c.pp == r->pp && c.micro_batch == r->mbs &&
            (c.sharding == ShardingMode::kZero1) == (r->zero == 1) &&
            (found == nullptr || r->measured > found->measured)) {
          found = r;
        }
      }
      if (found != nullptr) break;
    }
    if (found == nullptr) {
      if (print) std::printf("planner | %s | none of its %zu best plans ran |\n", group.c_str(), plan.plans.size());
      continue;
    }
    if (rank == 1) ++planner_top_measured;
    planner_quality.push_back(found->measured / best->measured);
    if (print) {
      std::printf("planner | %s | %d | %s | %.0f | %.0f | %.3f |\n", group.c_str(), rank,
                  plan.plans[rank - 1].config.ToString().c_str(), found->measured, best->measured,
                  found->measured / best->measured);
    }
  }

  // Committed in docs/accuracy.md "Throughput ratios: nanotron H100 sweep":
  // per tp x pp group, the median |ratio - 1| of the fastest run of each cell.
  const std::map<std::string, double> recorded = {
      {"tp=1,pp=1", 0.036},  {"tp=1,pp=2", 0.037},  {"tp=1,pp=4", 0.033},  {"tp=1,pp=8", 0.042},
      {"tp=1,pp>=16", 0.132},  {"tp=2,pp=1", 0.097},  {"tp=2,pp=2", 0.117},  {"tp=2,pp=4", 0.099},
      {"tp=2,pp=8", 0.067},  {"tp=2,pp>=16", 0.037},  {"tp=4,pp=1", 0.081},  {"tp=4,pp=2", 0.089},
      {"tp=4,pp=4", 0.096},  {"tp=4,pp=8", 0.191},  {"tp=4,pp>=16", 0.192},  {"tp=8,pp=1", 0.093},
      {"tp=8,pp=2", 0.156},  {"tp=8,pp=4", 0.444},  {"tp=8,pp=8", 0.651},  {"tp=8,pp>=16", 1.574},
      {"tp>=16,pp=1", 0.204},  {"tp>=16,pp=2", 0.613},  {"tp>=16,pp=4", 0.601},  {"tp>=16,pp=8", 1.010},
      {"tp>=16,pp>=16", 4.090},
  };
  // Recorded again when nanotron's step end was read (docs/DECISIONS.md
  // "nanotron's step end": ZeRO-1's fp32 gradient all-reduce after the
  // backward, its clipping and buffer zeroing over the whole gradient):
  // every group moved toward 1 but tp=1,pp>=16 (0.127 -> 0.132, cells priced
  // slower than measured); tp=1,pp=1 0.112 -> 0.036, tp=2,pp=1 0.200 ->
  // 0.097, tp=4,pp=1 0.124 -> 0.081, tp>=16,pp=1 0.274 -> 0.204 (the
  // comments below give the values recorded before).
  // The first and last stages' one transfer per micro-batch instead of two
  // (docs/DECISIONS.md "A pipeline stage waits for the transfers it sends")
  // makes every pp > 1 run faster: groups already predicted faster than
  // measured moved away (tp=8,pp=8 0.647 -> 0.680, tp=8,pp>=16 1.563 ->
  // 1.586, tp>=16,pp=8 0.987 -> 1.014, tp>=16,pp>=16 4.016 -> 4.090; the
  // others by at most 0.02), tp=1,pp>=16 (predicted slower) 0.156 -> 0.127.
  // The tied 1B and 3B models' embedding all-reduce between the end stages
  // (docs/DECISIONS.md "The tied embedding's gradient all-reduce between the
  // first and last stage") moved tp=1,pp>=16 0.133 -> 0.156 (cells already
  // priced slower than measured, median ratio 0.867 -> 0.844), tp=1,pp=8
  // 0.055 -> 0.056 and tp=2,pp>=16 0.039 -> 0.041; the others moved toward 1.
  // Three groups moved away with nanotron's four host-blocking transfers per
  // micro-batch (docs/DECISIONS.md "nanotron's pipeline engine as the sweep
  // ran it"): tp=1,pp=8 0.050 -> 0.055, tp=1,pp>=16 0.086 -> 0.133 and
  // tp=4,pp>=16 0.181 -> 0.186, cells that were already predicted slower
  // than measured (median ratio 0.87-1.1); the engine is read from its code,
  // not chosen for them.
  for (const auto& [g, v] : best_by_tp_pp) {
    const double median_error = Summarize(v).median_error;
    INFO(g << ": median |ratio - 1| of the cells' fastest runs " << median_error);
    REQUIRE(recorded.count(g) == 1);
    CHECK(median_error <= recorded.at(g) + 0.02);
  }
  // All scored runs, noise included (docs/accuracy.md: 26.3 %), the pick among the
  // measured configs (median measured(pick)/best 0.898 over 29 groups; 0.902
  // before nanotron's four pipeline transfers per micro-batch) and
  // the planner's own search (a measured plan among its 16 best in 27 groups,
  // median 0.902; 28 and 0.900 before nanotron's activations lost their 5%
  // slack, when the two 80B kv 8 groups at 8 and 32 nodes had their only
  // measured plans at ranks 16 and 15); 26 since the end stages send one
  // transfer per micro-batch (80B kv 8 at 32 nodes: its measured plan,
  // pp_layers 19:21:21:19, left the 16 best).
  // nanotron's step end (ZeRO-1's gradient all-reduce after the backward):
  // all runs 25.6 % -> 19.1 %, the pick 0.898 -> 0.918, the planner 26 groups at
  // 0.902 -> 28 at 0.937 (the three 80B kv 8 groups now have a measured
  // plan among their 16 best, 80B kv 64 at 64 nodes no longer).
  CHECK(Summarize(all).median_error <= 0.191 + 0.02);
  CHECK(Median(pick_quality) >= 0.918 - 0.02);
  CHECK(planner_quality.size() >= 28);
  CHECK(Median(planner_quality) >= 0.937 - 0.02);
  if (print) {
    std::printf("by tp, pp: | group | runs | median | min | max | median |ratio-1| %% | cells | cell-best median |"
                " cell-best median |ratio-1| %% |\n");
    for (const auto& [g, v] : by_tp_pp) {
      const Stats s = Summarize(v), b = Summarize(best_by_tp_pp.at(g));
      std::printf("| %s | %zu | %.3f | %.3f | %.3f | %.1f | %zu | %.3f | %.1f |\n", g.c_str(), s.n, s.median, s.lo,
                  s.hi, 100 * s.median_error, b.n, b.median, 100 * b.median_error);
    }
    std::printf("by nodes:\n");
    for (const auto& [n, v] : by_nodes) PrintRow("nodes=" + std::to_string(n), Summarize(v));
    // The cells' fastest runs by nodes, TP inside / across the node, pp = 1 or not.
    std::map<std::pair<int, std::string>, std::vector<double>> cells_by_nodes;
    for (const auto& [cell, r] : best_of_cell) {
      const std::string kind = std::string(r->tp <= 8 ? "tp<=8" : "tp>8") + (r->pp == 1 ? ",pp=1" : ",pp>1");
      cells_by_nodes[{r->nodes, kind}].push_back(r->Ratio());
    }
    std::printf("cell-best by nodes:\n");
    for (const auto& [k, v] : cells_by_nodes) {
      PrintRow("nodes=" + std::to_string(k.first) + "," + k.second, Summarize(v));
    }
    std::printf("pp > 1 measured before the pipeline fix (not scored), by nodes:\n");
    std::vector<double> pre_fix_all;
    for (const auto& [n, v] : pre_fix_pipeline) {
      PrintRow("nodes=" + std::to_string(n), Summarize(v));
      pre_fix_all.insert(pre_fix_all.end(), v.begin(), v.end());
    }
    PrintRow("all pre-fix pp > 1 runs", Summarize(pre_fix_all));
    std::printf("by model:\n");
    for (const auto& [g, v] : by_model) PrintRow(g, Summarize(v));
    PrintRow("all runs", Summarize(all));
    PrintRow("all cells (fastest run each)", Summarize(best_all));
    std::printf("pick: %zu groups, pick is the measured best in %d, median measured(pick)/best %.3f, min %.3f\n",
                pick_quality.size(), picked_best, Median(pick_quality),
                *std::min_element(pick_quality.begin(), pick_quality.end()));
    std::printf("planner: %zu groups with a measured plan among its 16 best, its first plan measured in %d, "
                "median measured/best %.3f\n",
                planner_quality.size(), planner_top_measured, Median(planner_quality));
  }
}

namespace {

// The model's bus bandwidth of `op` on 1 GiB over every GPU of `c`.
double WorldBusBw(const ClusterSpec& c, const SoftwareStack& stack, CollectiveOp op) {
  const GroupPath path =
      ResolveGroupPath(c, ParseParallelConfig("dp=" + std::to_string(c.TotalGpus())), ParallelDim::kDp);
  return EstimateCollective(op, GiB(1), path, NcclFeaturesFor(c, stack.nccl_version)).busbw.si() / 1e9;
}

// aws-p5 at the run's node count as its own job measured it at start-up
// (nanotron's measure_bandwidth, 1 GiB over every GPU): the two rates of the
// EFA collective model, each set from the collective that isolates it. The
// NICs are scaled until the model's AllGather (a ring: the NICs' rate) has the
// job's measured bus bandwidth, then the tree's rate (tree_net_efficiency,
// CollectiveModelParams) until its AllReduce (NVLS-tree) has the job's. The
// job's ReduceScatter, measured right after, is held out. ASSUMPTION: a
// slower fabric slows every ring transfer alike (p2p included) and every tree
// transfer alike. One node: no inter-node link, as is.
ClusterSpec FabricAsMeasured(const testing::NanotronRun& run, const SoftwareStack& stack) {
  const ClusterSpec base = LoadCluster("aws-p5", run.nodes);
  if (run.nodes == 1) return base;
  // Both bus bandwidths rise with their rate: bisect each on a log axis.
  auto bisect = [](double lo, double hi, const std::function<bool(double)>& too_slow) {
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (too_slow(std::exp(mid)) ? lo : hi) = mid;
    }
    return std::exp(0.5 * (lo + hi));
  };
  ClusterSpec c = base;
  c.collective_params = CollectiveModelParams::AwsEfa();
  const double nic = bisect(std::log(1.0 / 256), std::log(4.0), [&](double scale) {
    c.inter_node.nic_bandwidth = base.inter_node.nic_bandwidth * scale;
    return WorldBusBw(c, stack, CollectiveOp::kAllGather) < run.allgather_busbw_gbps;
  });
  c.inter_node.nic_bandwidth = base.inter_node.nic_bandwidth * nic;
  const double tree = bisect(std::log(1.0 / 64), std::log(4.0), [&](double eff) {
    c.collective_params->tree_net_efficiency = eff;
    return WorldBusBw(c, stack, CollectiveOp::kAllReduce) < run.allreduce_busbw_gbps;
  });
  c.collective_params->tree_net_efficiency = tree;
  return c;
}

// The job's start-up ReduceScatter busbw (GB/s) from the start-up table
// (tests/data/collective_nanotron_startup_h100_efa.csv), joined on the node
// count and the job's AllReduce and AllGather as printed (0.01 GB/s); 0 when
// no single job matches.
double JobReduceScatter(const testing::NanotronRun& run) {
  using Key = std::tuple<int, long long, long long>;
  static const std::map<Key, std::vector<double>> by_job = [] {
    std::map<Key, std::vector<double>> m;
    for (const auto& r : testing::ReadCsv(testing::DataPath("collective_nanotron_startup_h100_efa.csv")))
      m[{std::stoi(r.at("nodes")), std::llround(100 * std::stod(r.at("allreduce_busbw_gbps"))),
         std::llround(100 * std::stod(r.at("allgather_busbw_gbps")))}]
          .push_back(std::stod(r.at("reducescatter_busbw_gbps")));
    return m;
  }();
  const auto it = by_job.find(
      {run.nodes, std::llround(100 * run.allreduce_busbw_gbps), std::llround(100 * run.allgather_busbw_gbps)});
  if (it == by_job.end()) return 0;
  const std::vector<double>& v = it->second;
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); }) ? v.front() : 0.0;
}

std::string NodesAndPp(const testing::NanotronRun& run) {
  return "nodes=" + std::to_string(run.nodes) + (run.pp == 1 ? ",pp=1" : ",pp>1");
}

}  // namespace

// The same scored runs as above, each priced on the fabric its own job
// measured instead of the aws-p5 preset's. The jobs' start-up ReduceScatter
// (not used to set the fabric) is held out: the fabric must predict it too.
namespace {

// One scored multi-node pipeline run on a healthy fabric, priced on the
// fabric its job measured: where its residual sits.
struct Residual {
  double ratio = 0;                                   // predicted / measured tokens/s per GPU
  double measured_step = 0, predicted_step = 0;       // s
  double compute = 0, exposed = 0, bubble = 0;        // s, the prediction's parts
  double measured_per_micro_batch = 0;                // measured step / (grad_acc + pp - 1), s
};

// A job measured a healthy fabric when its start-up AllReduce over the world
// reached 120 GB/s (docs/accuracy.md "Throughput ratios: nanotron H100 sweep":
// the earlier jobs' 164-188 GB/s at 8-64 nodes against the later ones' 13-92).
constexpr double kHealthyAllReduceGbps = 120;

std::string MicroBatchBucket(int grad_acc) {
  if (grad_acc <= 8) return "m<=8";
  if (grad_acc <= 32) return "m=9-32";
  if (grad_acc <= 128) return "m=33-128";
  return "m=256";
}

void PrintResiduals(const char* title, const std::map<std::string, std::vector<Residual>>& groups) {
  std::printf("%s\n| group | runs | median ratio | median |ratio-1| %% | measured step s | predicted step s |"
              " compute s | exposed comm s | bubble s | measured - predicted per 1F1B slot, ms |\n", title);
  for (const auto& [g, v] : groups) {
    std::vector<double> ratio, error, ms, ps, c, e, b, slot;
    for (const Residual& r : v) {
      ratio.push_back(r.ratio);
      error.push_back(std::fabs(r.ratio - 1));
      ms.push_back(r.measured_step);
      ps.push_back(r.predicted_step);
      c.push_back(r.compute);
      e.push_back(r.exposed);
      b.push_back(r.bubble);
      slot.push_back(1e3 * r.measured_per_micro_batch * (1 - r.predicted_step / r.measured_step));
    }
    std::printf("| %s | %zu | %.3f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", g.c_str(), v.size(),
                Median(ratio), 100 * Median(error), Median(ms), Median(ps), Median(c), Median(e), Median(b),
                Median(slot));
  }
}

}  // namespace

TEST_CASE("planner: the nanotron sweep priced on the fabric each job measured", "[planner]") {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  std::map<std::string, std::vector<double>> on_preset, on_measured, reducescatter;
  // Multi-node pipelines (pp > 1) whose job measured a healthy fabric, on that
  // fabric: the residual by tp and pp, by nodes, by mbs and by micro-batch count.
  std::map<std::string, std::vector<Residual>> by_tp_pp, by_nodes, by_mbs, by_micro_batches;
  for (const testing::NanotronRun& run : testing::ReadNanotronSweep()) {
    if (run.suspect || (run.pp > 1 && !run.after_pp_fix)) continue;
    const Report preset = testing::EvaluateNanotronRun(run, stack);
    if (preset.tokens_per_s_per_gpu <= 0) continue;   // the one run not expressible
    const ClusterSpec fabric = FabricAsMeasured(run, stack);
    const Report measured = testing::EvaluateNanotronRunOn(run, stack, fabric);
    REQUIRE(measured.tokens_per_s_per_gpu > 0);
    // Every scored run on its job's fabric (PARASIM_PRINT_THROUGHPUT_ROWS):
    // jobrow,model,kv,nodes,dp,tp,pp,mbs,grad_acc,zero,allreduce_busbw,
    // allgather_busbw,measured,predicted,step,compute,exposed,bubble.
    if (std::getenv("PARASIM_PRINT_THROUGHPUT_ROWS"))
      std::printf("jobrow,%s,%d,%d,%d,%d,%d,%d,%d,%d,%.2f,%.2f,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f\n", run.model.c_str(),
                  run.kv_heads, run.nodes, run.dp, run.tp, run.pp, run.mbs, run.grad_acc, run.zero,
                  run.allreduce_busbw_gbps, run.allgather_busbw_gbps, run.tokens_per_s_per_gpu,
                  measured.tokens_per_s_per_gpu, measured.step_time.si(), measured.compute.si(),
                  measured.exposed_comm.si(), measured.bubble.si());
    if (run.nodes > 1 && run.pp > 1 && run.allreduce_busbw_gbps >= kHealthyAllReduceGbps) {
      Residual r;
      r.ratio = measured.tokens_per_s_per_gpu / run.tokens_per_s_per_gpu;
      r.measured_step = measured.step_time.si() * r.ratio;   // same tokens per step
      r.predicted_step = measured.step_time.si();
      r.compute = measured.compute.si();
      r.exposed = measured.exposed_comm.si();
      r.bubble = measured.bubble.si();
      r.measured_per_micro_batch = r.measured_step / (run.grad_acc + run.pp - 1);
      const std::string tp = run.tp >= 16 ? "tp>=16" : "tp=" + std::to_string(run.tp);
      by_tp_pp[tp + (run.pp >= 16 ? ",pp>=16" : ",pp=" + std::to_string(run.pp))].push_back(r);
      by_nodes["nodes=" + std::to_string(run.nodes) + (run.tp >= 4 ? ",tp>=4" : ",tp<=2")].push_back(r);
      by_mbs[tp + ",mbs=" + std::to_string(run.mbs)].push_back(r);
      by_micro_batches[(run.tp >= 4 ? std::string("tp>=4,") : std::string("tp<=2,")) + MicroBatchBucket(run.grad_acc)]
          .push_back(r);
    }
    for (const std::string& g : {NodesAndPp(run), std::string("all")}) {
      on_preset[g].push_back(preset.tokens_per_s_per_gpu / run.tokens_per_s_per_gpu);
      on_measured[g].push_back(measured.tokens_per_s_per_gpu / run.tokens_per_s_per_gpu);
      if (run.nodes > 1)
        if (const double rs = JobReduceScatter(run); rs > 0)
          reducescatter[g].push_back(WorldBusBw(fabric, stack, CollectiveOp::kReduceScatter) / rs);
    }
  }
  auto median_error = [](const std::vector<double>& ratios) {
    std::vector<double> e;
    for (double r : ratios) e.push_back(std::fabs(r - 1));
    return Median(e);
  };
  if (std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE")) {
    std::printf("| group | runs | on aws-p5: median ratio | median |ratio-1| %% | on the measured fabric: median ratio |"
                " median |ratio-1| %% | held out: ReduceScatter predicted/measured, median |\n");
    for (const auto& [g, v] : on_preset) {
      std::printf("| %s | %zu | %.3f | %.1f | %.3f | %.1f | %s |\n", g.c_str(), v.size(), Median(v),
                  100 * median_error(v), Median(on_measured[g]), 100 * median_error(on_measured[g]),
                  reducescatter.count(g) ? std::to_string(Median(reducescatter[g])).substr(0, 5).c_str() : "-");
    }
  }
  REQUIRE(on_preset["all"].size() == 1265);
  if (std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE")) {
    std::printf("ReduceScatter joined for %zu of the multi-node runs\n", reducescatter["all"].size());
    PrintResiduals("healthy-fabric pipelines across nodes, by tp and pp:", by_tp_pp);
    PrintResiduals("by nodes:", by_nodes);
    PrintResiduals("by tp and mbs:", by_mbs);
    PrintResiduals("by micro-batches per step (grad_acc):", by_micro_batches);
  }
  // docs/accuracy.md "tp > 1 pipelines across nodes on a healthy fabric": on
  // the fabric its job measured the residual is neither exposed communication
  // nor bubble (each is at most a third of the predicted step), and tp <= 2 is
  // priced within 10 % while tp 4 and 8 at pp 2 are still predicted more than
  // 1.5x too fast. Fails when a mechanism prices the gap (then the
  // documentation must say what it explains) or when tp <= 2 drifts.
  {
    size_t healthy = 0;
    for (const auto& [g, v] : by_tp_pp) healthy += v.size();
    CHECK(healthy == 201);
    for (const char* g : {"tp=1,pp=2", "tp=1,pp=4", "tp=2,pp=2", "tp=2,pp=4"}) {
      INFO(g);
      std::vector<double> ratio;
      for (const Residual& r : by_tp_pp[g]) ratio.push_back(r.ratio);
      CHECK(std::fabs(Median(ratio) - 1) <= 0.10);
    }
    for (const char* g : {"tp=4,pp=2", "tp=8,pp=2"}) {
      INFO(g);
      std::vector<double> ratio, exposed, bubble;
      for (const Residual& r : by_tp_pp[g]) {
        ratio.push_back(r.ratio);
        exposed.push_back(r.exposed / r.predicted_step);
        bubble.push_back(r.bubble / r.predicted_step);
      }
      CHECK(Median(ratio) > 1.5);
      CHECK(Median(exposed) < 1.0 / 3);
      CHECK(Median(bubble) < 1.0 / 3);
    }
  }
  // docs/accuracy.md "Throughput ratios: nanotron H100 sweep": recorded + 2 points.
  // 0.200 before nanotron's four host-blocking transfers per micro-batch
  // (docs/DECISIONS.md "nanotron's pipeline engine as the sweep ran it"):
  // the median ratio on the measured fabric moves toward 1 (1.091 -> 1.078)
  // but the pp > 1 runs the scaled NICs already price too slow move further.
  // 0.228 before nanotron's ZeRO-1 gradient all-reduce moved after the
  // backward (docs/DECISIONS.md "nanotron's step end"), when the preset's
  // runs were at 0.263 and the measured fabric beat them overall. It moved
  // them both (preset 0.191, measured fabric 0.205): the pp = 1 runs are now
  // priced within a few percent on either fabric (the measured one slightly
  // slower: 16 / 32 nodes 6.0 / 7.1 % on the preset, 6.5 / 7.9 % on it), so
  // what the measured fabric explains is checked where it matters, the
  // pipelines across 8-32 nodes of the degraded later jobs.
  CHECK(median_error(on_measured["all"]) <= 0.205 + 0.02);
  for (const char* g : {"nodes=8,pp>1", "nodes=16,pp>1", "nodes=32,pp>1"}) {
    INFO(g);
    CHECK(median_error(on_measured[g]) < median_error(on_preset[g]));
  }
  CHECK(std::fabs(Median(reducescatter["all"]) - 1) <= 0.008 + 0.02);
  CHECK(reducescatter["all"].size() == 1200);
}

namespace {

// Where a run's pipeline runs. nanotron ranks are arange(world).reshape(ep,
// pp, dp, tp) (huggingface/nanotron a756526 src/nanotron/parallel/context.py),
// pp outermost: each stage is dp·tp consecutive GPUs, so on one node every
// stage boundary stays on NVLink and on more than one node at least one
// boundary crosses the EFA fabric.
std::string Placement(const testing::NanotronRun& run) {
  if (run.pp == 1) return "pp=1";
  return run.nodes == 1 ? "pp>1 one node" : "pp>1 across nodes";
}

// Milliseconds per decoder layer per micro-batch: the step over the 1F1B
// slots (grad_acc + pp - 1) and the largest stage's decoder layers as
// nanotron split them.
// The largest stage's decoder layers as nanotron split them (all of them at pp = 1).
int StageLayers(const testing::NanotronRun& run) {
  const ModelSpec m = NanotronModel(run);
  if (run.pp == 1) return m.num_layers;
  const std::vector<int> split =
      NanotronBalancedStageLayers(m, run.pp, testing::NanotronClosesAtThreshold(run)).nanotron_layers;
  return *std::max_element(split.begin(), split.end());
}

double MsPerLayerPerMicroBatch(const testing::NanotronRun& run, double tokens_per_s_per_gpu) {
  const int layers = StageLayers(run);
  const double tokens = 4096.0 * run.mbs * run.grad_acc * run.dp;
  const double step_s = tokens / (tokens_per_s_per_gpu * run.nodes * 8);
  return 1e3 * step_s / ((run.grad_acc + run.pp - 1) * layers);
}

}  // namespace

// A reading of the data the model does not use (docs/accuracy.md, "What the
// boundary does not explain"): at tp > 1 the scored pp > 1 runs across nodes
// take several times the pp = 1 time per layer and micro-batch, the same for
// 1B, 3B and 8B and for mbs 1-4, while the pp > 1 runs inside one node take
// what pp = 1 takes. The model prices neither difference; this guards that
// the one-node pipelines, where the data show no extra cost, stay priced
// within 15 % per layer, and prints the table (PARASIM_PRINT_THROUGHPUT_TABLE).
TEST_CASE("planner: nanotron sweep time per layer and micro-batch by tp and pipeline placement", "[planner]") {
  const SoftwareStack stack = *FindSoftwareStackPreset("nanotron");
  std::map<std::pair<int, std::string>, std::vector<double>> measured, predicted, ratio, unpriced;
  // The unpriced time of the across-node pipelines by tp, model and mbs:
  // whether it follows hidden size (bytes) or micro-batch size.
  std::map<std::tuple<int, std::string, int>, std::vector<double>> unpriced_across;
  // Across-node pipelines with tp >= 4 at every mbs: measured and predicted ms
  // per layer per micro-batch by (tp, mbs), and measured by (tp, model) at mbs <= 4.
  std::map<std::pair<int, int>, std::vector<double>> floor_measured, floor_predicted;
  std::map<std::pair<int, std::string>, std::vector<double>> floor_by_model;
  // pp = 1 runs with tp >= 16: ms per layer per micro-batch per tp rank, by
  // whether the job measured a healthy fabric.
  std::map<bool, std::vector<double>> tp_across_per_rank;
  for (const testing::NanotronRun& run : testing::ReadNanotronSweep()) {
    if (run.suspect || (run.pp > 1 && !run.after_pp_fix)) continue;
    if (run.model == "nanotron-80b") continue;
    const Report report = testing::EvaluateNanotronRun(run, stack);
    if (report.tokens_per_s_per_gpu <= 0) continue;   // the one run not expressible
    // Every run of this reading (PARASIM_PRINT_THROUGHPUT_ROWS): layerrow,model,
    // nodes,dp,tp,pp,mbs,grad_acc,zero,allreduce_busbw,largest stage's decoder
    // layers,measured ms per layer per micro-batch,predicted.
    if (std::getenv("PARASIM_PRINT_THROUGHPUT_ROWS"))
      std::printf("layerrow,%s,%d,%d,%d,%d,%d,%d,%d,%.2f,%d,%.3f,%.3f\n", run.model.c_str(), run.nodes, run.dp, run.tp,
                  run.pp, run.mbs, run.grad_acc, run.zero, run.allreduce_busbw_gbps, StageLayers(run),
                  MsPerLayerPerMicroBatch(run, run.tokens_per_s_per_gpu),
                  MsPerLayerPerMicroBatch(run, report.tokens_per_s_per_gpu));
    // TP across nodes without a pipeline, by the fabric state the job measured.
    if (run.pp == 1 && run.tp >= 16)
      tp_across_per_rank[run.allreduce_busbw_gbps >= kHealthyAllReduceGbps].push_back(
          MsPerLayerPerMicroBatch(run, run.tokens_per_s_per_gpu) / run.tp);
    if (Placement(run) == "pp>1 across nodes" && run.tp >= 4) {
      floor_measured[{run.tp, run.mbs}].push_back(MsPerLayerPerMicroBatch(run, run.tokens_per_s_per_gpu));
      floor_predicted[{run.tp, run.mbs}].push_back(MsPerLayerPerMicroBatch(run, report.tokens_per_s_per_gpu));
      if (run.mbs <= 4) floor_by_model[{run.tp, run.model}].push_back(MsPerLayerPerMicroBatch(run, run.tokens_per_s_per_gpu));
    }
    if (run.mbs > 4) continue;
    const std::pair<int, std::string> cell{run.tp, Placement(run)};
    const double m = MsPerLayerPerMicroBatch(run, run.tokens_per_s_per_gpu);
    const double p = MsPerLayerPerMicroBatch(run, report.tokens_per_s_per_gpu);
    measured[cell].push_back(m);
    predicted[cell].push_back(p);
    ratio[cell].push_back(m / p);
    unpriced[cell].push_back(m - p);
    if (cell.second == "pp>1 across nodes") unpriced_across[{run.tp, run.model, run.mbs}].push_back(m - p);
  }
  if (std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE")) {
    std::printf("| tp | pipeline | runs | measured ms per layer per micro-batch (median) | predicted (median) |"
                " measured / predicted (median) | measured - predicted, ms (median) |\n");
    for (const auto& [cell, v] : measured)
      std::printf("| %d | %s | %zu | %.1f | %.1f | %.2f | %.1f |\n", cell.first, cell.second.c_str(), v.size(),
                  Median(v), Median(predicted[cell]), Median(ratio[cell]), Median(unpriced[cell]));
    for (const auto& [key, v] : unpriced_across)
      std::printf("unpriced across nodes | tp=%d | %s | mbs=%d | %zu | %.1f |\n", std::get<0>(key),
                  std::get<1>(key).c_str(), std::get<2>(key), v.size(), Median(v));
  }
  // The one-node pipelines with tp > 1 (tp 2 and 4; tp 8 needs two nodes
  // once pp > 1): no cost beyond what is priced.
  for (int tp : {2, 4}) {
    const std::vector<double>& r = ratio[{tp, "pp>1 one node"}];
    INFO("tp=" << tp);
    REQUIRE(r.size() >= 3);
    CHECK(std::fabs(Median(r) - 1) <= 0.15);
  }
  // At tp 1 and 2 the across-node pipelines miss by what pp = 1 misses: the
  // priced boundary (host-blocking transfers over EFA) accounts for them.
  for (int tp : {1, 2}) {
    INFO("tp=" << tp);
    CHECK(std::fabs(Median(ratio[{tp, "pp>1 across nodes"}]) - Median(ratio[{tp, "pp=1"}])) <= 0.10);
  }
  // From tp 4 on they do not (docs/accuracy.md: about 2.2 ms per tp rank per
  // layer and micro-batch, unpriced, no mechanism found in nanotron's code):
  // should one be priced, this fails and the documentation must say what it explains.
  for (int tp : {4, 8, 16}) {
    INFO("tp=" << tp);
    CHECK(Median(ratio[{tp, "pp>1 across nodes"}]) > 2);
  }
  // What that time behaves like (docs/accuracy.md "tp > 1 pipelines across
  // nodes on a healthy fabric"): a floor of about 3 ms per tp rank per layer
  // and micro-batch, the same at mbs 1 and 8 (eight times the bytes and the
  // GPU work, which the model's own time follows) and for hidden 2,048 and
  // 4,096, overlapping GPU work rather than adding to it (at mbs 16-32 the
  // runs take what the model prices). A latency or host cost, not a bandwidth.
  if (std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE")) {
    std::printf("| tp | mbs | runs | measured ms per layer per micro-batch | per tp rank | predicted |\n");
    for (const auto& [key, v] : floor_measured)
      std::printf("| %d | %d | %zu | %.1f | %.2f | %.1f |\n", key.first, key.second, v.size(), Median(v),
                  Median(v) / key.first, Median(floor_predicted[key]));
    for (const auto& [key, v] : floor_by_model)
      std::printf("floor by model | tp=%d | %s | %zu | %.1f |\n", key.first, key.second.c_str(), v.size(), Median(v));
  }
  // mbs 1 against the largest mbs whose predicted time stays under the floor
  // (tp 4: mbs 4; tp 8 and 16: mbs 8).
  for (const auto& [tp, big] : {std::pair{4, 4}, std::pair{8, 8}, std::pair{16, 8}}) {
    INFO("tp=" << tp << " mbs 1 against mbs " << big);
    const double at_1 = Median(floor_measured[{tp, 1}]), at_big = Median(floor_measured[{tp, big}]);
    CHECK(at_1 / tp > 2.0);
    CHECK(at_1 / tp < 4.5);
    CHECK(std::fabs(at_big / at_1 - 1) <= 0.25);
    CHECK(Median(floor_predicted[{tp, big}]) / Median(floor_predicted[{tp, 1}]) > 1.3);
  }
  for (int tp : {8, 16}) {
    INFO("tp=" << tp);
    const double small = Median(floor_by_model[{tp, "nanotron-1b"}]), large = Median(floor_by_model[{tp, "nanotron-8b"}]);
    CHECK(std::fabs(large / small - 1) <= 0.15);
  }
  // The same floor without a pipeline: pp = 1 runs whose TP crosses nodes
  // (tp 16, 32) take about 3 ms per tp rank per layer in the jobs that
  // measured a degraded fabric at start-up, and under 1 ms in the healthy ones.
  if (std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE"))
    for (const auto& [healthy, v] : tp_across_per_rank)
      std::printf("pp=1, tp>=16, %s fabric: %zu runs, %.2f ms per tp rank per layer per micro-batch\n",
                  healthy ? "healthy" : "degraded", v.size(), Median(v));
  CHECK(tp_across_per_rank[false].size() >= 20);
  CHECK(Median(tp_across_per_rank[false]) > 2.0);
  CHECK(Median(tp_across_per_rank[true]) < 1.0);
}
