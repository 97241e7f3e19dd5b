// `parasim topology --cluster C --nodes N [--config "..."] --format table|json|dot`:
// the cluster graph's counts, injection and bisection bandwidth; with a
// parallel config, what each dimension's ring sees (closed form and graph).
// The library (facade/topology_info.h) builds the report; this file prints it.
#include <sstream>

#include "cli/command.h"
#include "cli/output/writers.h"
#include "facade/topology_info.h"

namespace parasim::cli {
namespace {

const Value& At(const Value& v, const char* key) { return *v.Find(key); }
std::string Text(const Value& v, const char* key) { return FormatCell(At(v, key), 1); }
std::string YesNo(const Value& v, const char* key) { return At(v, key).as_bool() ? "yes" : "no"; }

Table GroupsTable(const Value& groups) {
  Table t;
  t.columns = {{"dim", 5, /*left=*/true}, {"size", 7},       {"groups", 8},      {"nodes", 7},
               {"per-node", 9},           {"crosses", 8},    {"rail", 6},        {"hops", 6},
               {"ring GB/s", 12, false, 1}, {"graph GB/s", 12, false, 1}, {"bottleneck", 12},
               {"step us", 12, false, 2}, {"nvls", 6}};
  for (const Value& g : groups.items()) {
    t.rows.push_back({At(g, "dim"), At(g, "group_size"), At(g, "groups"), At(g, "nodes"), At(g, "ranks_per_node"),
                      YesNo(g, "crosses_nodes"), YesNo(g, "single_rail"), At(g, "max_switch_hops"),
                      At(g, "ring_bandwidth_Bps").as_number() / 1e9,
                      At(g, "graph_ring_bandwidth_Bps").as_number() / 1e9, At(g, "bottleneck"),
                      At(g, "step_latency_s").as_number() * 1e6, YesNo(g, "nvls_capable")});
  }
  return t;
}

std::string TableText(const Value& j) {
  std::ostringstream os;
  os << "cluster " << Text(j, "cluster") << ": " << Text(j, "gpus") << " GPUs (" << Text(j, "nodes") << " nodes x "
     << Text(j, "gpus_per_node") << "), NVLink domains of " << Text(j, "nvlink_domain_gpus") << ", fabric tiers "
     << Text(j, "fabric_tiers") << (At(j, "rail_optimized").as_bool() ? ", rail-optimized" : "") << "\n";
  os << "vertices:";
  for (const auto& [k, v] : At(j, "vertices").members()) os << " " << k << " " << FormatCell(v, 0);
  os << "\nlinks:   ";
  for (const auto& [k, v] : At(j, "links").members()) os << " " << k << " " << FormatCell(v, 0);
  os << "\ninjection bandwidth per GPU: " << FormatCell(At(j, "injection_bandwidth_Bps_per_gpu").as_number() / 1e9, 1)
     << " GB/s\n";
  os << "bisection bandwidth:         " << FormatCell(At(j, "bisection_bandwidth_Bps").as_number() / 1e9, 1)
     << " GB/s\n";
  if (const Value* groups = j.Find("groups")) os << "\n" << WriteTable(GroupsTable(*groups));
  return os.str();
}

const CommandRegistration kTopology{
    "topology", "Show the cluster graph: switches, links, bisection; with --config, what each parallel group sees",
    [](CLI::App& cmd) {
      auto spec = std::make_shared<SpecInputs>();
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
        if (out->format == "dot") {
          WriteOutput(*out, TopologyDot(*spec));
          return;
        }
        const Value report = TopologyReport(*spec, *config_text);
        WriteOutput(*out, out->format == "json" ? WriteJson(report) + "\n" : TableText(report));
      });
    }};

}  // namespace
}  // namespace parasim::cli
