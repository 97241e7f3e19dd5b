#include "simulator/simulate.h"


#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/check.h"
#include "core/error.h"
#include "cost_model/evaluator_finish.h"
#include "cost_model/report_check.h"
#include "simulator/engine.h"
#include "simulator/step_builder.h"
#include "simulator/tier_b.h"
#include "simulator/tier_c.h"
#include "simulator/timeline_stats.h"
#include "simulator/trace.h"
#include "simulator/trace_ranks.h"
#include "topology/placement.h"

namespace parasim::simulator {

namespace {

// "k=v,k=v" into pairs; throws naming `where` on a malformed item.
std::vector<std::pair<std::string, std::string>> SplitKeyValues(const std::string& text, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InvalidInput("", where, StrCat("'", item, "' is not key=value (e.g. '", where == "--straggler"
                                                                                 ? "rank=17,slowdown=1.2"
                                                                                 : "class=leaf-spine,fraction=0.3",
                                    "')"));
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

double ParseNumber(const std::string& value, const std::string& where, const std::string& key) {
  try {
    size_t used = 0;
    double v = std::stod(value, &used);
    if (used != value.size() || !std::isfinite(v)) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw InvalidInput("", StrCat(where, ".", key), StrCat("'", value, "' is not a number"));
  }
}

// Stage of every GPU: its index in its pipeline group (topology/placement.h).
std::vector<int> StageOfGpu(const ParallelConfig& config, int world) {
  Placement placement(config, world);
  std::vector<int> stage(world, 0);
  for (const auto& group : placement.AllGroups(ParallelDim::kPp)) {
    for (size_t k = 0; k < group.size(); ++k) stage[group[k]] = static_cast<int>(k);
  }
  return stage;
}

// Part of [start, end] with no compute on the rank (compute intervals sorted, disjoint).
double ExposedPart(const std::vector<std::pair<double, double>>& compute, double start, double end) {
  double covered = 0;
  auto it = std::lower_bound(compute.begin(), compute.end(), std::make_pair(start, start),
                             [](const auto& a, const auto& b) { return a.second < b.first; });
  for (; it != compute.end() && it->first < end; ++it) {
    covered += std::max(0.0, std::min(end, it->second) - std::max(start, it->first));
  }
  return std::max(0.0, (end - start) - covered);
}

Report MakeReport(const StepWorkload& wl, const ClusterSpec& cluster, const StepGraph& sg, const Timeline& t,
                  const PowerModel& power, Fidelity fidelity, std::vector<RankResult>* ranks) {
  Report rep;
  rep.config = wl.config;
  rep.num_micro_batches = wl.num_micro_batches;
  rep.fidelity = fidelity;
  const TaskGraph& g = sg.graph;
  // The timeline's makespan plus the wait for the slowest GPU (tier A's term).
  const double step = t.makespan_s + wl.straggler_s;
  PARASIM_CHECK(step > 0 && std::isfinite(step), "simulated step time ", step);
  const std::vector<RankSummary> sums = SummarizeRanks(g, t, power, step);

  // The critical rank: the least idle one (ties: lowest index).
  int crit = 0;
  double gpu_energy = 0, comm_only_energy = 0;
  ranks->clear();
  for (int r = 0; r < g.num_ranks(); ++r) {
    const RankSummary& s = sums[r];
    if (s.compute_s + s.exposed_comm_s > sums[crit].compute_s + sums[crit].exposed_comm_s + 1e-12 * step) crit = r;
    gpu_energy += s.energy_J * sg.rank_weight[r];
    comm_only_energy += s.exposed_comm_s * power.comm_W * sg.rank_weight[r];
    ranks->push_back(RankResult{g.rank_name(r), sg.rank_gpu[r], sg.rank_stage[r], sg.rank_weight[r],
                                Seconds(s.compute_s), Seconds(s.comm_s), Seconds(s.exposed_comm_s),
                                Seconds(s.idle_s), Joules(s.energy_J)});
  }

  // Per-dimension totals and exposure, and compute by kind, on the critical rank.
  std::vector<std::pair<double, double>> compute;
  std::array<double, 5> dim_total{}, dim_exposed{};
  double matmul_s = 0, memory_s = 0, comm_total = 0;
  for (int32_t op = 0; op < g.num_ops(); ++op) {
    if (g.op_rank(op) != crit) continue;
    const int32_t act = g.op_activity(op);
    const WorkKind kind = g.core(act).kind;
    if (kind == WorkKind::kMatmul || kind == WorkKind::kMemory) {
      compute.emplace_back(t.start_s[act], t.end_s[act]);
      (kind == WorkKind::kMatmul ? matmul_s : memory_s) += t.end_s[act] - t.start_s[act];
    }
  }
  std::sort(compute.begin(), compute.end());
  for (int32_t op = 0; op < g.num_ops(); ++op) {
    if (g.op_rank(op) != crit) continue;
    const int32_t act = g.op_activity(op);
    if (g.core(act).kind != WorkKind::kComm) continue;
    const double d = t.end_s[act] - t.start_s[act];
    comm_total += d;
    const int dim = std::clamp<int>(g.activity(act).dim, 0, 4);
    dim_total[dim] += d;
    dim_exposed[dim] += ExposedPart(compute, t.start_s[act], t.end_s[act]);
  }
  // What the GEMMs hide of the TP collectives belongs to the totals (tier A's meaning).
  for (int dim = 0; dim < 5; ++dim) {
    const double hidden = sg.stage_hidden_comm[sg.rank_stage[crit]][dim];
    dim_total[dim] += hidden;
    comm_total += hidden;
  }

  // The metrics every tier derives the same way: GPU energy summed over the
  // ranks, node overhead as the workload carries it, fabric switches from the cluster.
  StepMeasures m;
  m.step_s = step;
  m.tokens = static_cast<double>(wl.tokens_per_step);
  m.world = std::max(1, wl.world_size);
  m.model_flops = wl.model_flops_per_step.si();
  m.hardware_flops = wl.hardware_flops_per_step.si();
  m.peak_flops = cluster.gpu.bf16_dense.si();
  m.gpu = GpuDraw::AllGpus(gpu_energy);
  m.comm_only_energy_j = comm_only_energy;
  FacilityPower facility = FacilityPowerOf(cluster);
  facility.node_overhead_w = wl.node_overhead_power.si();
  FinishReport(m, facility, &rep);
  rep.compute = Seconds(sums[crit].compute_s);
  rep.comm = Seconds(comm_total);
  rep.exposed_comm = Seconds(sums[crit].exposed_comm_s);
  rep.exposed_comm_fraction = sums[crit].exposed_comm_s / step;
  rep.bubble = Seconds(sums[crit].idle_s);
  double memory = 0;
  for (const StageWork& st : wl.stages) {
    if (st.memory_peak.si() > memory) rep.memory_peak_stage = static_cast<int>(rep.memory_bytes_per_stage.size());
    memory = std::max(memory, st.memory_peak.si());
    rep.memory_bytes_per_stage.push_back(st.memory_peak.si());
  }
  rep.memory_per_gpu = Bytes(memory);
  rep.by_op = {{"matmul", Seconds(matmul_s), Seconds(0)}, {"memory_bound", Seconds(memory_s), Seconds(0)}};
  for (ParallelDim d : {ParallelDim::kDp, ParallelDim::kTp, ParallelDim::kPp, ParallelDim::kCp, ParallelDim::kEp}) {
    const int i = static_cast<int>(d);
    rep.by_dimension.push_back({ToString(d), Seconds(dim_total[i]), Seconds(std::min(dim_exposed[i], step))});
  }
  CheckReportFinite(rep, "simulated report");
  return rep;
}

// Tier C's schedule for a job of `world` GPUs (DESIGN.md §3 size limits).
bool TierCStepLevel(TierCSchedule asked, int world) {
  if (world > kTierCCoarseMaxGpus) {
    throw InvalidInput("", "--fidelity", StrCat("full (tier C) simulates at most ", kTierCCoarseMaxGpus,
                                                " GPUs (coarse schedule); this job has ", world,
                                                ": use --fidelity simulated"));
  }
  if (asked == TierCSchedule::kStep && world > kTierCStepMaxGpus) {
    throw InvalidInput("", "--tier-c", StrCat("step replays at most ", kTierCStepMaxGpus, " GPUs; this job has ",
                                              world, ": use --tier-c coarse"));
  }
  if (asked == TierCSchedule::kAuto) return world <= kTierCStepMaxGpus;
  return asked == TierCSchedule::kStep;
}

}  // namespace

Straggler ParseStraggler(const std::string& text, const std::string& where) {
  Straggler s;
  bool has_rank = false;
  for (const auto& [key, value] : SplitKeyValues(text, where)) {
    if (key == "rank") {
      double r = ParseNumber(value, where, key);
      if (r < 0 || r != std::floor(r)) throw InvalidInput("", where + ".rank", StrCat("'", value, "' is not a rank (>= 0)"));
      s.rank = static_cast<int>(r);
      has_rank = true;
    } else if (key == "slowdown") {
      s.slowdown = ParseNumber(value, where, key);
      if (s.slowdown <= 0) throw InvalidInput("", where + ".slowdown", StrCat("'", value, "' must be > 0"));
    } else {
      throw InvalidInput("", StrCat(where, ".", key), "unknown key; valid: rank, slowdown");
    }
  }
  if (!has_rank) throw InvalidInput("", where + ".rank", "missing (e.g. rank=17,slowdown=1.2)");
  return s;
}

BackgroundLoad ParseBackgroundLoad(const std::string& text, const std::string& where) {
  BackgroundLoad b;
  bool has_class = false;
  for (const auto& [key, value] : SplitKeyValues(text, where)) {
    if (key == "class") {
      has_class = true;
      if (value == "nvlink") b.link_class = LinkClass::kNvLink;
      else if (value == "pcie") b.link_class = LinkClass::kPcie;
      else if (value == "nic") b.link_class = LinkClass::kNic;
      else if (value == "leaf-spine") b.link_class = LinkClass::kLeafSpine;
      else if (value == "spine-core") b.link_class = LinkClass::kSpineCore;
      else throw InvalidInput("", where + ".class", StrCat("'", value, "'; valid: nvlink, pcie, nic, leaf-spine, spine-core"));
    } else if (key == "fraction") {
      b.fraction = ParseNumber(value, where, key);
      if (b.fraction < 0 || b.fraction >= 1) throw InvalidInput("", where + ".fraction", StrCat("'", value, "' must be in [0, 1)"));
    } else {
      throw InvalidInput("", StrCat(where, ".", key), "unknown key; valid: class, fraction");
    }
  }
  if (!has_class) throw InvalidInput("", where + ".class", "missing (e.g. class=leaf-spine,fraction=0.3)");
  return b;
}

struct StepSimulator::Buffers {
  Engine engine;
  StepGraph graph;
};

StepSimulator::StepSimulator() : buffers_(std::make_unique<Buffers>()) {}
StepSimulator::~StepSimulator() = default;
StepSimulator::StepSimulator(StepSimulator&&) noexcept = default;
StepSimulator& StepSimulator::operator=(StepSimulator&&) noexcept = default;

SimulationResult SimulateStep(const StepWorkload& wl, const ClusterSpec& cluster, const SimulationOptions& options) {
  StepSimulator simulator;
  return simulator.Simulate(wl, cluster, options);
}

SimulationResult StepSimulator::Simulate(const StepWorkload& wl, const ClusterSpec& cluster,
                                         const SimulationOptions& options) {
  if (options.fidelity == Fidelity::kAnalytical) {
    throw InvalidInput("", "--fidelity", "the simulator runs 'simulated' (tier B) or 'full' (tier C)");
  }
  const int world = wl.world_size;
  PARASIM_CHECK(world >= 1 && !wl.stages.empty(), "empty workload");
  for (const Straggler& s : options.stragglers) {
    if (s.rank < 0 || s.rank >= world) {
      throw InvalidInput("", "--straggler.rank", StrCat(s.rank, " is not a rank of this job (0..", world - 1, ")"));
    }
  }
  if (options.fidelity == Fidelity::kSimulated && !options.background.empty()) {
    throw InvalidInput("", "--background-load", "needs --fidelity full (tier B has no links to load)");
  }
  const int pp = static_cast<int>(wl.stages.size());
  const std::vector<int> stage_of = StageOfGpu(wl.config, world);
  std::vector<std::vector<int>> stage_gpus(pp);
  for (int gpu = 0; gpu < world; ++gpu) stage_gpus[stage_of[gpu]].push_back(gpu);

  SimulationResult result;
  Engine& engine = buffers_->engine;
  StepGraph& sg = buffers_->graph;
  EngineOptions eo;
  std::vector<double> slowdown;
  std::vector<int> lane_of_gpu(static_cast<size_t>(world), 0);   // the graph rank simulating each GPU
  std::vector<double> capacities;
  if (options.fidelity == Fidelity::kSimulated) {
    // One representative per stage: its first GPU.
    std::vector<std::vector<int>> reps(pp);
    for (int s = 0; s < pp; ++s) reps[s] = {stage_gpus[s].front()};
    TimedCollectives factory;
    BuildStepGraphInto(wl, reps, static_cast<double>(world) / pp, factory, sg);
    for (int r = 0; r < sg.graph.num_ranks(); ++r) {
      for (int gpu : stage_gpus[sg.rank_stage[r]]) lane_of_gpu[gpu] = r;
    }
    // Every group waits for its slowest member, so a straggler paces its stage.
    slowdown.assign(pp, 1.0);
    for (const Straggler& s : options.stragglers) {
      slowdown[stage_of[s.rank]] = std::max(slowdown[stage_of[s.rank]], s.slowdown);
    }
  } else {
    // One lane per TP group (tier_c.h): its first GPU, standing for tp GPUs.
    std::vector<std::vector<int>> lanes(pp);
    for (int gpu : FlowCollectives::LaneGpus(wl.config, world)) lanes[stage_of[gpu]].push_back(gpu);
    FlowCollectives factory(wl, cluster, options.background, TierCStepLevel(options.tier_c, world));
    result.step_level = TierCStepLevel(options.tier_c, world);
    BuildStepGraphInto(wl, lanes, static_cast<double>(std::max(1, wl.config.tp)), factory, sg);
    capacities = factory.link_capacity_Bps();
    // A straggler slows its TP group's lane (the group waits for it at every collective).
    slowdown.assign(sg.graph.num_ranks(), 1.0);
    for (int r = 0; r < sg.graph.num_ranks(); ++r) {
      for (int gpu : factory.TpGroupOf(sg.rank_gpu[r])) {
        lane_of_gpu[gpu] = r;
        for (const Straggler& s : options.stragglers) {
          if (s.rank == gpu) slowdown[r] = std::max(slowdown[r], s.slowdown);
        }
      }
    }
  }
  eo.interference_slowdown = sg.interference_slowdown;
  eo.rank_compute_slowdown = slowdown;
  eo.link_capacity_Bps = capacities;
  eo.dynamic_contention = options.dynamic_contention;
  const Timeline& t = engine.Run(sg.graph, eo);
  const PowerModel power{wl.power.matmul.si(), wl.power.memory_bound.si(), wl.power.comm_only.si(),
                         wl.power.idle.si()};
  result.report = MakeReport(wl, cluster, sg, t, power, options.fidelity, &result.ranks);
  result.events = t.events;
  result.network_steps = t.network_steps;
  result.activities = sg.graph.num_activities();
  if (options.trace) {
    const std::vector<char> keep = SelectTraceRanks(options.trace_ranks, result.ranks, lane_of_gpu);
    result.trace_json = WriteChromeTrace(sg.graph, t, power, &keep);
  }
  return result;
}

SimulationResult SimulateConfig(const AnalyticalEvaluator& evaluator, const ParallelConfig& config,
                                const SimulationOptions& options) {
  Report a = evaluator.Evaluate(config);
  if (!a.feasible) {
    SimulationResult r;
    r.report = a;
    r.report.fidelity = options.fidelity;
    return r;
  }
  StepWorkload wl = evaluator.BuildWorkload(config);
  SimulationResult r = SimulateStep(wl, evaluator.cluster(), options);
  // Tier A's peak (precision-aware) and memory model; rescale by step time.
  const double ratio = a.step_time / r.report.step_time;
  r.report.mfu = a.mfu * ratio;
  r.report.mfu_own_precision = a.mfu_own_precision * ratio;
  r.report.hfu = a.hfu * ratio;
  r.report.tflops_per_gpu = a.tflops_per_gpu * ratio;
  r.report.hardware_tflops_per_gpu = a.hardware_tflops_per_gpu * ratio;
  r.report.memory_per_gpu = a.memory_per_gpu;
  r.report.memory_breakdown_bytes = a.memory_breakdown_bytes;
  r.report.memory_bytes_per_stage = a.memory_bytes_per_stage;
  r.report.memory_allocated_after_backward_per_stage = a.memory_allocated_after_backward_per_stage;
  r.report.memory_peak_stage = a.memory_peak_stage;
  return r;
}

}  // namespace parasim::simulator
