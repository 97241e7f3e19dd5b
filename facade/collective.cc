// parasim::Collective: one NCCL collective on a group placed as `parasim
// collective` places it, timed by the collective model (or a fitted profile)
// at each size, with NCCL's algorithm and protocol choice (or a forced one).
#include <algorithm>
#include <cctype>
#include <optional>

#include "calibrate/collective_fit.h"
#include "calibrate/collective_profile.h"
#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/collective_cost.h"
#include "facade/access.h"
#include "topology/group_path.h"

namespace parasim {
namespace {

CollectiveAlgo ParseAlgo(const std::string& s) {
  for (int a = 0; a < kNumCollectiveAlgos; ++a)
    if (s == ToString(static_cast<CollectiveAlgo>(a))) return static_cast<CollectiveAlgo>(a);
  throw InvalidInput("", "CollectiveQuery::algo",
                     StrCat("unknown algorithm '", s, "' (ring, tree, nvls, nvlstree, collnet, pat, direct)"));
}

Protocol ParseProto(const std::string& s) {
  std::string u;
  for (char c : s) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (u == "LL") return Protocol::kLL;
  if (u == "LL128") return Protocol::kLL128;
  if (u == "SIMPLE") return Protocol::kSimple;
  throw InvalidInput("", "CollectiveQuery::proto", StrCat("unknown protocol '", s, "' (LL, LL128, Simple)"));
}

// The group: `ranks` at `gpus_per_node` per node (the cluster's by default;
// 1 with per_node), on a cluster of the nodes it needs, as `parasim collective`
// places it; `nodes`, when given, must agree.
GroupPath PlaceGroup(const CollectiveQuery& q, const std::string& source, ClusterSpec* cluster) {
  const ClusterSpec base = LoadCluster(source);
  if (q.nodes < 0) throw InvalidInput("", "CollectiveQuery::nodes", StrCat(q.nodes, " is not a node count"));
  if (q.per_node && q.gpus_per_node > 1)
    throw InvalidInput("", "CollectiveQuery::gpus_per_node",
                       StrCat("per_node means 1 GPU per node, not ", q.gpus_per_node));
  const int gpn = q.per_node ? 1 : (q.gpus_per_node > 0 ? q.gpus_per_node : base.gpus_per_node);
  if (q.gpus_per_node < 0 || gpn > base.gpus_per_node || base.gpus_per_node % gpn != 0)
    throw InvalidInput("", "CollectiveQuery::gpus_per_node",
                       StrCat(gpn, " does not divide the ", base.gpus_per_node, " GPUs per node of ", base.name));
  int ranks = q.ranks;
  if (ranks == 0) ranks = q.nodes > 0 ? q.nodes * gpn : (gpn == 1 ? base.nodes : gpn);
  if (ranks < 1) throw InvalidInput("", "CollectiveQuery::ranks", StrCat(ranks, " is not a rank count"));
  if (ranks > gpn && ranks % gpn != 0)
    throw InvalidInput("", "CollectiveQuery::ranks", StrCat(ranks, " ranks are not whole nodes of ", gpn));
  const int nodes = std::max(1, ranks / gpn);
  if (q.nodes > 0 && q.nodes != nodes)
    throw InvalidInput("", "CollectiveQuery::nodes",
                       StrCat(ranks, " ranks at ", gpn, " per node are ", nodes, " nodes, not ", q.nodes));
  *cluster = LoadCluster(source, nodes);
  return calibrate::MeasuredGroupPath(*cluster, ranks, gpn);
}

CollectiveCost TimeOne(const CollectiveQuery& q, CollectiveOp op, double size, const GroupPath& path,
                       const NcclFeatures& f, const CollectiveModelParams& params) {
  if (q.algo.empty() && q.proto.empty()) return EstimateCollective(op, Bytes(size), path, f, params);
  const CollectiveAlgo a = q.algo.empty() ? EstimateCollective(op, Bytes(size), path, f, params).algo : ParseAlgo(q.algo);
  std::optional<CollectiveCost> best;
  for (int p = 0; p < kNumProtocols; ++p) {
    const Protocol pr = static_cast<Protocol>(p);
    if (!q.proto.empty() && pr != ParseProto(q.proto)) continue;
    auto r = EstimateCollectiveWith(op, Bytes(size), path, f, params, a, pr);
    if (r && (!best || r->time < best->time)) best = r;
  }
  if (!best)
    throw InvalidInput("", "CollectiveQuery::algo", StrCat(ToString(a), (q.proto.empty() ? "" : "/" + q.proto),
                                                           " is not available for ", ToString(op), " on this group"));
  return *best;
}

}  // namespace

CollectiveResult Collective(const Cluster& cluster_in, const CollectiveQuery& q) {
  const CollectiveOp op = ParseCollectiveOp(q.op, "CollectiveQuery::op");
  if (q.gpus_per_thread < 1) throw InvalidInput("", "CollectiveQuery::gpus_per_thread", "must be >= 1");
  for (double s : q.sizes_bytes)
    if (!(s >= 0)) throw InvalidInput("", "CollectiveQuery::sizes_bytes", StrCat(s, " is not a size"));
  ClusterSpec cluster;
  const GroupPath path = PlaceGroup(q, detail::Access::Source(cluster_in), &cluster);

  const NcclFeatures f = NcclFeaturesFor(cluster, ParseNcclVersion(q.nccl, "CollectiveQuery::nccl"));
  // A fitted profile (hw_profile, else the cluster's) replaces the fabric
  // presets; otherwise the cluster's own transport unless `fabric` overrides it.
  const std::string profile = !q.hw_profile.empty() ? q.hw_profile : cluster.hw_profile;
  if (!profile.empty() && !q.fabric.empty())
    throw InvalidInput("", "CollectiveQuery::fabric", "give fabric or a fitted profile (hw_profile), not both");
  const std::string fabric = !profile.empty() ? "profile"
                             : !q.fabric.empty() ? q.fabric
                             : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa" : "ib";
  CollectiveModelParams params;
  if (!profile.empty()) {
    params = calibrate::ReadCollectiveProfile(profile).params;
  } else if (fabric == "efa") {
    params = CollectiveModelParams::AwsEfa();
  } else if (fabric != "ib") {
    throw InvalidInput("", "CollectiveQuery::fabric", StrCat("unknown fabric '", fabric, "' (ib, efa)"));
  }
  params.gpus_per_launch_thread = q.gpus_per_thread;

  CollectiveResult out;
  out.op = ToString(op);
  out.cluster = cluster.name;
  out.nccl = q.nccl;
  out.fabric = fabric;
  out.hw_profile = profile;
  out.ranks = path.ranks;
  out.nodes = path.nodes;
  out.ranks_per_node = path.ranks_per_node;
  out.single_rail = path.single_rail;
  out.ring_bandwidth_Bps = path.ring_bandwidth.si();
  for (double s : q.sizes_bytes) {
    const CollectiveCost c = TimeOne(q, op, s, path, f, params);
    out.rows.push_back(CollectiveRow{s, c.time.si(), c.latency.si(), c.algbw.si(), c.busbw.si(), ToString(c.algo),
                                     ToString(c.protocol)});
  }
  return out;
}

}  // namespace parasim
