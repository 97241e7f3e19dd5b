// `parasim profiles list | show NAME | stack NAME`: GPU profiles and cluster
// presets with sources, and software stacks as stack files to edit and load.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/loaders.h"
#include "cost_model/software_stack_io.h"

namespace parasim::cli {
namespace {

nlohmann::ordered_json GpuJson(const GpuProfile& g) {
  nlohmann::ordered_json j;
  j["kind"] = "gpu";
  j["name"] = g.name;
  j["display_name"] = g.display_name;
  j["architecture"] = g.architecture;
  j["compute_capability"] = g.compute_capability;
  j["sm_count"] = g.sm_count;
  j["bf16_dense_flops_per_s"] = g.bf16_dense.si();
  j["fp16_dense_flops_per_s"] = g.fp16_dense.si();
  j["fp8_dense_flops_per_s"] = g.fp8_dense.si();
  j["tf32_dense_flops_per_s"] = g.tf32_dense.si();
  j["fp32_flops_per_s"] = g.fp32.si();
  j["hbm_bytes"] = g.hbm_capacity.si();
  j["hbm_bandwidth_Bps"] = g.hbm_bandwidth.si();
  j["l2_bytes"] = g.l2_cache.si();
  j["nvlink_bandwidth_Bps_per_direction"] = g.nvlink_bandwidth.si();
  j["nvlink_links"] = g.nvlink_links;
  j["nvls"] = g.nvls;
  j["pcie_bandwidth_Bps_per_direction"] = g.pcie_bandwidth.si();
  j["tdp_w"] = g.tdp.si();
  j["idle_w"] = g.idle_power.si();
  j["power_matmul_fraction"] = g.power_matmul_fraction;
  j["power_memory_fraction"] = g.power_memory_fraction;
  j["power_comm_fraction"] = g.power_comm_fraction;
  j["gemm_max_efficiency"] = g.gemm_max_efficiency;
  j["memory_efficiency"] = g.memory_efficiency;
  j["nvlink_efficiency"] = g.nvlink_efficiency;
  j["sources"] = g.sources;
  return j;
}

const char* IntraName(IntraNodeFabric f) {
  switch (f) {
    case IntraNodeFabric::kNvSwitch: return "nvswitch";
    case IntraNodeFabric::kHybridCubeMesh: return "hybrid-cube-mesh";
    case IntraNodeFabric::kNvlDomain: return "nvl-domain";
    case IntraNodeFabric::kPcie: return "pcie";
  }
  return "?";
}

nlohmann::ordered_json ClusterJson(const ClusterSpec& c) {
  nlohmann::ordered_json j;
  j["kind"] = "cluster";
  j["name"] = c.name;
  j["gpu"] = c.gpu.name;
  j["gpus_per_node"] = c.gpus_per_node;
  j["nodes"] = c.nodes;
  j["gpus"] = c.TotalGpus();
  j["intra_node"] = {{"fabric", IntraName(c.intra_node.fabric)},
                     {"nvlink_domain_size", c.intra_node.nvlink_domain_size},
                     {"nvlink_latency_s", c.intra_node.nvlink_latency.si()}};
  const InterNodeSpec& n = c.inter_node;
  j["inter_node"] = {{"fabric", n.fabric == InterNodeFabric::kFatTree ? "fat-tree" : "single-switch"},
                     {"tiers", n.tiers},
                     {"rail_optimized", n.rail_optimized},
                     {"scalable_unit_nodes", n.scalable_unit_nodes},
                     {"nics_per_node", n.nics_per_node},
                     {"nic_bandwidth_Bps_per_direction", n.nic_bandwidth.si()},
                     {"oversubscription", n.oversubscription},
                     {"switch_radix", n.switch_radix},
                     {"switch_latency_s", n.switch_latency.si()},
                     {"nic_latency_s", n.nic_latency.si()},
                     {"sharp", n.sharp}};
  j["sources"] = c.sources;
  return j;
}

// A preset is written with itself as base; a file keeps its base and sources.
std::string StackYaml(const std::string& name_or_path) {
  if (std::optional<SoftwareStack> preset = FindSoftwareStackPreset(name_or_path)) {
    return SoftwareStackToYaml(*preset, {});
  }
  if (!IsSoftwareStackPath(name_or_path)) LoadSoftwareStack(name_or_path);  // throws: names the presets
  const SoftwareStackFile f = ReadSoftwareStackFile(name_or_path);
  return SoftwareStackToYaml(f.stack, f.sources, f.base);
}

void PrintFlat(std::ostringstream& os, const nlohmann::ordered_json& j, const std::string& prefix) {
  for (const auto& [key, value] : j.items()) {
    if (value.is_object()) {
      PrintFlat(os, value, prefix + key + ".");
    } else {
      os << std::left << std::setw(44) << prefix + key << (value.is_string() ? value.get<std::string>() : value.dump())
         << "\n";
    }
  }
}

const CommandRegistration kProfiles{
    "profiles", "List GPU profiles, cluster presets and software stacks, or show one", [](CLI::App& cmd) {
      auto out = std::make_shared<OutputOptions>();
      auto name = std::make_shared<std::string>();
      auto nodes = std::make_shared<int>(0);
      cmd.require_subcommand(1);
      CLI::App* list = cmd.add_subcommand("list", "List GPU profiles and cluster presets");
      CLI::App* show = cmd.add_subcommand("show", "Show a GPU profile or a cluster preset (name or YAML file)");
      show->add_option("name", *name, "Profile or cluster name, or a YAML file")->required();
      show->add_option("--nodes", *nodes, "Node count for a cluster (default: the preset's)");
      CLI::App* stack = cmd.add_subcommand(
          "stack", "Print a software stack (preset or stack file) as a stack file: edit it, load it with --stack");
      stack->add_option("name", *name, "Stack preset (pytorch-fsdp, ...) or stack YAML file")->required();
      stack->add_option("-o,--output", out->output_file, "Write to FILE (whole or not at all) instead of stdout");
      AddOutputOptions(*list, *out, /*csv_allowed=*/false);
      AddOutputOptions(*show, *out, /*csv_allowed=*/false);
      return std::function<void()>([=] {
        std::ostringstream os;
        if (stack->parsed()) {
          WriteOutput(*out, StackYaml(*name));
          return;
        }
        if (list->parsed()) {
          nlohmann::ordered_json j;
          j["gpus"] = nlohmann::ordered_json::array();
          j["clusters"] = nlohmann::ordered_json::array();
          for (const std::string& n : GpuProfileNames()) {
            const GpuProfile g = LoadGpuProfile(n);
            j["gpus"].push_back({{"name", n}, {"display_name", g.display_name}});
          }
          for (const std::string& n : ClusterPresetNames()) {
            const ClusterSpec c = LoadCluster(n);
            j["clusters"].push_back({{"name", n}, {"gpu", c.gpu.name}, {"gpus_per_node", c.gpus_per_node}});
          }
          j["stacks"] = nlohmann::ordered_json::array();
          for (const std::string& n : SoftwareStackNames()) {
            j["stacks"].push_back({{"name", n}, {"description", LoadSoftwareStack(n).description}});
          }
          if (out->Parsed() == Format::kJson) {
            os << j.dump(2) << "\n";
          } else {
            os << "GPU profiles:\n";
            for (const auto& g : j["gpus"]) {
              os << "  " << std::left << std::setw(14) << g["name"].get<std::string>()
                 << g["display_name"].get<std::string>() << "\n";
            }
            os << "Cluster presets (--nodes N or --gpus N sets the size):\n";
            for (const auto& c : j["clusters"]) {
              os << "  " << std::left << std::setw(14) << c["name"].get<std::string>() << c["gpus_per_node"].get<int>()
                 << " x " << c["gpu"].get<std::string>() << " per node\n";
            }
            os << "Software stacks (--stack NAME, or a file from `parasim profiles stack NAME`):\n";
            for (const auto& st : j["stacks"]) {
              os << "  " << std::left << std::setw(18) << st["name"].get<std::string>()
                 << st["description"].get<std::string>() << "\n";
            }
          }
          WriteOutput(*out, os.str());
          return;
        }
        const std::vector<std::string> gpus = GpuProfileNames();
        const bool is_gpu = std::find(gpus.begin(), gpus.end(), *name) != gpus.end() ||
                            (!std::filesystem::exists(*name) ? false : [&] {
                              try {
                                LoadGpuProfile(*name);
                                return true;
                              } catch (const InvalidInput&) {
                                return false;
                              }
                            }());
        const nlohmann::ordered_json j = is_gpu ? GpuJson(LoadGpuProfile(*name)) : ClusterJson(LoadCluster(*name, *nodes));
        if (out->Parsed() == Format::kJson) {
          os << j.dump(2) << "\n";
        } else {
          PrintFlat(os, j, "");
        }
        WriteOutput(*out, os.str());
      });
    }};

}  // namespace
}  // namespace parasim::cli
