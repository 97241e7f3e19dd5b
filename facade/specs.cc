// The facade's spec handles: loaded through core's loaders, held immutable and shared.
#include <memory>

#include "core/error.h"
#include "core/loaders.h"
#include "core/model_presets.h"
#include "cost_model/software_stack.h"
#include "facade/access.h"

namespace parasim {
namespace detail {

Model Access::Wrap(ModelSpec spec) { return Model(std::make_shared<const ModelData>(ModelData{std::move(spec)})); }
Cluster Access::Wrap(ClusterSpec spec, std::string source) {
  return Cluster(std::make_shared<const ClusterData>(ClusterData{std::move(spec), std::move(source)}));
}
Stack Access::Wrap(SoftwareStack stack, std::string source) {
  return Stack(std::make_shared<const StackData>(StackData{std::move(stack), std::move(source)}));
}

}  // namespace detail

using detail::Access;

Model::Model(std::shared_ptr<const detail::ModelData> data) : data_(std::move(data)) {}
Cluster::Cluster(std::shared_ptr<const detail::ClusterData> data) : data_(std::move(data)) {}
Stack::Stack(std::shared_ptr<const detail::StackData> data) : data_(std::move(data)) {}

Model Model::Load(const std::string& preset_or_file) { return Access::Wrap(LoadModel(preset_or_file)); }

Model Model::Define(const ModelShape& shape) {
  IssueList issues;
  auto positive = [&](int64_t v, const char* field) {
    if (v <= 0) issues.Add("", StrCat("ModelShape::", field), StrCat(v, " is not positive"));
  };
  positive(shape.hidden_size, "hidden_size");
  positive(shape.num_layers, "num_layers");
  positive(shape.num_attention_heads, "num_attention_heads");
  positive(shape.ffn_hidden_size, "ffn_hidden_size");
  positive(shape.vocab_size, "vocab_size");
  if (shape.num_kv_heads < 0) issues.Add("", "ModelShape::num_kv_heads", "must not be negative");
  const int64_t kv = shape.num_kv_heads > 0 ? shape.num_kv_heads : shape.num_attention_heads;
  if (shape.num_attention_heads > 0 && kv > 0 && shape.num_attention_heads % kv != 0)
    issues.Add("", "ModelShape::num_kv_heads", StrCat(kv, " does not divide ", shape.num_attention_heads, " heads"));
  if (shape.num_attention_heads > 0 && shape.hidden_size % shape.num_attention_heads != 0)
    issues.Add("", "ModelShape::hidden_size", "must be a multiple of num_attention_heads");
  if (shape.mlp != "swiglu" && shape.mlp != "gelu")
    issues.Add("", "ModelShape::mlp", StrCat("'", shape.mlp, "' is not one of: swiglu, gelu"));
  if (shape.num_experts < 0 || (shape.num_experts > 0 && (shape.experts_per_token < 1 ||
                                                          shape.experts_per_token > shape.num_experts ||
                                                          shape.moe_ffn_hidden_size < 1)))
    issues.Add("", "ModelShape::num_experts",
               "a MoE model needs 1 <= experts_per_token <= num_experts and a positive moe_ffn_hidden_size");
  issues.ThrowIfAny();
  ModelSpec spec;
  spec.name = shape.name;
  spec.source = "ModelShape";
  spec.hidden_size = shape.hidden_size;
  spec.num_layers = shape.num_layers;
  spec.num_attention_heads = shape.num_attention_heads;
  spec.num_kv_heads = kv;
  spec.ffn_hidden_size = shape.ffn_hidden_size;
  spec.vocab_size = shape.vocab_size;
  spec.mlp = shape.mlp == "gelu" ? MlpKind::kGelu : MlpKind::kSwiGlu;
  spec.tied_embeddings = shape.tied_embeddings;
  spec.num_experts = shape.num_experts;
  spec.experts_per_token = shape.experts_per_token;
  spec.moe_ffn_hidden_size = shape.moe_ffn_hidden_size;
  return Access::Wrap(std::move(spec));
}

std::vector<std::string> Model::Presets() { return ModelPresetNames(); }
const std::string& Model::name() const { return data_->spec.name; }
int64_t Model::parameters() const { return data_->spec.ParameterCount(); }

Cluster Cluster::Load(const std::string& preset_or_file) { return Access::Wrap(LoadCluster(preset_or_file), preset_or_file); }
std::vector<std::string> Cluster::Presets() { return ClusterPresetNames(); }
const std::string& Cluster::name() const { return data_->spec.name; }
const std::string& Cluster::gpu() const { return data_->spec.gpu.name; }
int Cluster::gpus_per_node() const { return data_->spec.gpus_per_node; }
int Cluster::nodes() const { return data_->spec.nodes; }

Stack::Stack() {
  static const Stack kDefault = Load("pytorch-fsdp");   // (thread-safe static initialization)
  data_ = kDefault.data_;
}
Stack Stack::Load(const std::string& preset_or_file) { return Access::Wrap(LoadSoftwareStack(preset_or_file), preset_or_file); }
std::vector<std::string> Stack::Presets() { return SoftwareStackNames(); }
const std::string& Stack::name() const { return data_->stack.name; }

}  // namespace parasim
