#include "planner/validation.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "core/error.h"
#include "core/loaders.h"
#include "core/number_format.h"
#include "cost_model/collective_cost.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "topology/group_path.h"

namespace parasim::planner {
namespace {

// The paper's set-up (seed findings, "Their set-up").
constexpr const char* kStack = "pytorch-fsdp";       // PyTorch 2.3 FSDP, the paper's stack
constexpr long long kSeqLen = 4096;
// "Local batch 2": a micro-batch of 2 sequences, one micro-batch per step.
constexpr long long kLocalBatch = 2;
const std::vector<int> kWeakSizes = {8, 16, 32, 64, 128, 256, 512, 1024, 2048};

std::string Pct(double fraction, int digits = 1) { return FormatFixed(100.0 * fraction, digits) + "%"; }
std::string SignedPct(double fraction) { return (fraction >= 0 ? "+" : "") + Pct(fraction); }
const char* Verdict(bool ok) { return ok ? "yes" : "NO"; }

struct Setup {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
};

Setup MakeSetup(const std::string& model, const std::string& cluster, int gpus, long long global_batch,
                long long seq_len = kSeqLen) {
  Setup s;
  s.model = LoadModel(model);
  s.cluster = ResizeCluster(LoadCluster(cluster), gpus);
  s.job.global_batch = global_batch;
  s.job.seq_len = seq_len;
  s.job.stack = kStack;
  return s;
}

// Plans of a set-up ranked by throughput under `constraints` (top_k of them).
PlanResult Search(const Setup& s, const std::string& constraints, int threads, int top_k = 1) {
  const AnalyticalEvaluator evaluator(s.model, s.cluster, s.job);
  PlanOptions o;
  o.constraints = ConstraintSet::Parse(constraints, "validate");
  o.objective.objective = Objective::kThroughput;
  o.top_k = top_k;
  o.threads = threads;
  o.baseline = false;
  return RunPlan(evaluator, o);
}

std::optional<Report> Best(const Setup& s, const std::string& constraints, int threads) {
  PlanResult r = Search(s, constraints, threads);
  if (r.plans.empty()) return std::nullopt;
  return r.plans.front();
}

std::string Join(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "," + b; }

std::string Describe(const Report& r) {
  return StrCat("tp=", r.config.tp, " pp=", r.config.pp, r.config.cp > 1 ? StrCat(" cp=", r.config.cp) : "",
                " dp=", r.config.dp, " mbs=", r.config.micro_batch,
                r.config.recompute != RecomputeMode::kNone ? StrCat(" recompute=", ToString(r.config.recompute)) : "",
                ": ", FormatFixed(r.tokens_per_s_per_gpu, 0), " tok/s/GPU, MFU ", Pct(r.mfu), ", exposed ",
                Pct(r.exposed_comm_fraction), ", ", FormatFixed(r.power_per_gpu.si(), 0), " W, ",
                FormatFixed(r.memory_per_gpu.si() / 1e9, 1), " GB");
}

// What the whole space picks for a set-up, against the paper-space best.
std::string WholeSpace(const Setup& s, const Report& paper_best, int threads) {
  const std::optional<Report> any = Best(s, "", threads);
  if (!any) return "whole space: no feasible plan";
  return StrCat("whole space picks ", any->config.ToString(), " at ", FormatFixed(any->tokens_per_s, 0), " tokens/s (",
                SignedPct(any->tokens_per_s / paper_best.tokens_per_s - 1.0), " vs the paper-space best)");
}

// The FSDP weak-scaling sweep of F1, F2 and F12 (tp=pp=1, zero2, local batch 2).
struct WeakSweep {
  std::vector<int> gpus;
  std::vector<Report> reports;   // one per size; infeasible sizes have feasible = false
};

WeakSweep RunWeakSweep(int threads) {
  WeakSweep w;
  for (int n : kWeakSizes) {
    const Setup s = MakeSetup("llama2-7b", "dgx-h100", n, kLocalBatch * n);
    std::optional<Report> r =
        Best(s, StrCat("tp=1,pp=1,cp=1,sharding=zero2,mbs=", kLocalBatch), threads);
    w.gpus.push_back(n);
    Report rep;
    rep.feasible = false;
    w.reports.push_back(r ? *r : rep);
  }
  return w;
}

const Report* At(const WeakSweep& w, int gpus) {
  for (size_t i = 0; i < w.gpus.size(); ++i) {
    if (w.gpus[i] == gpus && w.reports[i].feasible) return &w.reports[i];
  }
  return nullptr;
}

class Validator {
 public:
  explicit Validator(const ValidationOptions& o) : options_(o) {}

  const WeakSweep& Weak() {
    if (!weak_) weak_ = std::make_unique<WeakSweep>(RunWeakSweep(options_.threads));
    return *weak_;
  }

  FindingResult F1() {
    FindingResult f{"F1", "Weak scaling: FSDP per-GPU throughput falls as the ring grows (Fig. 3, §4.1)",
                    "7B, tp=pp=1, zero2, local batch 2, 8 -> 2048 H100",
                    "TFLOPS and WPS per GPU -37.22% from 128 to 2048 GPUs",
                    "per-GPU tokens/s drop 25-50% from 128 to 2048; exposed comm < 10% of step at <= 128 GPUs, "
                    "growing monotonically after", "", false, {}, ""};
    const WeakSweep& w = Weak();
    for (size_t i = 0; i < w.gpus.size(); ++i) {
      f.details.push_back(StrCat(w.gpus[i], " GPUs: ", w.reports[i].feasible ? Describe(w.reports[i]) : "does not fit"));
    }
    const Report* a = At(w, 128);
    const Report* b = At(w, 2048);
    if (!a || !b) {
      f.predicted = "a size does not fit";
      return f;
    }
    const double drop = 1.0 - b->tokens_per_s_per_gpu / a->tokens_per_s_per_gpu;
    double max_small = 0;
    bool small_ok = true;
    for (size_t i = 0; i < w.gpus.size(); ++i) {
      if (w.gpus[i] > 128) continue;
      if (!w.reports[i].feasible) { small_ok = false; continue; }
      max_small = std::max(max_small, w.reports[i].exposed_comm_fraction);
    }
    bool growing = true;
    double last = -1;
    for (size_t i = 0; i < w.gpus.size(); ++i) {
      if (w.gpus[i] < 128) continue;
      if (!w.reports[i].feasible || w.reports[i].exposed_comm_fraction <= last) growing = false;
      last = w.reports[i].feasible ? w.reports[i].exposed_comm_fraction : last;
    }
    const bool drop_ok = drop >= 0.25 && drop <= 0.50;
    small_ok = small_ok && max_small < 0.10;
    f.pass = drop_ok && small_ok && growing;
    f.predicted = StrCat("per-GPU tokens/s -", Pct(drop), " (", Verdict(drop_ok), "); exposed at <=128 GPUs max ",
                         Pct(max_small), " (", Verdict(small_ok), "); exposed ", Pct(a->exposed_comm_fraction), " -> ",
                         Pct(b->exposed_comm_fraction), " from 128 to 2048, monotonic ", Verdict(growing));
    return f;
  }

  FindingResult F2() {
    FindingResult f{"F2", "Power stays nearly flat while throughput falls (§4.1)", "as F1",
                    "658 W -> 620 W per GPU (-5.87%), 128 -> 2048",
                    "power per GPU at 128 within +-10% of 658 W; drop 2-12%; tokens per joule falls 20-45%", "", false,
                    {}, ""};
    const WeakSweep& w = Weak();
    const Report* a = At(w, 128);
    const Report* b = At(w, 2048);
    if (!a || !b) {
      f.predicted = "a size does not fit";
      return f;
    }
    const double p128 = a->power_per_gpu.si();
    const double drop = 1.0 - b->power_per_gpu.si() / p128;
    const double tpj_drop = 1.0 - b->tokens_per_joule / a->tokens_per_joule;
    const bool level_ok = p128 >= 658.0 * 0.9 && p128 <= 658.0 * 1.1;
    const bool drop_ok = drop >= 0.02 && drop <= 0.12;
    const bool tpj_ok = tpj_drop >= 0.20 && tpj_drop <= 0.45;
    f.pass = level_ok && drop_ok && tpj_ok;
    f.predicted = StrCat(FormatFixed(p128, 0), " W at 128 (", Verdict(level_ok), "), ", FormatFixed(b->power_per_gpu.si(), 0),
                         " W at 2048: drop ", Pct(drop), " (", Verdict(drop_ok), "); tokens/J ",
                         FormatFixed(a->tokens_per_joule, 3), " -> ", FormatFixed(b->tokens_per_joule, 3), ": -", Pct(tpj_drop),
                         " (", Verdict(tpj_ok), ")");
    for (size_t i = 0; i < w.gpus.size(); ++i) {
      if (!w.reports[i].feasible) continue;
      f.details.push_back(StrCat(w.gpus[i], " GPUs: ", FormatFixed(w.reports[i].power_per_gpu.si(), 0), " W, ",
                                 FormatFixed(w.reports[i].tokens_per_joule, 3), " tokens/J"));
    }
    return f;
  }

  FindingResult F3() {
    FindingResult f{"F3", "Strong scaling collapses utilization (Fig. 5, §4.2)",
                    "7B, global batch 32, 2 -> 32 DGX H100 nodes, best config per point (paper space)",
                    "MFU ~40% at 2 nodes, < 15% at 32 nodes",
                    "best-plan MFU 32-48% at 2 nodes, under 18% at 32 nodes, falling monotonically", "", false, {}, ""};
    std::vector<double> mfu;
    std::optional<Report> last;
    for (int nodes : {2, 4, 8, 16, 32}) {
      const Setup s = MakeSetup("llama2-7b", "dgx-h100", 8 * nodes, 32);
      const std::optional<Report> r = Best(s, PaperSpaceConstraints(), options_.threads);
      f.details.push_back(StrCat(nodes, " nodes: ", r ? Describe(*r) : "no feasible plan"));
      mfu.push_back(r ? r->mfu : 0.0);
      if (nodes == 32 && r && options_.whole_space) f.whole_space = WholeSpace(s, *r, options_.threads);
    }
    bool falling = true;
    for (size_t i = 1; i < mfu.size(); ++i) falling = falling && mfu[i] < mfu[i - 1];
    const bool first_ok = mfu.front() >= 0.32 && mfu.front() <= 0.48;
    const bool last_ok = mfu.back() > 0 && mfu.back() < 0.18;
    f.pass = first_ok && last_ok && falling;
    f.predicted = StrCat("MFU ", Pct(mfu.front()), " at 2 nodes (", Verdict(first_ok), "), ", Pct(mfu.back()),
                         " at 32 nodes (", Verdict(last_ok), "), monotonic ", Verdict(falling));
    return f;
  }

  FindingResult F4() {
    FindingResult f{"F4", "Small model parallelism beats pure FSDP at scale (Fig. 6, §4.3)",
                    "7B, 256 H100, global batch 512, best config (paper space)",
                    "TP or PP of 2 or 4 gives the highest throughput and least exposed comm",
                    "best plan has tp*pp in {2, 4}; plans with tp or pp of 16 are worse than the best", "", false, {},
                    ""};
    const Setup s = MakeSetup("llama2-7b", "dgx-h100", 256, 512);
    const std::optional<Report> best = Best(s, PaperSpaceConstraints(), options_.threads);
    const std::optional<Report> tp16 = Best(s, Join(PaperSpaceConstraints(), "tp=16"), options_.threads);
    const std::optional<Report> pp16 = Best(s, Join(PaperSpaceConstraints(), "pp=16"), options_.threads);
    const std::optional<Report> fsdp = Best(s, Join(PaperSpaceConstraints(), "tp=1,pp=1"), options_.threads);
    if (!best) {
      f.predicted = "no feasible plan";
      return f;
    }
    f.details.push_back("best: " + Describe(*best));
    if (fsdp) f.details.push_back("best tp=pp=1: " + Describe(*fsdp));
    if (tp16) f.details.push_back("best tp=16: " + Describe(*tp16));
    if (pp16) f.details.push_back("best pp=16: " + Describe(*pp16));
    const int product = best->config.tp * best->config.pp;
    const bool product_ok = product == 2 || product == 4;
    const bool tp16_ok = !tp16 || tp16->tokens_per_s < best->tokens_per_s;
    const bool pp16_ok = !pp16 || pp16->tokens_per_s < best->tokens_per_s;
    f.pass = product_ok && tp16_ok && pp16_ok;
    f.predicted = StrCat("best tp=", best->config.tp, " pp=", best->config.pp, " (tp*pp=", product, ": ",
                         Verdict(product_ok), ")",
                         fsdp ? StrCat(", ", SignedPct(best->tokens_per_s / fsdp->tokens_per_s - 1.0), " over tp=pp=1") : "",
                         "; best with 16: ",
                         tp16 ? SignedPct(tp16->tokens_per_s / best->tokens_per_s - 1.0) : std::string("n/a"), " (tp), ",
                         pp16 ? SignedPct(pp16->tokens_per_s / best->tokens_per_s - 1.0) : std::string("n/a"),
                         " (pp) vs best (", Verdict(tp16_ok && pp16_ok), ")");
    if (options_.whole_space) f.whole_space = WholeSpace(s, *best, options_.threads);
    return f;
  }

  FindingResult F5() {
    FindingResult f{"F5", "Newer GPUs are more communication-bound (Fig. 7, §4.4)",
                    "7B, 32 nodes (256 GPUs), global batch 512, best config each (paper space), A100 vs H100",
                    "MFU 59.67% A100 vs 40.77% H100; exposed comm +12.83% on H100",
                    "A100 MFU 52-67%, H100 MFU 33-48%, H100 at least 10 points below A100", "", false, {}, ""};
    const Setup a = MakeSetup("llama2-7b", "dgx-a100", 256, 512);
    const Setup h = MakeSetup("llama2-7b", "dgx-h100", 256, 512);
    const std::optional<Report> ra = Best(a, PaperSpaceConstraints(), options_.threads);
    const std::optional<Report> rh = Best(h, PaperSpaceConstraints(), options_.threads);
    if (!ra || !rh) {
      f.predicted = "no feasible plan";
      return f;
    }
    f.details.push_back("A100: " + Describe(*ra));
    f.details.push_back("H100: " + Describe(*rh));
    const bool a_ok = ra->mfu >= 0.52 && ra->mfu <= 0.67;
    const bool h_ok = rh->mfu >= 0.33 && rh->mfu <= 0.48;
    const bool gap_ok = ra->mfu - rh->mfu >= 0.10;
    f.pass = a_ok && h_ok && gap_ok;
    f.predicted = StrCat("A100 MFU ", Pct(ra->mfu), " (", Verdict(a_ok), "), H100 ", Pct(rh->mfu), " (", Verdict(h_ok),
                         "), gap ", FormatFixed(100 * (ra->mfu - rh->mfu), 1), " points (", Verdict(gap_ok),
                         "); exposed ", Pct(ra->exposed_comm_fraction), " vs ", Pct(rh->exposed_comm_fraction));
    if (options_.whole_space) f.whole_space = "H100 " + WholeSpace(h, *rh, options_.threads);
    return f;
  }

  FindingResult F6() {
    FindingResult f{"F6", "TP rescues FSDP at pretraining scale (§5)",
                    "7B, 2048 H100, local batch 2 (global batch 4096), paper space",
                    "TP: +52.60% WPS over FSDP, +30 W per GPU", "best plan with tp>1 beats tp=pp=1 by 30-80%", "",
                    false, {}, ""};
    const Setup s = MakeSetup("llama2-7b", "dgx-h100", 2048, kLocalBatch * 2048);
    const std::optional<Report> tp = Best(s, Join(PaperSpaceConstraints(), "tp>=2"), options_.threads);
    const std::optional<Report> fsdp = Best(s, Join(PaperSpaceConstraints(), "tp=1,pp=1"), options_.threads);
    if (!tp || !fsdp) {
      f.predicted = "no feasible plan";
      return f;
    }
    f.details.push_back("best tp>1: " + Describe(*tp));
    f.details.push_back("tp=pp=1: " + Describe(*fsdp));
    const double gain = tp->tokens_per_s / fsdp->tokens_per_s - 1.0;
    f.pass = gain >= 0.30 && gain <= 0.80;
    f.predicted = StrCat("tp>1 ", SignedPct(gain), " tokens/s over tp=pp=1, power ",
                         FormatFixed(tp->power_per_gpu.si() - fsdp->power_per_gpu.si(), 0), " W per GPU more");
    return f;
  }

  FindingResult F7() {
    FindingResult f{"F7", "Bigger models pay more communication (Fig. 8, §4.5)",
                    "1B, 7B, 13B, 70B on 256 H100, global batch 512, best config each (paper space)",
                    "exposed comm grows with size; model parallelism reduces it at every size",
                    "exposed-comm time of the best plan increases 1B -> 7B -> 13B -> 70B; at each size some tp*pp > 1 "
                    "plan has less exposed comm than tp=pp=1 (where that fits)", "", false, {}, ""};
    bool growing = true;
    bool mp_ok = true;
    double last = -1;
    std::string trend;
    for (const char* name : {"llama2-1b", "llama2-7b", "llama2-13b", "llama2-70b"}) {
      const Setup s = MakeSetup(name, "dgx-h100", 256, 512);
      const PlanResult r = Search(s, PaperSpaceConstraints(), options_.threads, 1 << 20);
      if (r.plans.empty()) {
        f.details.push_back(StrCat(name, ": no feasible plan"));
        growing = false;
        continue;
      }
      const Report& best = r.plans.front();
      const Report* fsdp = nullptr;
      const Report* least_mp = nullptr;
      for (const Report& p : r.plans) {
        if (p.config.tp * p.config.pp == 1) {
          if (!fsdp) fsdp = &p;   // ranked: the first is the best tp=pp=1 plan
        } else if (!least_mp || p.exposed_comm < least_mp->exposed_comm) {
          least_mp = &p;
        }
      }
      const bool size_ok = !fsdp || (least_mp && least_mp->exposed_comm < fsdp->exposed_comm);
      mp_ok = mp_ok && size_ok;
      const double exposed = best.exposed_comm.si();
      growing = growing && exposed > last;
      last = exposed;
      trend += StrCat(trend.empty() ? "" : " -> ", FormatFixed(exposed * 1e3, 1), " ms");
      f.details.push_back(StrCat(name, ": best ", Describe(best), "; exposed ", FormatFixed(exposed * 1e3, 1), " ms",
                                 fsdp ? StrCat("; tp=pp=1 ", FormatFixed(fsdp->exposed_comm.si() * 1e3, 1), " ms")
                                      : std::string("; tp=pp=1 does not fit"),
                                 least_mp ? StrCat("; least with tp*pp>1 ", FormatFixed(least_mp->exposed_comm.si() * 1e3, 1),
                                                   " ms (tp=", least_mp->config.tp, " pp=", least_mp->config.pp, ")")
                                          : std::string("")));
    }
    f.pass = growing && mp_ok;
    f.predicted = StrCat("best-plan exposed comm ", trend, " (increasing ", Verdict(growing),
                         "); model parallelism cuts it at every size ", Verdict(mp_ok));
    return f;
  }

  FindingResult F8() {
    FindingResult f{"F8", "Longer context hides communication (Fig. 9, §4.6)",
                    "7B, 256 H100, tp=pp=1 zero2, 8,192 tokens per GPU per step (2k x 4, 4k x 2, 8k x 1)",
                    "lower exposed comm, higher MFU with longer sequences",
                    "MFU rises and exposed fraction falls from 2k -> 4k -> 8k", "", false, {}, ""};
    std::vector<double> mfu, exposed;
    for (const auto& [seq, mbs] : std::vector<std::pair<long long, int>>{{2048, 4}, {4096, 2}, {8192, 1}}) {
      const Setup s = MakeSetup("llama2-7b", "dgx-h100", 256, 256LL * mbs, seq);
      const std::optional<Report> r =
          Best(s, StrCat("tp=1,pp=1,cp=1,sharding=zero2,mbs=", mbs), options_.threads);
      f.details.push_back(StrCat(seq, " x ", mbs, ": ", r ? Describe(*r) : "does not fit"));
      mfu.push_back(r ? r->mfu : 0);
      exposed.push_back(r ? r->exposed_comm_fraction : 1);
    }
    const bool mfu_ok = mfu[0] > 0 && mfu[1] > mfu[0] && mfu[2] > mfu[1];
    const bool exposed_ok = exposed[1] < exposed[0] && exposed[2] < exposed[1];
    f.pass = mfu_ok && exposed_ok;
    f.predicted = StrCat("MFU ", Pct(mfu[0]), " -> ", Pct(mfu[1]), " -> ", Pct(mfu[2]), " (rising ", Verdict(mfu_ok),
                         "); exposed ", Pct(exposed[0]), " -> ", Pct(exposed[1]), " -> ", Pct(exposed[2]),
                         " (falling ", Verdict(exposed_ok), ")");
    return f;
  }

  FindingResult F9() {
    FindingResult f{"F9", "NCCL AllReduce (tree) scales, AllGather (ring) does not (Fig. 2)",
                    "DGX H100, 4 -> 512 nodes, the per-layer FSDP message of 7B, the paper's NCCL",
                    "AllGather bus bandwidth falls with node count; AllReduce holds",
                    "ring AllGather busbw at 512 nodes <= 50% of 4 nodes; tree AllReduce at 512 nodes >= 60% of 4 "
                    "nodes", "", false, {}, ""};
    const ModelSpec model = LoadModel("llama2-7b");
    const SoftwareStack stack = LoadSoftwareStack(kStack);
    const Bytes layer_bytes(static_cast<double>(model.LayerParameters()) * stack.comm_param_bytes);
    const ClusterSpec base = LoadCluster("dgx-h100");
    double ag4 = 0, ag512 = 0, ar4 = 0, ar512 = 0;
    for (int nodes : {4, 8, 16, 32, 64, 128, 256, 512}) {
      const ClusterSpec c = ResizeCluster(base, nodes * base.gpus_per_node);
      ParallelConfig cfg;
      cfg.dp = c.TotalGpus();
      const GroupPath path = ResolveGroupPath(c, cfg, ParallelDim::kDp);
      const NcclFeatures features = NcclFeaturesFor(c, stack.nccl_version);
      const CollectiveCost ag = EstimateCollective(CollectiveOp::kAllGather, layer_bytes, path, features);
      const CollectiveCost ar = EstimateCollective(CollectiveOp::kAllReduce, layer_bytes, path, features);
      const double agbw = ag.busbw.si() / 1e9, arbw = ar.busbw.si() / 1e9;
      if (nodes == 4) { ag4 = agbw; ar4 = arbw; }
      if (nodes == 512) { ag512 = agbw; ar512 = arbw; }
      f.details.push_back(StrCat(nodes, " nodes: AllGather ", FormatFixed(agbw, 1), " GB/s (", ToString(ag.algo), "/",
                                 ToString(ag.protocol), "), AllReduce ", FormatFixed(arbw, 1), " GB/s (", ToString(ar.algo),
                                 "/", ToString(ar.protocol), ")"));
    }
    const double ag_ratio = ag4 > 0 ? ag512 / ag4 : 1;
    const double ar_ratio = ar4 > 0 ? ar512 / ar4 : 0;
    const bool ag_ok = ag_ratio <= 0.50;
    const bool ar_ok = ar_ratio >= 0.60;
    f.pass = ag_ok && ar_ok;
    f.predicted = StrCat("message ", FormatFixed(layer_bytes.si() / 1e6, 0), " MB: AllGather busbw at 512 nodes ",
                         Pct(ag_ratio), " of 4 nodes (", Verdict(ag_ok), "); AllReduce ", Pct(ar_ratio), " (",
                         Verdict(ar_ok), ")");
    return f;
  }

  FindingResult F10() {
    FindingResult f{"F10", "Context parallelism loses to TP at 4k (App. E)",
                    "7B, 4k sequence, 256 H100, global batch 512, paper space with cp in {1, 2, 4, 8}",
                    "CP sub-optimal vs TP", "best plan with cp>1 (tp=1) slower than best plan with tp>1 (cp=1)", "",
                    false, {}, ""};
    const Setup s = MakeSetup("llama2-7b", "dgx-h100", 256, 512);
    const std::optional<Report> cp = Best(s, Join(PaperSpaceConstraints("1|2|4|8"), "cp>=2,tp=1"), options_.threads);
    const std::optional<Report> tp = Best(s, Join(PaperSpaceConstraints("1"), "tp>=2"), options_.threads);
    if (!cp || !tp) {
      f.predicted = "no feasible plan";
      return f;
    }
    f.details.push_back("best cp>1: " + Describe(*cp));
    f.details.push_back("best tp>1: " + Describe(*tp));
    f.pass = cp->tokens_per_s < tp->tokens_per_s;
    f.predicted = StrCat("best cp>1 (cp=", cp->config.cp, ") at ", SignedPct(cp->tokens_per_s / tp->tokens_per_s - 1.0),
                         " vs best tp>1 (tp=", tp->config.tp, ")");
    return f;
  }

  FindingResult F11() {
    FindingResult f{"F11", "Fixed global batch at pretraining scale (App. D, Fig. 11)",
                    "7B and 70B, 512 -> 2048 H100, global batch 1024 x 4k, best config (paper space)",
                    "MFU falls by more than 30%", "best-plan MFU falls by >= 20% (relative) from 512 to 2048, for both",
                    "", false, {}, ""};
    bool all_ok = true;
    std::string predicted;
    for (const char* name : {"llama2-7b", "llama2-70b"}) {
      const Setup small = MakeSetup(name, "dgx-h100", 512, 1024);
      const Setup large = MakeSetup(name, "dgx-h100", 2048, 1024);
      const std::optional<Report> a = Best(small, PaperSpaceConstraints(), options_.threads);
      const std::optional<Report> b = Best(large, PaperSpaceConstraints(), options_.threads);
      if (!a || !b) {
        all_ok = false;
        predicted += StrCat(predicted.empty() ? "" : "; ", name, ": no feasible plan");
        continue;
      }
      const double drop = 1.0 - b->mfu / a->mfu;
      const bool ok = drop >= 0.20;
      all_ok = all_ok && ok;
      predicted += StrCat(predicted.empty() ? "" : "; ", name, " MFU ", Pct(a->mfu), " -> ", Pct(b->mfu), " (-",
                          Pct(drop), ": ", Verdict(ok), ")");
      f.details.push_back(StrCat(name, " 512: ", Describe(*a)));
      f.details.push_back(StrCat(name, " 2048: ", Describe(*b)));
    }
    f.pass = all_ok;
    f.predicted = predicted;
    return f;
  }

  FindingResult F12() {
    FindingResult f{"F12", "Sharding saves memory with diminishing returns (App. G)",
                    "7B FSDP (zero2), local batch 2, dp 8 -> 2048", "per-GPU memory falls, less each doubling",
                    "peak memory per GPU decreases monotonically with dp, each saving smaller than the one before", "",
                    false, {}, ""};
    const WeakSweep& w = Weak();
    std::vector<double> mem;
    for (size_t i = 0; i < w.gpus.size(); ++i) {
      if (!w.reports[i].feasible) {
        f.predicted = StrCat("dp=", w.gpus[i], " does not fit");
        return f;
      }
      mem.push_back(w.reports[i].memory_per_gpu.si() / 1e9);
      f.details.push_back(StrCat("dp=", w.gpus[i], ": ", FormatFixed(mem.back(), 2), " GB"));
    }
    bool falling = true, diminishing = true;
    for (size_t i = 1; i < mem.size(); ++i) {
      falling = falling && mem[i] < mem[i - 1];
      if (i >= 2) diminishing = diminishing && (mem[i - 1] - mem[i]) < (mem[i - 2] - mem[i - 1]);
    }
    f.pass = falling && diminishing;
    f.predicted = StrCat(FormatFixed(mem.front(), 1), " GB at dp=8 -> ", FormatFixed(mem.back(), 1), " GB at dp=2048 (falling ",
                         Verdict(falling), ", diminishing ", Verdict(diminishing), ")");
    return f;
  }

 private:
  ValidationOptions options_;
  std::unique_ptr<WeakSweep> weak_;
};

}  // namespace

std::string PaperSpaceConstraints(const std::string& cp_values) {
  return StrCat("sharding=zero2,tp in 1|2|4|8|16,pp in 1|2|4|8|16,cp in ", cp_values);
}

std::vector<std::string> FindingIds() {
  return {"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12"};
}

std::vector<FindingResult> RunValidation(const ValidationOptions& options) {
  const std::vector<std::string> ids = FindingIds();
  for (const std::string& id : options.only) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      throw InvalidInput("", "--only", StrCat("unknown finding '", id, "' (valid: F1 ... F12)"));
    }
  }
  Validator v(options);
  const std::map<std::string, std::function<FindingResult()>> rows = {
      {"F1", [&] { return v.F1(); }},   {"F2", [&] { return v.F2(); }},   {"F3", [&] { return v.F3(); }},
      {"F4", [&] { return v.F4(); }},   {"F5", [&] { return v.F5(); }},   {"F6", [&] { return v.F6(); }},
      {"F7", [&] { return v.F7(); }},   {"F8", [&] { return v.F8(); }},   {"F9", [&] { return v.F9(); }},
      {"F10", [&] { return v.F10(); }}, {"F11", [&] { return v.F11(); }}, {"F12", [&] { return v.F12(); }},
  };
  std::vector<FindingResult> out;
  for (const std::string& id : ids) {
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), id) == options.only.end()) continue;
    out.push_back(rows.at(id)());
  }
  return out;
}

}  // namespace parasim::planner
