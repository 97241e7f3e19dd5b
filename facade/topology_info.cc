#include "facade/topology_info.h"

#include "core/parallel_config.h"
#include "topology/group_path.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "topology/traffic.h"

namespace parasim {
namespace {

constexpr LinkClass kClasses[] = {LinkClass::kNvLink, LinkClass::kPcie, LinkClass::kNic, LinkClass::kLeafSpine,
                                  LinkClass::kSpineCore};
constexpr VertexKind kKinds[] = {VertexKind::kGpu,  VertexKind::kNvSwitch, VertexKind::kHostBridge, VertexKind::kNic,
                                 VertexKind::kLeaf, VertexKind::kSpine,    VertexKind::kCore};
constexpr ParallelDim kDims[] = {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kEp, ParallelDim::kDp,
                                 ParallelDim::kPp};

Value GraphValue(const Topology& t) {
  const ClusterSpec& c = t.cluster();
  const ClusterShape& s = t.shape();
  Value j = Value::Object();
  j.Set("cluster", c.name).Set("gpu", c.gpu.name).Set("nodes", c.nodes).Set("gpus_per_node", c.gpus_per_node);
  j.Set("gpus", t.gpu_count()).Set("nvlink_domain_gpus", s.domain_gpus).Set("nvlink_domains", s.domains);
  j.Set("fabric_tiers", s.tiers).Set("rail_optimized", s.rail_optimized);
  j.Set("promoted_to_3_tiers", s.promoted_to_3_tiers);
  Value v = Value::Object(), l = Value::Object();
  for (VertexKind k : kKinds) v.Set(ToString(k), t.CountVertices(k));
  for (LinkClass cl : kClasses) l.Set(ToString(cl), t.CableCount(cl));
  j.Set("vertices", v).Set("links", l);
  j.Set("switches", t.CountVertices(VertexKind::kLeaf) + t.CountVertices(VertexKind::kSpine) +
                        t.CountVertices(VertexKind::kCore));
  j.Set("injection_bandwidth_Bps_per_gpu", t.InjectionBandwidth().si());
  j.Set("bisection_bandwidth_Bps", t.BisectionBandwidth().si());
  return j;
}

Value GroupValue(const Topology& t, const ParallelConfig& config, const Placement& placement, ParallelDim d) {
  const GroupPath p = ResolveGroupPath(t.cluster(), config, d);
  const RingAnalysis r = AnalyzeRings(t, config, d);
  Value members = Value::Array();
  for (auto gpu : placement.Members(d, 0)) members.Push(gpu);
  Value g = Value::Object();
  g.Set("dim", ToString(d)).Set("group_size", p.ranks).Set("groups", placement.GroupCount(d));
  g.Set("first_group_gpus", members).Set("nodes", p.nodes).Set("ranks_per_node", p.ranks_per_node);
  g.Set("crosses_nodes", p.crosses_nodes).Set("single_rail", p.single_rail);
  g.Set("groups_sharing_node", p.groups_sharing_node).Set("max_switch_hops", p.max_switch_hops);
  g.Set("intra_bandwidth_Bps", p.intra_bandwidth.si()).Set("inter_bandwidth_Bps", p.inter_bandwidth.si());
  g.Set("ring_bandwidth_Bps", p.ring_bandwidth.si()).Set("graph_ring_bandwidth_Bps", r.bus_bandwidth.si());
  g.Set("bottleneck", ToString(p.bottleneck_class));
  g.Set("intra_hop_latency_s", p.intra_hop_latency.si()).Set("inter_hop_latency_s", p.inter_hop_latency.si());
  g.Set("step_latency_s", (p.crosses_nodes ? p.inter_hop_latency : p.intra_hop_latency).si());
  g.Set("nvls_capable", p.nvls_capable).Set("sharp_capable", p.sharp_capable);
  return g;
}

}  // namespace

Value TopologyReport(const SpecInputs& inputs, const std::string& config_text) {
  const Topology t = Topology::Build(inputs.LoadClusterSpec());
  Value j = GraphValue(t);
  if (!config_text.empty()) {
    const ParallelConfig config = ParseParallelConfig(config_text);
    const Placement placement(config, t.gpu_count());
    Value groups = Value::Array();
    for (ParallelDim d : kDims) groups.Push(GroupValue(t, config, placement, d));
    j.Set("config", config.ToString()).Set("groups", groups);
  }
  return j;
}

std::string TopologyDot(const SpecInputs& inputs) { return Topology::Build(inputs.LoadClusterSpec()).ToDot(); }

}  // namespace parasim
