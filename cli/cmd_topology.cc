// `parasim topology --cluster C --nodes N [--config "..."] --format table|json|dot`:
// the cluster graph's counts, injection and bisection bandwidth; with a
// parallel config, what each dimension's ring sees (closed form and graph).
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "core/parallel_config.h"
#include "topology/group_path.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "topology/traffic.h"

namespace parasim::cli {
namespace {

constexpr LinkClass kClasses[] = {LinkClass::kNvLink, LinkClass::kPcie, LinkClass::kNic, LinkClass::kLeafSpine,
                                  LinkClass::kSpineCore};
constexpr VertexKind kKinds[] = {VertexKind::kGpu,  VertexKind::kNvSwitch, VertexKind::kHostBridge, VertexKind::kNic,
                                 VertexKind::kLeaf, VertexKind::kSpine,    VertexKind::kCore};
constexpr ParallelDim kDims[] = {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kEp, ParallelDim::kDp,
                                 ParallelDim::kPp};

nlohmann::ordered_json TopologyJson(const Topology& t) {
  const ClusterSpec& c = t.cluster();
  const ClusterShape& s = t.shape();
  nlohmann::ordered_json j;
  j["cluster"] = c.name;
  j["gpu"] = c.gpu.name;
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpus_per_node;
  j["gpus"] = t.gpu_count();
  j["nvlink_domain_gpus"] = s.domain_gpus;
  j["nvlink_domains"] = s.domains;
  j["fabric_tiers"] = s.tiers;
  j["rail_optimized"] = s.rail_optimized;
  j["promoted_to_3_tiers"] = s.promoted_to_3_tiers;
  nlohmann::ordered_json v, l;
  for (VertexKind k : kKinds) v[ToString(k)] = t.CountVertices(k);
  for (LinkClass cl : kClasses) l[ToString(cl)] = t.CableCount(cl);
  j["vertices"] = v;
  j["links"] = l;
  j["switches"] = t.CountVertices(VertexKind::kLeaf) + t.CountVertices(VertexKind::kSpine) +
                  t.CountVertices(VertexKind::kCore);
  j["injection_bandwidth_Bps_per_gpu"] = t.InjectionBandwidth().si();
  j["bisection_bandwidth_Bps"] = t.BisectionBandwidth().si();
  return j;
}

nlohmann::ordered_json GroupsJson(const Topology& t, const ParallelConfig& config) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  Placement placement(config, t.gpu_count());
  for (ParallelDim d : kDims) {
    const GroupPath p = ResolveGroupPath(t.cluster(), config, d);
    const RingAnalysis r = AnalyzeRings(t, config, d);
    nlohmann::ordered_json g;
    g["dim"] = ToString(d);
    g["group_size"] = p.ranks;
    g["groups"] = placement.GroupCount(d);
    g["first_group_gpus"] = placement.Members(d, 0);
    g["nodes"] = p.nodes;
    g["ranks_per_node"] = p.ranks_per_node;
    g["crosses_nodes"] = p.crosses_nodes;
    g["single_rail"] = p.single_rail;
    g["groups_sharing_node"] = p.groups_sharing_node;
    g["max_switch_hops"] = p.max_switch_hops;
    g["intra_bandwidth_Bps"] = p.intra_bandwidth.si();
    g["inter_bandwidth_Bps"] = p.inter_bandwidth.si();
    g["ring_bandwidth_Bps"] = p.ring_bandwidth.si();
    g["graph_ring_bandwidth_Bps"] = r.bus_bandwidth.si();
    g["bottleneck"] = ToString(p.bottleneck_class);
    g["intra_hop_latency_s"] = p.intra_hop_latency.si();
    g["inter_hop_latency_s"] = p.inter_hop_latency.si();
    g["step_latency_s"] = (p.crosses_nodes ? p.inter_hop_latency : p.intra_hop_latency).si();
    g["nvls_capable"] = p.nvls_capable;
    g["sharp_capable"] = p.sharp_capable;
    arr.push_back(g);
  }
  return arr;
}

std::string Table(const nlohmann::ordered_json& j) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  os << "cluster " << j["cluster"].get<std::string>() << ": " << j["gpus"] << " GPUs (" << j["nodes"] << " nodes x "
     << j["gpus_per_node"] << "), NVLink domains of " << j["nvlink_domain_gpus"] << ", fabric tiers "
     << j["fabric_tiers"] << (j["rail_optimized"].get<bool>() ? ", rail-optimized" : "") << "\n";
  os << "vertices:";
  for (const auto& [k, v] : j["vertices"].items()) os << " " << k << " " << v;
  os << "\nlinks:   ";
  for (const auto& [k, v] : j["links"].items()) os << " " << k << " " << v;
  os << "\ninjection bandwidth per GPU: " << j["injection_bandwidth_Bps_per_gpu"].get<double>() / 1e9 << " GB/s\n";
  os << "bisection bandwidth:         " << j["bisection_bandwidth_Bps"].get<double>() / 1e9 << " GB/s\n";
  if (j.contains("groups")) {
    os << "\n" << std::left << std::setw(5) << "dim" << std::right << std::setw(7) << "size" << std::setw(8)
       << "groups" << std::setw(7) << "nodes" << std::setw(9) << "per-node" << std::setw(8) << "crosses"
       << std::setw(6) << "rail" << std::setw(6) << "hops" << std::setw(12) << "ring GB/s" << std::setw(12)
       << "graph GB/s" << std::setw(12) << "bottleneck" << std::setw(12) << "step us" << std::setw(6) << "nvls"
       << "\n";
    for (const auto& g : j["groups"]) {
      os << std::left << std::setw(5) << g["dim"].get<std::string>() << std::right << std::setw(7) << g["group_size"]
         << std::setw(8) << g["groups"].get<int>() << std::setw(7) << g["nodes"].get<int>() << std::setw(9) << g["ranks_per_node"].get<int>()
         << std::setw(8) << (g["crosses_nodes"].get<bool>() ? "yes" : "no") << std::setw(6)
         << (g["single_rail"].get<bool>() ? "yes" : "no") << std::setw(6) << g["max_switch_hops"].get<int>() << std::setw(12)
         << g["ring_bandwidth_Bps"].get<double>() / 1e9 << std::setw(12)
         << g["graph_ring_bandwidth_Bps"].get<double>() / 1e9 << std::setw(12) << g["bottleneck"].get<std::string>()
         << std::setw(12) << std::setprecision(2) << g["step_latency_s"].get<double>() * 1e6 << std::setprecision(1)
         << std::setw(6) << (g["nvls_capable"].get<bool>() ? "yes" : "no") << "\n";
    }
  }
  return os.str();
}

const CommandRegistration kTopology{
    "topology", "Show the cluster graph: switches, links, bisection; with --config, what each parallel group sees",
    [](CLI::App& cmd) {
      auto spec = std::make_shared<SpecOptions>();
      auto out = std::make_shared<OutputOptions>();
      auto config_text = std::make_shared<std::string>();
      cmd.add_option("--cluster", spec->cluster, "Cluster: a preset (parasim profiles list) or a YAML file")
          ->capture_default_str();
      cmd.add_option("--nodes", spec->nodes, "Number of nodes (default: the cluster's own)");
      cmd.add_option("--gpus", spec->gpus, "Number of GPUs (a multiple of the GPUs per node); instead of --nodes");
      cmd.add_option("--config", *config_text, "Parallel config \"dp=..,tp=..,pp=..,order=..\" to place");
      cmd.add_option("--format", out->format, "Output format")
          ->check(CLI::IsMember({"table", "json", "dot"}))
          ->capture_default_str();
      cmd.add_option("-o,--output", out->output_file, "Write to FILE (whole or not at all) instead of stdout");
      return std::function<void()>([=] {
        const ClusterSpec cluster = spec->LoadClusterSpec();
        const Topology t = Topology::Build(cluster);
        if (out->format == "dot") {
          WriteOutput(*out, t.ToDot());
          return;
        }
        nlohmann::ordered_json j = TopologyJson(t);
        if (!config_text->empty()) {
          const ParallelConfig config = ParseParallelConfig(*config_text);
          j["config"] = config.ToString();
          j["groups"] = GroupsJson(t, config);
        }
        WriteOutput(*out, out->format == "json" ? j.dump(2) + "\n" : Table(j));
      });
    }};

}  // namespace
}  // namespace parasim::cli
