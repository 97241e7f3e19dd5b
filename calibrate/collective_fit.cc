#include "calibrate/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"

namespace parasim::calibrate {
namespace {

std::optional<CollectiveAlgo> AlgoOf(const std::string& text) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  t = t.substr(0, t.find(','));   // NCCL_ALGO lists: the first one
  if (t == "ring") return CollectiveAlgo::kRing;
  if (t == "tree") return CollectiveAlgo::kTree;
  if (t == "nvls") return CollectiveAlgo::kNvls;
  if (t == "nvlstree") return CollectiveAlgo::kNvlsTree;
  if (t == "collnetdirect" || t == "collnet" || t == "collnetchain") return CollectiveAlgo::kCollNet;
  if (t == "pat") return CollectiveAlgo::kPat;
  return std::nullopt;
}

std::optional<Protocol> ProtoOf(const std::string& text) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (t == "LL") return Protocol::kLL;
  if (t == "LL128") return Protocol::kLL128;
  if (t == "SIMPLE") return Protocol::kSimple;
  return std::nullopt;
}

double LogError(const CollectiveCase& c, const CollectiveModelParams& p) {
  return std::abs(std::log(PredictCase(c, p).time.si() / c.m.time.si()));
}

// Nelder-Mead on x in [0,1]^k (each parameter mapped log-uniformly onto its
// bounds); fixed iteration budget, so the result is deterministic.
std::vector<double> NelderMead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                               int iterations) {
  const size_t k = x0.size();
  auto clamp = [](std::vector<double> x) {
    for (double& v : x) v = std::clamp(v, 0.0, 1.0);
    return x;
  };
  std::vector<std::vector<double>> pts{x0};
  for (size_t i = 0; i < k; ++i) {
    std::vector<double> x = x0;
    x[i] += x[i] > 0.5 ? -0.15 : 0.15;
    pts.push_back(x);
  }
  std::vector<double> val;
  for (const auto& p : pts) val.push_back(f(p));
  for (int it = 0; it < iterations; ++it) {
    std::vector<size_t> order(pts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return val[a] < val[b]; });
    const size_t worst = order.back(), second = order[order.size() - 2], best = order.front();
    std::vector<double> centroid(k, 0.0);
    for (size_t i : order)
      if (i != worst)
        for (size_t d = 0; d < k; ++d) centroid[d] += pts[i][d] / k;
    auto along = [&](double t) {
      std::vector<double> x(k);
      for (size_t d = 0; d < k; ++d) x[d] = centroid[d] + t * (pts[worst][d] - centroid[d]);
      return clamp(x);
    };
    const std::vector<double> r = along(-1.0);
    const double fr = f(r);
    if (fr < val[best]) {
      const std::vector<double> e = along(-2.0);
      const double fe = f(e);
      if (fe < fr) pts[worst] = e, val[worst] = fe;
      else pts[worst] = r, val[worst] = fr;
    } else if (fr < val[second]) {
      pts[worst] = r, val[worst] = fr;
    } else {
      const std::vector<double> c = along(0.5);
      const double fc = f(c);
      if (fc < val[worst]) {
        pts[worst] = c, val[worst] = fc;
      } else {
        for (size_t i : order) {
          if (i == best) continue;
          for (size_t d = 0; d < k; ++d) pts[i][d] = pts[best][d] + 0.5 * (pts[i][d] - pts[best][d]);
          val[i] = f(pts[i]);
        }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < pts.size(); ++i)
    if (val[i] < val[best]) best = i;
  return pts[best];
}

double ToUnit(const FitParameter& p, double v) {
  v = std::clamp(v, p.lo, p.hi);
  return std::log(v / p.lo) / std::log(p.hi / p.lo);
}
double FromUnit(const FitParameter& p, double u) { return p.lo * std::pow(p.hi / p.lo, std::clamp(u, 0.0, 1.0)); }

}  // namespace

GroupPath MeasuredGroupPath(const ClusterSpec& cluster, int ranks, int gpus_per_node) {
  const int gpn = cluster.gpus_per_node;
  if (ranks < 1) throw InvalidInput("", "ranks", StrCat(ranks, " is not a rank count"));
  if (gpus_per_node < 1 || gpus_per_node > gpn || gpn % gpus_per_node != 0)
    throw InvalidInput(cluster.name, "gpus_per_node",
                       StrCat(gpus_per_node, " ranks per node do not tile nodes of ", gpn, " GPUs"));
  if (ranks > gpus_per_node && ranks % gpus_per_node != 0)
    throw InvalidInput("", "ranks", StrCat(ranks, " ranks are not whole nodes of ", gpus_per_node));
  const int nodes = std::max(1, ranks / gpus_per_node);
  if (cluster.nodes < nodes)
    throw InvalidInput(cluster.name, "nodes", StrCat(ranks, " ranks need ", nodes, " nodes; the cluster has ", cluster.nodes));
  // The ranks are the dp group: consecutive GPUs of a node (tp takes the rest
  // of the node when fewer per node), nodes one after another.
  ParallelConfig config;
  config.dp = ranks;
  config.tp = gpn / std::min(gpus_per_node, ranks);
  config.pp = cluster.nodes * gpn / (config.dp * config.tp);
  config.order = ranks <= gpus_per_node ? "dp-tp-cp-ep-pp" : "tp-cp-ep-dp-pp";
  if (ranks <= gpus_per_node) config.tp = 1, config.pp = cluster.nodes * gpn / ranks;
  return ResolveGroupPath(cluster, config, ParallelDim::kDp);
}

CollectiveCase MakeCase(const std::string& cluster, const CollectiveMeasurement& m, int fallback_nccl_version) {
  const int nodes = std::max(1, m.nodes);
  const ClusterSpec spec = LoadCluster(cluster, nodes);
  CollectiveCase c;
  c.m = m;
  c.cluster = spec.name;
  c.path = MeasuredGroupPath(spec, m.ranks, m.gpus_per_node);
  c.features = NcclFeaturesFor(spec, m.nccl_version > 0 ? m.nccl_version : fallback_nccl_version);
  const auto algo = AlgoOf(m.algo);
  c.proto = ProtoOf(m.proto);
  c.forced = algo.has_value() || c.proto.has_value();
  if (algo) c.algo = *algo;
  else c.algo = CollectiveAlgo::kDirect;   // placeholder: NCCL's choice of algorithm
  if (!algo && c.proto) c.forced = true;
  return c;
}

CollectiveCost PredictCase(const CollectiveCase& c, const CollectiveModelParams& params) {
  const Bytes size = c.m.size;
  if (!c.forced) return EstimateCollective(c.m.op, size, c.path, c.features, params);
  std::optional<CollectiveCost> best;
  for (int a = 0; a < kNumCollectiveAlgos; ++a) {
    const auto algo = static_cast<CollectiveAlgo>(a);
    if (c.algo != CollectiveAlgo::kDirect && algo != c.algo) continue;
    for (int p = 0; p < kNumProtocols; ++p) {
      const auto proto = static_cast<Protocol>(p);
      if (c.proto && proto != *c.proto) continue;
      auto r = EstimateCollectiveWith(c.m.op, size, c.path, c.features, params, algo, proto);
      if (r && (!best || r->time < best->time)) best = r;
    }
  }
  // A forced choice NCCL cannot run here falls back to NCCL's own (as NCCL does).
  return best ? *best : EstimateCollective(c.m.op, size, c.path, c.features, params);
}

double RelativeError(const CollectiveCase& c, const CollectiveModelParams& params) {
  return std::abs(PredictCase(c, params).time.si() / c.m.time.si() - 1.0);
}

CollectiveFitResult FitCollectiveParams(const std::vector<CollectiveCase>& cases, const CollectiveModelParams& start,
                                        const std::vector<std::string>& names) {
  std::vector<const FitParameter*> fit;
  for (const FitParameter& p : CollectiveFitParameters())
    if (names.empty() ? p.default_fitted : std::find(names.begin(), names.end(), p.name) != names.end())
      fit.push_back(&p);
  // The objective is the accuracy metric itself: the mean over (source,
  // size band) of the median |log(predicted/measured)|, so every log and
  // band weighs the same and a few pathological rows cannot steer the fit.
  std::map<std::pair<std::string, int>, std::vector<size_t>> groups;
  for (size_t i = 0; i < cases.size(); ++i)
    groups[{cases[i].m.source, cases[i].m.size.si() < 64.0 * 1048576.0 ? 0 : 1}].push_back(i);
  std::map<std::string, int> per_source;
  for (const auto& c : cases) ++per_source[c.m.source];
  auto objective = [&](const std::vector<double>& x) {
    CollectiveModelParams p = start;
    for (size_t i = 0; i < fit.size(); ++i) fit[i]->set(p, FromUnit(*fit[i], x[i]));
    double sum = 0;
    std::vector<double> e;
    for (const auto& [key, idx] : groups) {
      e.clear();
      for (size_t i : idx) e.push_back(LogError(cases[i], p));
      std::sort(e.begin(), e.end());
      const size_t n = e.size();
      sum += n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    }
    return sum / std::max<size_t>(1, groups.size());
  };
  std::vector<double> x0;
  for (const auto* p : fit) x0.push_back(ToUnit(*p, p->get(start)));
  std::vector<double> x = x0;
  if (!fit.empty() && !cases.empty()) {
    // The median objective is piecewise smooth: start from the given values
    // and from three fixed points of the box, keep the best.
    double best = objective(x0);
    for (double start_u : {-1.0, 0.25, 0.5, 0.75}) {
      std::vector<double> s = x0;
      if (start_u >= 0) std::fill(s.begin(), s.end(), start_u);
      for (int restart = 0; restart < 3; ++restart) s = NelderMead(objective, s, 60 * static_cast<int>(fit.size()));
      const double v = objective(s);
      if (v < best) best = v, x = s;
    }
  }
  CollectiveFitResult out;
  out.params = start;
  for (size_t i = 0; i < fit.size(); ++i) {
    fit[i]->set(out.params, FromUnit(*fit[i], x[i]));
    out.values[fit[i]->name] = fit[i]->get(out.params);
  }
  out.mean_abs_log_error = objective(x);
  out.cases = static_cast<int>(cases.size());
  std::set<std::string> src;
  for (const auto& c : cases) src.insert(c.m.source);
  out.sources.assign(src.begin(), src.end());
  return out;
}

}  // namespace parasim::calibrate

namespace parasim::calibrate {

const std::vector<FitParameter>& CollectiveFitParameters() {
  static const std::vector<FitParameter> kParams = {
      {"nic_efficiency", [](const CollectiveModelParams& p) { return p.nic_efficiency; },
       [](CollectiveModelParams& p, double v) { p.nic_efficiency = v; }, 0.3, 1.0},
      {"net_plugin_latency_s", [](const CollectiveModelParams& p) { return p.net_plugin_latency.si(); },
       [](CollectiveModelParams& p, double v) { p.net_plugin_latency = Seconds(v); }, 1e-7, 1e-4},
      {"link_bandwidth_jitter", [](const CollectiveModelParams& p) { return p.link_bandwidth_jitter; },
       [](CollectiveModelParams& p, double v) { p.link_bandwidth_jitter = v; }, 1e-3, 0.3},
      {"hop_latency_jitter_s", [](const CollectiveModelParams& p) { return p.hop_latency_jitter.si(); },
       [](CollectiveModelParams& p, double v) { p.hop_latency_jitter = Seconds(v); }, 1e-8, 2e-5},
      {"net_chunk_latency_s", [](const CollectiveModelParams& p) { return p.net_chunk_latency.si(); },
       [](CollectiveModelParams& p, double v) { p.net_chunk_latency = Seconds(v); }, 1e-7, 1e-4},
      {"net_chunk_bytes", [](const CollectiveModelParams& p) { return p.net_chunk_bytes.si(); },
       [](CollectiveModelParams& p, double v) { p.net_chunk_bytes = Bytes(v); }, 32e3, 16e6},
      {"net_hop_latency_scale", [](const CollectiveModelParams& p) { return p.net_hop_latency_scale; },
       [](CollectiveModelParams& p, double v) { p.net_hop_latency_scale = v; }, 0.05, 3.0},
      {"min_pipeline_chunks", [](const CollectiveModelParams& p) { return p.min_pipeline_chunks; },
       [](CollectiveModelParams& p, double v) { p.min_pipeline_chunks = v; }, 1.0, 128.0},
      // Identified only by tree AllReduce across >= 2 nodes: fitted when named.
      {"tree_net_efficiency", [](const CollectiveModelParams& p) { return p.tree_net_efficiency; },
       [](CollectiveModelParams& p, double v) { p.tree_net_efficiency = v; }, 0.2, 1.0, false},
  };
  return kParams;
}

}  // namespace parasim::calibrate
