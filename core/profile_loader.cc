// GPU profiles, cluster presets and job files from YAML (built in or on disk).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/embedded_files.h"
#include "core/internal/yaml_reader.h"
#include "core/loaders.h"

namespace parasim {
namespace {

using internal::YamlMap;

const EmbeddedFile* FindEmbedded(const std::string& relative) {
  for (const EmbeddedFile& f : EmbeddedProfileFiles()) {
    if (relative == f.path) return &f;
  }
  return nullptr;
}

std::vector<std::string> EmbeddedNames(const std::string& folder) {
  std::vector<std::string> names;
  const std::string prefix = folder + "/";
  for (const EmbeddedFile& f : EmbeddedProfileFiles()) {
    std::string path = f.path;
    if (path.rfind(prefix, 0) == 0 && path.size() > prefix.size() + 5) {
      names.push_back(path.substr(prefix.size(), path.size() - prefix.size() - 5));  // drop ".yaml"
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The YAML text and the name to report for a built-in name or a file path.
YAML::Node OpenProfileYaml(const std::string& folder, const std::string& name_or_path, const char* flag,
                           std::string& file_out) {
  if (const EmbeddedFile* f = FindEmbedded(folder + "/" + name_or_path + ".yaml")) {
    file_out = StrCat("hw_profiles/", f->path);
    return internal::ParseYamlText(f->content, file_out);
  }
  if (std::filesystem::exists(name_or_path)) {
    file_out = name_or_path;
    return internal::ParseYamlFile(name_or_path);
  }
  throw InvalidInput("", flag,
              StrCat("'", name_or_path, "' is neither a built-in name (", JoinNames(EmbeddedNames(folder)),
                     ") nor an existing file"));
}

// `overrides:` in a cluster file: any profile field, for what-if studies.
void ApplyOverrides(YamlMap& o, GpuProfile& g) {
  auto flops = [&](const char* key, FlopsPerSecond& f) { f = o.FlopRate(key, f); };
  flops("bf16_dense", g.bf16_dense);
  flops("fp16_dense", g.fp16_dense);
  flops("fp8_dense", g.fp8_dense);
  flops("tf32_dense", g.tf32_dense);
  flops("fp32", g.fp32);
  g.hbm_capacity = o.BytesValue("hbm_capacity", g.hbm_capacity);
  g.hbm_bandwidth = o.Bandwidth("hbm_bandwidth", g.hbm_bandwidth);
  g.nvlink_bandwidth = o.Bandwidth("nvlink_bandwidth", g.nvlink_bandwidth);
  g.nvlink_links = static_cast<int>(o.Int("nvlink_links", g.nvlink_links, 0));
  g.pcie_bandwidth = o.Bandwidth("pcie_bandwidth", g.pcie_bandwidth);
  g.l2_cache = o.BytesValue("l2_cache", g.l2_cache);
  g.sm_count = static_cast<int>(o.Int("sm_count", g.sm_count, 1));
  g.tdp = o.Power("tdp", g.tdp);
  g.idle_power = o.Power("idle_power", g.idle_power);
  g.nvls = o.Bool("nvls", g.nvls);
  g.gemm_max_efficiency = o.Double("gemm_max_efficiency", g.gemm_max_efficiency, 0.01, 1.0);
  g.sustained_fraction = o.Double("sustained_fraction", g.sustained_fraction, 0.01, 1.0);
  g.gemm_k0 = o.Double("gemm_k0", g.gemm_k0, 0.0, 1e6);
  g.gemm_half_outputs = o.Double("gemm_half_outputs", g.gemm_half_outputs, 0.0, 1e12);
  g.memory_efficiency = o.Double("memory_efficiency", g.memory_efficiency, 0.01, 1.0);
  g.nvlink_efficiency = o.Double("nvlink_efficiency", g.nvlink_efficiency, 0.01, 1.0);
  g.power_matmul_fraction = o.Double("power_matmul_fraction", g.power_matmul_fraction, 0.0, 1.0);
  g.power_memory_fraction = o.Double("power_memory_fraction", g.power_memory_fraction, 0.0, 1.0);
  g.power_comm_fraction = o.Double("power_comm_fraction", g.power_comm_fraction, 0.0, 1.0);
  if (g.idle_power > g.tdp) o.AddIssue("idle_power", "idle power exceeds tdp");
  o.Finish();
}

void ReadSources(YamlMap& map, std::map<std::string, std::string>& sources) {
  for (auto& [k, v] : map.StringMap("sources")) sources[k] = v;
}

GpuProfile ParseGpuProfile(YamlMap& map) {
  GpuProfile g;
  map.Int("schema_version", std::nullopt, 1);
  g.name = map.String("name");
  g.display_name = map.String("display_name", g.name);
  g.architecture = map.String("architecture");
  g.compute_capability = static_cast<int>(map.Int("compute_capability", std::nullopt, 10));
  g.sm_count = static_cast<int>(map.Int("sm_count", std::nullopt, 1));
  {
    YamlMap peak = map.Map("peak", /*required=*/true);
    g.bf16_dense = peak.FlopRate("bf16");
    g.fp16_dense = peak.FlopRate("fp16", g.bf16_dense);
    g.fp8_dense = peak.FlopRate("fp8", FlopsPerSecond(0));
    g.tf32_dense = peak.FlopRate("tf32", FlopsPerSecond(0));
    g.fp32 = peak.FlopRate("fp32");
    peak.Finish();
  }
  {
    YamlMap mem = map.Map("memory", true);
    g.hbm_capacity = mem.BytesValue("capacity");
    g.hbm_bandwidth = mem.Bandwidth("bandwidth");
    g.l2_cache = mem.BytesValue("l2_cache", Bytes(0));
    mem.Finish();
  }
  {
    YamlMap nv = map.Map("nvlink");
    g.nvlink_bandwidth = nv.Bandwidth("bandwidth", BytesPerSecond(0));
    g.nvlink_links = static_cast<int>(nv.Int("links", 0, 0));
    g.nvls = nv.Bool("nvls", false);
    nv.Finish();
  }
  g.pcie_bandwidth = map.Bandwidth("pcie_bandwidth");
  {
    YamlMap p = map.Map("power", true);
    g.tdp = p.Power("tdp");
    g.idle_power = p.Power("idle");
    g.power_matmul_fraction = p.Double("matmul_fraction", g.power_matmul_fraction, 0.0, 1.0);
    g.power_memory_fraction = p.Double("memory_fraction", g.power_memory_fraction, 0.0, 1.0);
    g.power_comm_fraction = p.Double("comm_fraction", g.power_comm_fraction, 0.0, 1.0);
    if (g.idle_power > g.tdp) p.AddIssue("idle", "idle power exceeds tdp");
    p.Finish();
  }
  {
    YamlMap e = map.Map("efficiency");
    g.gemm_max_efficiency = e.Double("gemm_max", g.gemm_max_efficiency, 0.01, 1.0);
    g.sustained_fraction = e.Double("sustained", g.sustained_fraction, 0.01, 1.0);
    g.gemm_k0 = e.Double("gemm_k0", g.gemm_k0, 0.0, 1e6);
    g.gemm_half_outputs = e.Double("gemm_half_outputs", g.gemm_half_outputs, 0.0, 1e12);
    if ((g.gemm_k0 > 0) != (g.gemm_half_outputs > 0))
      e.AddIssue("gemm_k0", "gemm_k0 and gemm_half_outputs go together (both measured, or both absent)");
    g.memory_efficiency = e.Double("memory", g.memory_efficiency, 0.01, 1.0);
    g.nvlink_efficiency = e.Double("nvlink", g.nvlink_efficiency, 0.01, 1.0);
    e.Finish();
  }
  ReadSources(map, g.sources);
  if (g.bf16_dense <= FlopsPerSecond(0)) map.AddIssue("peak", "peak.bf16 must be positive");
  if (g.hbm_capacity <= Bytes(0)) map.AddIssue("memory", "memory.capacity must be positive");
  if (g.hbm_bandwidth <= BytesPerSecond(0)) map.AddIssue("memory", "memory.bandwidth must be positive");
  return g;
}

IntraNodeFabric ParseIntraFabric(YamlMap& map) {
  std::string v = map.String("fabric", "nvswitch");
  std::replace(v.begin(), v.end(), '_', '-');  // hybrid_cube_mesh reads as hybrid-cube-mesh
  if (v == "nvswitch") return IntraNodeFabric::kNvSwitch;
  if (v == "hybrid-cube-mesh") return IntraNodeFabric::kHybridCubeMesh;
  if (v == "nvl-domain") return IntraNodeFabric::kNvlDomain;
  if (v == "pcie") return IntraNodeFabric::kPcie;
  map.AddIssue("fabric", StrCat("'", v, "' is not one of: nvswitch, hybrid-cube-mesh, nvl-domain, pcie"));
  return IntraNodeFabric::kNvSwitch;
}

InterNodeFabric ParseInterFabric(YamlMap& map) {
  std::string v = map.String("fabric", "fat-tree");
  std::replace(v.begin(), v.end(), '_', '-');
  if (v == "fat-tree") return InterNodeFabric::kFatTree;
  if (v == "single-switch") return InterNodeFabric::kSingleSwitch;
  map.AddIssue("fabric", StrCat("'", v, "' is not one of: fat-tree, single-switch"));
  return InterNodeFabric::kFatTree;
}

NetworkTransport ParseTransport(YamlMap& map) {
  const std::string v = map.String("transport", "infiniband");
  if (v == "infiniband") return NetworkTransport::kInfiniBand;
  if (v == "roce") return NetworkTransport::kRoce;
  if (v == "efa") return NetworkTransport::kAwsEfa;
  map.AddIssue("transport", StrCat("'", v, "' is not one of: infiniband, roce, efa"));
  return NetworkTransport::kInfiniBand;
}

// Fewest switch tiers of radix-k switches that connect `endpoints` NICs at 1:1:
// one switch holds k, a two-tier fat tree k²/2, a three-tier one k³/4 (Al-Fares et al. 2008).
int TiersFor(int64_t endpoints, int radix) {
  const double k = radix;
  if (endpoints <= radix) return 1;
  if (endpoints <= k * k / 2) return 2;
  return 3;
}

}  // namespace

std::vector<std::string> GpuProfileNames() { return EmbeddedNames("gpus"); }
std::vector<std::string> ClusterPresetNames() { return EmbeddedNames("clusters"); }

GpuProfile LoadGpuProfile(const std::string& name_or_path) {
  std::string file;
  YAML::Node root = OpenProfileYaml("gpus", name_or_path, "gpu", file);
  IssueList issues;
  YamlMap map(root, file, "", &issues);
  GpuProfile g = ParseGpuProfile(map);
  map.Finish();
  issues.ThrowIfAny();
  g.file = std::filesystem::exists(name_or_path) ? name_or_path : "";
  return g;
}

ClusterSpec LoadCluster(const std::string& name_or_path, int nodes_override) {
  std::string file;
  YAML::Node root = OpenProfileYaml("clusters", name_or_path, "--cluster", file);
  IssueList issues;
  YamlMap map(root, file, "", &issues);
  ClusterSpec c;
  map.Int("schema_version", std::nullopt, 1);
  c.name = map.String("name");
  const std::string gpu = map.String("gpu");
  c.gpus_per_node = static_cast<int>(map.Int("gpus_per_node", std::nullopt, 1));
  c.nodes = static_cast<int>(map.Int("nodes", 1, 1));
  if (const std::string hw = map.String("hw_profile", ""); !hw.empty()) {
    const std::filesystem::path hp = hw;
    c.hw_profile = hp.is_relative() && !file.empty() ? (std::filesystem::path(file).parent_path() / hp).string() : hw;
  }
  std::string tiers_text = "auto";
  {
    YamlMap intra = map.Map("intra_node");
    c.intra_node.fabric = ParseIntraFabric(intra);
    c.intra_node.nvlink_domain_size = static_cast<int>(intra.Int("nvlink_domain_size", c.gpus_per_node, 1));
    c.intra_node.nvlink_latency = intra.Duration("nvlink_latency", c.intra_node.nvlink_latency);
    intra.Finish();
  }
  {
    YamlMap inter = map.Map("inter_node");
    InterNodeSpec& n = c.inter_node;
    n.fabric = ParseInterFabric(inter);
    tiers_text = inter.String("tiers", "auto");
    n.rail_optimized = inter.Bool("rail_optimized", n.rail_optimized);
    n.scalable_unit_nodes = static_cast<int>(inter.Int("scalable_unit_nodes", n.scalable_unit_nodes, 1));
    n.nics_per_node = static_cast<int>(inter.Int("nics_per_node", n.nics_per_node, 1));
    n.nic_bandwidth = inter.Bandwidth("nic_bandwidth", n.nic_bandwidth);
    n.oversubscription = inter.Double("oversubscription", n.oversubscription, 1.0, 64.0);
    n.switch_radix = static_cast<int>(inter.Int("switch_radix", n.switch_radix, 4));
    n.switch_latency = inter.Duration("switch_latency", n.switch_latency);
    n.nic_latency = inter.Duration("nic_latency", n.nic_latency);
    n.sharp = inter.Bool("sharp", n.sharp);
    n.transport = ParseTransport(inter);
    if (n.sharp && n.transport == NetworkTransport::kAwsEfa)
      inter.AddIssue("sharp", "SHARP is an InfiniBand feature; AWS EFA has no in-network reduction");
    if (tiers_text != "auto" && tiers_text != "1" && tiers_text != "2" && tiers_text != "3") {
      inter.AddIssue("tiers", StrCat("'", tiers_text, "' is not one of: auto, 1, 2, 3"));
    }
    inter.Finish();
  }
  {
    YamlMap power = map.Map("power");
    c.node_overhead_power = power.Power("node_overhead", Watts(0));
    c.network_power_per_switch = power.Power("per_switch", Watts(0));
    power.Finish();
  }
  ReadSources(map, c.sources);
  YamlMap overrides = map.Map("overrides");
  map.Finish();
  issues.ThrowIfAny();

  try {
    // A gpu name resolves as a built-in profile or as a path relative to the cluster file.
    std::string gpu_ref = gpu;
    if (!std::filesystem::exists(gpu_ref) && std::filesystem::exists(name_or_path)) {
      auto rel = std::filesystem::path(name_or_path).parent_path() / gpu;
      if (std::filesystem::exists(rel)) gpu_ref = rel.string();
    }
    c.gpu = LoadGpuProfile(gpu_ref);
  } catch (const InvalidInput& e) {
    std::vector<Issue> wrapped;
    for (Issue issue : e.issues()) {
      if (issue.file.empty()) {
        issue.file = file;
        issue.key = "gpu";
      }
      wrapped.push_back(issue);
    }
    throw InvalidInput(wrapped);
  }

  ApplyOverrides(overrides, c.gpu);
  issues.ThrowIfAny();
  if (map.Has("overrides")) c.sources["overrides"] = "profile fields overridden in this cluster file";
  if (nodes_override > 0) c.nodes = nodes_override;
  if (c.gpus_per_node % c.intra_node.nvlink_domain_size != 0 &&
      c.intra_node.nvlink_domain_size % c.gpus_per_node != 0) {
    throw InvalidInput(file, "intra_node.nvlink_domain_size",
                StrCat(c.intra_node.nvlink_domain_size, " and gpus_per_node ", c.gpus_per_node,
                       " must divide one another"));
  }
  const int64_t endpoints = static_cast<int64_t>(c.nodes) * c.inter_node.nics_per_node;
  if (tiers_text == "auto") {
    c.inter_node.tiers = TiersFor(endpoints, c.inter_node.switch_radix);
  } else {
    c.inter_node.tiers = std::stoi(tiers_text);
  }
  if (c.inter_node.tiers == 1) c.inter_node.fabric = InterNodeFabric::kSingleSwitch;
  const double k = c.inter_node.switch_radix;
  const double capacity = c.inter_node.tiers == 1 ? k : c.inter_node.tiers == 2 ? k * k / 2 : k * k * k / 4;
  if (endpoints > capacity * c.inter_node.oversubscription) {
    throw InvalidInput(file, "inter_node.tiers",
                StrCat(c.nodes, " nodes x ", c.inter_node.nics_per_node, " NICs exceed what ",
                       c.inter_node.tiers, " tiers of ", c.inter_node.switch_radix, "-port switches connect"));
  }
  c.file = std::filesystem::exists(name_or_path) ? name_or_path : "";
  return c;
}

JobSpec LoadJobYaml(const std::string& path) {
  IssueList issues;
  YamlMap map(internal::ParseYamlFile(path), path, "", &issues);
  map.Int("schema_version", 1, 1);
  JobSpec job;
  job.global_batch = map.Int("global_batch", std::nullopt, 1);
  job.seq_len = map.Int("seq_len", std::nullopt, 1);
  const std::string precision = map.String("precision", "bf16");
  if (precision == "bf16") {
    job.precision = Precision::kBf16;
  } else if (precision == "fp8") {
    job.precision = Precision::kFp8;
  } else {
    map.AddIssue("precision", StrCat("'", precision, "' is not one of: bf16, fp8"));
  }
  const std::string optimizer = map.String("optimizer", "adamw");
  if (optimizer != "adamw") map.AddIssue("optimizer", StrCat("'", optimizer, "' is not one of: adamw"));
  job.stack = map.String("stack", job.stack);
  map.Finish();
  issues.ThrowIfAny();
  job.file = path;
  return job;
}

}  // namespace parasim
