// GPU profiles, cluster presets and job files from YAML (built in or on disk).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/input_file.h"
#include "core/embedded_files.h"
#include "core/did_you_mean.h"
#include "core/field_registry.h"
#include "core/internal/field_reader.h"
#include "core/internal/yaml_reader.h"
#include "core/loaders.h"

namespace parasim {
namespace {

using internal::YamlMap;
using internal::YamlTree;

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
  if (PathExists(name_or_path)) {
    file_out = name_or_path;
    return internal::ParseYamlFile(name_or_path);
  }
  throw InvalidInput("", flag,
                     StrCat("'", ShortName(name_or_path), "' is neither a built-in name nor an existing file; ",
                            DidYouMean(name_or_path, EmbeddedNames(folder)), "built in: ", JoinNames(EmbeddedNames(folder))));
}

// `overrides:` in a cluster file: any profile field by its flat name, for
// what-if studies; ranges as in a profile.
void ApplyOverrides(YamlMap& o, GpuProfile& g) {
  YamlTree tree(o);
  internal::ReadFields(tree, GpuProfileFields(), g, /*flat=*/true);
  tree.Finish();
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
  YamlTree tree(map);
  for (const char* section : {"peak", "memory", "power"}) tree.At(section);  // required sections
  if (!map.Has("peak")) map.AddIssue("peak", "required key is missing");
  if (!map.Has("memory")) map.AddIssue("memory", "required key is missing");
  if (!map.Has("power")) map.AddIssue("power", "required key is missing");
  internal::ReadFields(tree, GpuProfileFields(), g);
  if (!tree.At("peak").Has("fp16")) g.fp16_dense = g.bf16_dense;
  tree.Finish();
  ReadSources(map, g.sources);
  return g;
}

// Cross-field rules (idle <= tdp, ...) once every field has been read, at the
// keys' positions in the file.
void AddValidationIssues(std::vector<Issue> found, const YAML::Node& root, IssueList& issues) {
  internal::LocateIssues(root, found);
  for (Issue& issue : found) issues.Add(std::move(issue));
}

// The cluster's Validate() issues, at their keys in the file. The GPU's were
// checked when its profile loaded, unless `overrides:` changed it: then they
// name the override's key. A bad `nodes` from --nodes names the flag.
void AddClusterIssues(std::vector<Issue> found, const YAML::Node& root, const std::string& file,
                      bool has_overrides, bool nodes_from_flag, IssueList& issues) {
  std::vector<Issue> kept;
  for (Issue& issue : found) {
    const GpuField* gpu_field = FindField(GpuProfileFields(), issue.key);
    const bool gpu_issue = gpu_field != nullptr || issue.key == "architecture" || issue.file != file;
    if (gpu_issue) {
      if (!has_overrides) continue;
      issue.file = file;
      issue.key = gpu_field ? "overrides." + gpu_field->Name() : "overrides";
    }
    if (nodes_from_flag && issue.key == "nodes") {
      issue.file = "";
      issue.key = "--nodes";
    }
    kept.push_back(std::move(issue));
  }
  AddValidationIssues(std::move(kept), root, issues);
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
  AddValidationIssues(ValidateGpuProfile(g, file), root, issues);
  issues.ThrowIfAny();
  g.file = PathExists(name_or_path) ? name_or_path : "";
  return g;
}

// An operator that keeps spare trays (GB200/GB300 NVL72 jobs ran on 64 of 72)
// gives a job fewer GPUs per domain: the job's node is the usable part, with
// one NIC per GPU as before; the NVLink switches stay non-blocking.
static void ApplyUsableDomain(ClusterSpec& c, const std::string& file, IssueList& issues) {
  const int usable = c.intra_node.nvlink_domain_usable;
  if (usable == 0) return;
  if (usable > c.intra_node.nvlink_domain_size || c.gpus_per_node != c.intra_node.nvlink_domain_size) {
    issues.Add(file, "intra_node.nvlink_domain_usable",
               StrCat(usable, " must not exceed the NVLink domain (", c.intra_node.nvlink_domain_size,
                      "), which must be one node (gpus_per_node ", c.gpus_per_node, ")"));
    return;
  }
  if (c.inter_node.nics_per_node == c.gpus_per_node) c.inter_node.nics_per_node = usable;
  c.gpus_per_node = usable;
  c.intra_node.nvlink_domain_size = usable;
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
  if (const std::string hw = map.String("hw_profile", ""); !hw.empty()) {
    const std::filesystem::path hp = hw;
    c.hw_profile = hp.is_relative() && !file.empty() ? (std::filesystem::path(file).parent_path() / hp).string() : hw;
  }
  std::string tiers_text = "auto";
  YamlTree tree(map);
  internal::ReadFields(tree, ClusterFields(), c, false, {"inter_node.tiers"});
  if (!tree.At("intra_node").Has("nvlink_domain_size")) c.intra_node.nvlink_domain_size = c.gpus_per_node;
  ApplyUsableDomain(c, file, issues);
  {
    YamlMap& intra = tree.At("intra_node");
    c.intra_node.fabric = ParseIntraFabric(intra);
  }
  {
    YamlMap& inter = tree.At("inter_node");
    InterNodeSpec& n = c.inter_node;
    n.fabric = ParseInterFabric(inter);
    tiers_text = inter.String("tiers", "auto");
    n.transport = ParseTransport(inter);
    if (n.sharp && n.transport == NetworkTransport::kAwsEfa)
      inter.AddIssue("sharp", "SHARP is an InfiniBand feature; AWS EFA has no in-network reduction");
    if (tiers_text != "auto" && tiers_text != "1" && tiers_text != "2" && tiers_text != "3") {
      inter.AddIssue("tiers", StrCat("'", tiers_text, "' is not one of: auto, 1, 2, 3"));
    }
  }
  tree.At("power");
  tree.Finish();
  ReadSources(map, c.sources);
  YamlMap overrides = map.Map("overrides");
  map.Finish();
  issues.ThrowIfAny();

  try {
    // A gpu name resolves as a built-in profile or as a path relative to the cluster file.
    std::string gpu_ref = gpu;
    if (!PathExists(gpu_ref) && PathExists(name_or_path)) {
      auto rel = std::filesystem::path(name_or_path).parent_path() / gpu;
      if (PathExists(rel.string())) gpu_ref = rel.string();
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
  AddClusterIssues(ValidateCluster(c, file), root, file, map.Has("overrides"), nodes_override > 0, issues);
  issues.ThrowIfAny();
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
  c.file = PathExists(name_or_path) ? name_or_path : "";
  return c;
}

JobSpec LoadJobYaml(const std::string& path) {
  IssueList issues;
  YamlMap map(internal::ParseYamlFile(path), path, "", &issues);
  map.Int("schema_version", 1, 1);
  JobSpec job;
  YamlTree tree(map);
  internal::ReadFields(tree, JobFields(), job);
  const std::string precision = map.String("precision", "bf16");
  if (precision == "bf16") {
    job.precision = Precision::kBf16;
  } else if (precision == "fp8") {
    job.precision = Precision::kFp8;
  } else if (precision == "fp4") {
    job.precision = Precision::kFp4;
  } else if (precision == "fp32") {
    job.precision = Precision::kFp32;
  } else {
    map.AddIssue("precision", StrCat("'", precision, "' is not one of: bf16, fp8, fp4, fp32"));
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
