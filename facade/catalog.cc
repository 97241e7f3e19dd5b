#include "facade/catalog.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/software_stack_io.h"

namespace parasim {
namespace {

const char* MlpName(MlpKind k) { return k == MlpKind::kSwiGlu ? "swiglu" : "gelu"; }
const char* NormName(NormKind k) { return k == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }
const char* PositionName(PositionKind k) {
  switch (k) {
    case PositionKind::kRope: return "rope";
    case PositionKind::kLearned: return "learned";
    case PositionKind::kAlibi: return "alibi";
  }
  return "?";
}

Value ModelValue(const ModelSpec& m) {
  Value j = Value::Object();
  j.Set("name", m.name).Set("source", m.source).Set("hidden_size", m.hidden_size).Set("num_layers", m.num_layers);
  j.Set("num_attention_heads", m.num_attention_heads).Set("num_kv_heads", m.num_kv_heads);
  j.Set("head_dim", m.HeadDim()).Set("ffn_hidden_size", m.ffn_hidden_size).Set("vocab_size", m.vocab_size);
  j.Set("mlp", MlpName(m.mlp)).Set("norm", NormName(m.norm)).Set("position", PositionName(m.position));
  j.Set("tied_embeddings", m.tied_embeddings).Set("num_experts", m.num_experts);
  j.Set("experts_per_token", m.experts_per_token).Set("moe_ffn_hidden_size", m.moe_ffn_hidden_size);
  j.Set("parameters", m.ParameterCount()).Set("active_parameters", m.ActiveParameterCount());
  j.Set("embedding_parameters", m.EmbeddingParameters()).Set("layer_parameters", m.LayerParameters());
  j.Set("lm_head_parameters", m.LmHeadParameters());
  return j;
}

Value Sources(const std::map<std::string, std::string>& sources) {
  Value j = Value::Object();
  for (const auto& [field, source] : sources) j.Set(field, source);
  return j;
}

Value GpuValue(const GpuProfile& g) {
  Value j = Value::Object();
  j.Set("kind", "gpu").Set("name", g.name).Set("display_name", g.display_name).Set("architecture", g.architecture);
  j.Set("compute_capability", g.compute_capability).Set("sm_count", g.sm_count);
  j.Set("bf16_dense_flops_per_s", g.bf16_dense.si()).Set("fp16_dense_flops_per_s", g.fp16_dense.si());
  j.Set("fp8_dense_flops_per_s", g.fp8_dense.si()).Set("fp4_dense_flops_per_s", g.fp4_dense.si());   // 0: none
  j.Set("tf32_dense_flops_per_s", g.tf32_dense.si());
  j.Set("fp32_flops_per_s", g.fp32.si()).Set("hbm_bytes", g.hbm_capacity.si());
  j.Set("hbm_bandwidth_Bps", g.hbm_bandwidth.si()).Set("l2_bytes", g.l2_cache.si());
  j.Set("nvlink_bandwidth_Bps_per_direction", g.nvlink_bandwidth.si()).Set("nvlink_links", g.nvlink_links);
  j.Set("nvls", g.nvls).Set("pcie_bandwidth_Bps_per_direction", g.pcie_bandwidth.si());
  j.Set("tdp_w", g.tdp.si()).Set("idle_w", g.idle_power.si());
  j.Set("power_matmul_fraction", g.power_matmul_fraction).Set("power_memory_fraction", g.power_memory_fraction);
  j.Set("power_comm_fraction", g.power_comm_fraction).Set("gemm_max_efficiency", g.gemm_max_efficiency);
  j.Set("memory_efficiency", g.memory_efficiency).Set("nvlink_efficiency", g.nvlink_efficiency);
  j.Set("sources", Sources(g.sources));
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

Value ClusterValue(const ClusterSpec& c) {
  Value j = Value::Object();
  j.Set("kind", "cluster").Set("name", c.name).Set("gpu", c.gpu.name).Set("gpus_per_node", c.gpus_per_node);
  j.Set("nodes", c.nodes).Set("gpus", c.TotalGpus());
  j.Set("intra_node", Value::Object()
                          .Set("fabric", IntraName(c.intra_node.fabric))
                          .Set("nvlink_domain_size", c.intra_node.nvlink_domain_size)
                          .Set("nvlink_latency_s", c.intra_node.nvlink_latency.si()));
  const InterNodeSpec& n = c.inter_node;
  j.Set("inter_node", Value::Object()
                          .Set("fabric", n.fabric == InterNodeFabric::kFatTree ? "fat-tree" : "single-switch")
                          .Set("tiers", n.tiers)
                          .Set("rail_optimized", n.rail_optimized)
                          .Set("scalable_unit_nodes", n.scalable_unit_nodes)
                          .Set("nics_per_node", n.nics_per_node)
                          .Set("nic_bandwidth_Bps_per_direction", n.nic_bandwidth.si())
                          .Set("oversubscription", n.oversubscription)
                          .Set("switch_radix", n.switch_radix)
                          .Set("switch_latency_s", n.switch_latency.si())
                          .Set("nic_latency_s", n.nic_latency.si())
                          .Set("sharp", n.sharp));
  j.Set("sources", Sources(c.sources));
  return j;
}

// A built-in GPU profile's name, or a file that loads as one.
bool IsGpuProfile(const std::string& name) {
  const std::vector<std::string> gpus = GpuProfileNames();
  if (std::find(gpus.begin(), gpus.end(), name) != gpus.end()) return true;
  if (!std::filesystem::exists(name)) return false;
  try {
    LoadGpuProfile(name);
    return true;
  } catch (const InvalidInput&) {
    return false;
  }
}

}  // namespace

Value ModelInfo(const std::string& preset_or_file) { return ModelValue(LoadModel(preset_or_file)); }

Value ModelCatalog() {
  Value models = Value::Array();
  for (const std::string& n : ModelPresetNames()) models.Push(ModelValue(LoadModel(n)));
  return models;
}

Value ProfileInfo(const std::string& name_or_file, int nodes) {
  return IsGpuProfile(name_or_file) ? GpuValue(LoadGpuProfile(name_or_file))
                                    : ClusterValue(LoadCluster(name_or_file, nodes));
}

Value ProfileCatalog() {
  Value gpus = Value::Array(), clusters = Value::Array(), stacks = Value::Array();
  for (const std::string& n : GpuProfileNames())
    gpus.Push(Value::Object().Set("name", n).Set("display_name", LoadGpuProfile(n).display_name));
  for (const std::string& n : ClusterPresetNames()) {
    const ClusterSpec c = LoadCluster(n);
    clusters.Push(Value::Object().Set("name", n).Set("gpu", c.gpu.name).Set("gpus_per_node", c.gpus_per_node));
  }
  for (const std::string& n : SoftwareStackNames())
    stacks.Push(Value::Object().Set("name", n).Set("description", LoadSoftwareStack(n).description));
  return Value::Object().Set("gpus", gpus).Set("clusters", clusters).Set("stacks", stacks);
}

ProfileDocument StackFileDocument(const std::string& preset_or_file) {
  if (std::optional<SoftwareStack> preset = FindSoftwareStackPreset(preset_or_file))
    return StackProfileDocument(*preset, {}, preset->name);
  if (!IsSoftwareStackPath(preset_or_file)) LoadSoftwareStack(preset_or_file);   // throws: names the presets
  const SoftwareStackFile f = ReadSoftwareStackFile(preset_or_file);
  // Every field is written, so the base decides only which attention keys the
  // file may hold; a file without one: its stack's name when that is a
  // preset, else the default preset.
  std::string base = f.base;
  if (base.empty()) base = FindSoftwareStackPreset(f.stack.name) ? f.stack.name : FindSoftwareStackPreset("")->name;
  return StackProfileDocument(f.stack, f.sources, base);
}

}  // namespace parasim
