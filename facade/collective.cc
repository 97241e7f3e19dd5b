// parasim::Collective: one NCCL collective placed as the dp group of a
// cluster just big enough for its ranks, timed by the collective model at
// each size, with NCCL's algorithm and protocol choice (or a forced one).
#include <cctype>
#include <optional>

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

// The ranks as the dp group of a cluster of `nodes` nodes: one per node on a
// rail (per_node), or tiling the nodes with pp as the remainder.
GroupPath PlaceGroup(const ClusterSpec& cluster, int ranks, int nodes, bool per_node) {
  ParallelConfig config;
  config.dp = ranks;
  if (per_node) {
    config.tp = cluster.gpus_per_node;   // dp strides over whole nodes: one rank per node, same rail
  } else {
    const int world = nodes * cluster.gpus_per_node;
    if (world % ranks != 0)
      throw InvalidInput("", "CollectiveQuery::ranks",
                         StrCat(ranks, " ranks do not tile ", nodes, " nodes of ", cluster.gpus_per_node,
                                " GPUs; use a divisor or multiple of ", cluster.gpus_per_node, ", or per_node"));
    config.pp = world / ranks;
  }
  config.order = "tp-cp-ep-dp-pp";
  return ResolveGroupPath(cluster, config, ParallelDim::kDp);
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
  const ClusterSpec& base = detail::Access::Spec(cluster_in);
  const int gpn = base.gpus_per_node;
  if (q.nodes < 0) throw InvalidInput("", "CollectiveQuery::nodes", StrCat(q.nodes, " is not a node count"));
  int ranks = q.ranks;
  if (ranks == 0) ranks = q.nodes > 0 ? (q.per_node ? q.nodes : q.nodes * gpn) : (q.per_node ? base.nodes : gpn);
  if (ranks < 1) throw InvalidInput("", "CollectiveQuery::ranks", StrCat(ranks, " is not a rank count"));
  if (q.gpus_per_thread < 1) throw InvalidInput("", "CollectiveQuery::gpus_per_thread", "must be >= 1");
  for (double s : q.sizes_bytes)
    if (!(s >= 0)) throw InvalidInput("", "CollectiveQuery::sizes_bytes", StrCat(s, " is not a size"));
  const int nodes = q.per_node ? ranks : (ranks + gpn - 1) / gpn;
  if (q.nodes > 0 && q.nodes < nodes)
    throw InvalidInput("", "CollectiveQuery::nodes", StrCat(ranks, " ranks need ", nodes, " nodes of ", gpn, " GPUs"));
  ClusterSpec cluster = base;
  cluster.nodes = nodes;
  const GroupPath path = PlaceGroup(cluster, ranks, nodes, q.per_node);

  const NcclFeatures f = NcclFeaturesFor(cluster, ParseNcclVersion(q.nccl, "CollectiveQuery::nccl"));
  const std::string fabric = !q.fabric.empty() ? q.fabric
                             : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa" : "ib";
  CollectiveModelParams params;
  if (fabric == "efa") {
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
