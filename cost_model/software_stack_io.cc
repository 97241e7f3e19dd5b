#include "cost_model/software_stack_io.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>
#include <sstream>
#include <tuple>
#include <variant>

#include "core/check.h"
#include "core/error.h"
#include "core/internal/yaml_reader.h"

namespace parasim {
namespace {

using internal::YamlMap;

constexpr double kNoMax = 1e300;
constexpr int kMaxCount = 1'000'000;   // keeps an int field an int

// One scalar field of a struct: its key (the member's name), the member, the
// allowed range and the comment written beside it.
template <class S>
struct Field {
  const char* key;
  std::variant<double S::*, int S::*, bool S::*> member;
  double min = 0;
  double max = kNoMax;
  const char* meaning = "";
};

// Every scalar field of SoftwareStack except name, description and
// nccl_version (written as text); attention_by_arch is `attention`.
using St = SoftwareStack;
constexpr Field<St> kStackFields[] = {
      {"param_bytes_at_rest", &St::param_bytes_at_rest, 0, kNoMax, "bytes/param: the copy the optimizer updates"},
      {"grad_bytes", &St::grad_bytes, 0, kNoMax, "bytes/param: the gradient the optimizer reads"},
      {"optimizer_bytes", &St::optimizer_bytes, 0, kNoMax, "bytes/param: optimizer state beside it"},
      {"compute_param_bytes", &St::compute_param_bytes, 0, kNoMax, "bytes/param: working / gathered copy"},
      {"comm_grad_bytes", &St::comm_grad_bytes, 0, kNoMax, "bytes per gradient element on the wire"},
      {"comm_param_bytes", &St::comm_param_bytes, 0, kNoMax, "bytes per parameter element gathered"},
      {"logits_bytes_per_element", &St::logits_bytes_per_element, 0, kNoMax, "kept for the loss backward"},
      {"loss_bytes_per_element", &St::loss_bytes_per_element, 0, kNoMax, "HBM traffic of loss fwd + bwd"},
      {"norm_bytes_per_element", &St::norm_bytes_per_element, 0, kNoMax, "HBM bytes per element, forward"},
      {"rope_bytes_per_element", &St::rope_bytes_per_element, 0, kNoMax, "HBM bytes per element, forward"},
      {"act_bytes_per_element", &St::act_bytes_per_element, 0, kNoMax, "HBM bytes per element, forward"},
      {"residual_bytes_per_element", &St::residual_bytes_per_element, 0, kNoMax, "HBM bytes per element, forward"},
      {"kernels_per_layer_forward", &St::kernels_per_layer_forward, 1, kMaxCount, "launches (backward: 2x)"},
      {"cp_merge_bytes_fixed", &St::cp_merge_bytes_fixed, 0, kNoMax, "ring attention merge, forward"},
      {"cp_merge_bytes_per_step", &St::cp_merge_bytes_per_step, 0, kNoMax, "per later ring step, forward"},
      {"cp_grad_bytes_per_step", &St::cp_grad_bytes_per_step, 0, kNoMax, "per ring step, backward"},
      {"cp_grad_bytes_fixed", &St::cp_grad_bytes_fixed, 0, kNoMax, "ring attention, backward"},
      {"cp_kernels_per_step", &St::cp_kernels_per_step, 1, kMaxCount, "launches per ring step"},
      {"kernel_gap_s", &St::kernel_gap_s, 0, kNoMax, "GPU idle between dependent kernels"},
      {"host_per_kernel_s", &St::host_per_kernel_s, 0, kNoMax, "CPU dispatch per kernel"},
      {"host_per_tp_linear_s", &St::host_per_tp_linear_s, 0, kNoMax, "CPU per tensor-parallel linear op"},
      {"copy_passes_forward", &St::copy_passes_forward, 0, kNoMax, "framework copies over bf16 weights"},
      {"copy_passes_backward", &St::copy_passes_backward, 0, kNoMax, "framework copies over bf16 grads"},
      {"optimizer_bytes_per_param", &St::optimizer_bytes_per_param, 0, kNoMax, "HBM traffic of the step"},
      {"nccl_channels", &St::nccl_channels, 1, kMaxCount, "SMs an overlapping NCCL kernel takes"},
      {"nccl_memory_passes", &St::nccl_memory_passes, 0, kNoMax, "HBM bytes per NCCL bus byte"},
      {"separate_compute_copy", &St::separate_compute_copy, 0, 0, "bf16 copy beside fp32 params"},
      {"reserve_bytes", &St::reserve_bytes, 0, kNoMax, "NCCL buffers, workspaces"},
      {"cuda_context_bytes", &St::cuda_context_bytes, 0, kNoMax, "CUDA context (nvidia-smi, not allocated)"},
      {"fragmentation", &St::fragmentation, 1, kNoMax, "allocator factor on dynamic memory (>= 1)"},
      {"activation_bytes", &St::activation_bytes, 1, 8, "saved-activation dtype bytes (2 bf16, 4 fp32)"},
      {"optimizer_temp_bytes", &St::optimizer_temp_bytes, 0, kNoMax, "bytes/param: optimizer-step temporaries"},
      {"grad_bucket_elements", &St::grad_bucket_elements, 0, kNoMax, "gradient bucket; 0 = one layer"},
      {"flatten_grad_buckets", &St::flatten_grad_buckets, 0, 0, "ddp/zero1: flat bucket copy to reduce"},
      {"live_param_elements", &St::live_param_elements, 0, kNoMax, "zero3: cap on gathered params; 0 none"},
      {"loss_chunk_tokens", &St::loss_chunk_tokens, 0, kNoMax, "chunked loss: tokens of logits at once"},
      {"supports_zero1", &St::supports_zero1, 0, 0, "planner: optimizer-state sharding"},
      {"supports_fsdp", &St::supports_fsdp, 0, 0, "planner: zero2 / zero3 / hsdp"},
      {"supports_sharding_with_pp", &St::supports_sharding_with_pp, 0, 0, "planner: zero2/3 with pp > 1"},
      {"supports_cp", &St::supports_cp, 0, 0, "planner: context parallelism"},
      {"supports_interleaved", &St::supports_interleaved, 0, 0, "planner: interleaved schedule"},
      {"supports_zero_bubble", &St::supports_zero_bubble, 0, 0, "planner: zero-bubble schedule"},
      {"fsdp_pp_accumulate_unsharded", &St::fsdp_pp_accumulate_unsharded, 0, 0, "pp>1: gather/reduce once per step"},
      {"overlap_param_gather", &St::overlap_param_gather, 0, 0, "zero1: gather under next forward"},
      {"overlap_grad_reduce", &St::overlap_grad_reduce, 0, 0, "ddp/zero1: reduce under backward"},
      {"dropout", &St::dropout, 0, 0, "dropout masks kept, extra traffic"},
};

using Ak = AttentionKernel;
constexpr Field<Ak> kAttentionFields[] = {
      {"forward_efficiency", &Ak::forward_efficiency, 0, 1, "fraction of dense peak (fused kernels)"},
      {"backward_ratio", &Ak::backward_ratio, 0, kNoMax, "backward / forward efficiency"},
      {"fused", &Ak::fused, 0, 0, "false: scores through HBM"},
      {"score_bytes_forward", &Ak::score_bytes_forward, 0, kNoMax, "unfused: per score element"},
      {"score_bytes_backward", &Ak::score_bytes_backward, 0, kNoMax, "unfused: per score element"},
      {"score_bytes_saved", &Ak::score_bytes_saved, 0, kNoMax, "unfused: kept for backward"},
};

// A new member must get a row in the tables above (or a line of its own in
// the reader and the writer): this stops compiling when the count changes.
[[maybe_unused]] void FieldCountGuard(const SoftwareStack& s, const AttentionKernel& a) {
  [[maybe_unused]] const auto& [s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50] = s;
  static_assert(std::size(kStackFields) == 50 - 4, "all but name, description, nccl_version, attention_by_arch");
  [[maybe_unused]] const auto& [a1, a2, a3, a4, a5, a6, a7] = a;
  static_assert(std::size(kAttentionFields) == 7 - 1, "all but name");
}

// Reads any finite number, then checks the field's range itself: "must be
// >= 0, got -2e-06" says more than the reader's generic interval.
template <class S, size_t N>
void ReadFields(YamlMap& map, const Field<S> (&fields)[N], S& out) {
  auto in_range = [&](const Field<S>& f, double v) {
    if (v >= f.min && v <= f.max) return true;
    if (f.max < kMaxCount) {
      map.AddIssue(f.key, StrCat("must be in [", f.min, ", ", f.max, "], got ", v));
    } else {
      map.AddIssue(f.key, StrCat("must be ", v < f.min ? ">= " : "<= ", v < f.min ? f.min : f.max, ", got ", v));
    }
    return false;
  };
  for (const Field<S>& f : fields) {
    if (auto* d = std::get_if<double S::*>(&f.member)) {
      const double v = map.Double(f.key, out.*(*d), -kNoMax, kNoMax);
      if (in_range(f, v)) out.*(*d) = v;
    } else if (auto* i = std::get_if<int S::*>(&f.member)) {
      const int64_t v = map.Int(f.key, out.*(*i), std::numeric_limits<int64_t>::min());
      if (in_range(f, static_cast<double>(v))) out.*(*i) = static_cast<int>(v);
    } else {
      out.*std::get<bool S::*>(f.member) = map.Bool(f.key, out.*std::get<bool S::*>(f.member));
    }
  }
}

// Accepts 22005 as well as "2.20.5" (what the writer writes).
int ReadNcclVersion(YamlMap& map, int fallback) {
  const std::string text = map.String("nccl_version", std::to_string(fallback));
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits && text.size() <= 6) {
    const int v = std::stoi(text);
    if (v >= 20000 && v <= 29999) return v;
    map.AddIssue("nccl_version", StrCat(v, " is not an NCCL version (major*10000 + minor*100 + patch, 2.x)"));
    return fallback;
  }
  try {
    return ParseNcclVersion(text, map.KeyPath("nccl_version"));
  } catch (const InvalidInput& e) {
    for (const Issue& issue : e.issues()) map.AddIssue("nccl_version", issue.message);
    return fallback;
  }
}

std::string JoinArchitectures(const SoftwareStack& s) {
  std::string out;
  for (const auto& [arch, kernel] : s.attention_by_arch) out += (out.empty() ? "" : ", ") + arch;
  return out;
}

// `attention: {arch: {...}}`: overrides of the base's kernels; an
// architecture the base lacks is a typo more often than a new GPU.
void ReadAttention(YamlMap& root, const YAML::Node& node, SoftwareStack& s, IssueList& issues) {
  YamlMap attention = root.Map("attention");
  if (!node || !node.IsMap()) return;
  for (const auto& kv : node) {
    const std::string arch = kv.first.Scalar();
    YamlMap k = attention.Map(arch);
    auto it = std::find_if(s.attention_by_arch.begin(), s.attention_by_arch.end(),
                           [&](const auto& entry) { return entry.first == arch; });
    if (it == s.attention_by_arch.end()) {
      const YAML::Mark mark = kv.first.Mark();   // the key, as for an unknown key
      issues.Add(Issue{root.file(), attention.KeyPath(arch), mark.line + 1, mark.column + 1,
                       StrCat("unknown architecture (the base has: ", JoinArchitectures(s), ")")});
      continue;
    }
    AttentionKernel& a = it->second;
    a.name = k.String("name", a.name);
    ReadFields(k, kAttentionFields, a);
    // A fused kernel's time divides by these efficiencies.
    if (a.fused && a.forward_efficiency <= 0) k.AddIssue("forward_efficiency", "must be > 0 for a fused kernel");
    if (a.fused && !(a.backward_ratio > 0 && a.forward_efficiency * a.backward_ratio <= 1)) {
      k.AddIssue("backward_ratio",
                 StrCat(a.backward_ratio, " must be > 0 with forward_efficiency x backward_ratio <= 1 (got ",
                        a.forward_efficiency * a.backward_ratio, ")"));
    }
    k.Finish();
  }
}

// The keys `sources` may name: every field, dotted as in the file.
bool IsFieldPath(const std::string& key, const SoftwareStack& s) {
  if (key == "name" || key == "description" || key == "nccl_version" || key == "attention") return true;
  for (const auto& f : kStackFields) {
    if (key == f.key) return true;
  }
  for (const auto& [arch, kernel] : s.attention_by_arch) {
    const std::string prefix = "attention." + arch;
    if (key == prefix || key == prefix + ".name") return true;
    for (const auto& f : kAttentionFields) {
      if (key == prefix + "." + f.key) return true;
    }
  }
  return false;
}

std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double.
std::string Number(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  PARASIM_CHECK(result.ec == std::errc(), "cannot format ", v);
  return std::string(buf, result.ptr);
}

std::string NcclVersionText(int v) { return StrCat(v / 10000, ".", v / 100 % 100, ".", v % 100); }

template <class S, size_t N>
void WriteFields(std::ostringstream& o, const std::string& indent, const Field<S> (&fields)[N], const S& s) {
  for (const Field<S>& f : fields) {
    std::string line = indent + f.key + ": ";
    if (auto* d = std::get_if<double S::*>(&f.member)) {
      line += Number(s.*(*d));
    } else if (auto* i = std::get_if<int S::*>(&f.member)) {
      line += std::to_string(s.*(*i));
    } else {
      line += s.*std::get<bool S::*>(f.member) ? "true" : "false";
    }
    line.resize(std::max<size_t>(line.size() + 1, 40), ' ');
    o << line << "# " << f.meaning << "\n";
  }
}

SoftwareStackFile FromYaml(const YAML::Node& root, const std::string& file) {
  IssueList issues;
  YamlMap map(root, file, "", &issues);
  map.Int("schema_version", std::nullopt, 1);
  SoftwareStackFile out;
  out.base = map.String("base");
  std::optional<SoftwareStack> base;
  if (map.Has("base") && out.base.empty()) {
    map.AddIssue("base", "is empty; name a preset");
  } else if (!out.base.empty()) {
    base = FindSoftwareStackPreset(out.base);
    if (!base) {
      std::string known;
      for (const std::string& n : SoftwareStackNames()) known += (known.empty() ? "" : ", ") + n;
      map.AddIssue("base", StrCat("unknown preset '", out.base, "' (known: ", known, ")"));
    }
  }
  SoftwareStack& s = out.stack;
  // Without a usable base, the rest is still checked (against the default
  // preset) so that the file's every problem comes out at once.
  s = base ? *base : *FindSoftwareStackPreset("");
  s.name = map.String("name", std::filesystem::path(file).stem().string());
  s.description = map.String("description", s.description);
  ReadFields(map, kStackFields, s);
  s.nccl_version = ReadNcclVersion(map, s.nccl_version);
  ReadAttention(map, root.IsMap() ? root["attention"] : YAML::Node(), s, issues);
  const std::vector<std::pair<std::string, std::string>> sources = map.StringMap("sources");
  YamlMap source_marks(root.IsMap() ? root["sources"] : YAML::Node(), file, "sources", &issues);
  for (const auto& [key, where] : sources) {
    if (!IsFieldPath(key, s)) {
      source_marks.AddIssue(key, "names no field of the stack");
      continue;
    }
    out.sources[key] = where;
  }
  map.Finish();
  if (!issues.empty()) {
    // In file order: the fields are read in table order, not the file's.
    std::vector<Issue> sorted = issues.issues();
    std::stable_sort(sorted.begin(), sorted.end(), [](const Issue& a, const Issue& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    throw InvalidInput(std::move(sorted));
  }
  return out;
}

}  // namespace

SoftwareStackFile ParseSoftwareStackYaml(const std::string& text, const std::string& file) {
  return FromYaml(internal::ParseYamlText(text, file), file);
}

SoftwareStackFile ReadSoftwareStackFile(const std::string& path) {
  return FromYaml(internal::ParseYamlFile(path), path);
}

SoftwareStack LoadSoftwareStackFile(const std::string& path) { return ReadSoftwareStackFile(path).stack; }

std::string SoftwareStackToYaml(const SoftwareStack& stack, const std::map<std::string, std::string>& sources,
                                const std::string& base) {
  // Every field is written, so the base decides only which attention keys
  // the file may hold: all presets share them.
  std::string base_name = base;
  if (base_name.empty()) {
    base_name = FindSoftwareStackPreset(stack.name) ? stack.name : FindSoftwareStackPreset("")->name;
  }
  PARASIM_CHECK(FindSoftwareStackPreset(base_name).has_value(), "a stack file needs a preset as base, got '",
                base_name, "'");
  std::ostringstream o;
  o << "# Software stack for parasim --stack; schema: hw_profiles/SCHEMA.md, \"Software-stack files\".\n"
    << "# Keys left out keep the base preset's value; units are in the key names (_s: seconds).\n"
    << "schema_version: 1\n"
    << "name: " << Quote(stack.name) << "\n"
    << "description: " << Quote(stack.description) << "\n"
    << "base: " << Quote(base_name) << "\n";
  WriteFields(o, "", kStackFields, stack);
  o << "nccl_version: " << Quote(NcclVersionText(stack.nccl_version)) << "\n";
  o << "attention:                              # per GPU architecture (gpu profile `architecture`)\n";
  for (const auto& [arch, kernel] : stack.attention_by_arch) {
    o << "  " << arch << ":\n"
      << "    name: " << Quote(kernel.name) << "\n";
    WriteFields(o, "    ", kAttentionFields, kernel);
  }
  if (!sources.empty()) {
    o << "sources:\n";
    for (const auto& [key, where] : sources) o << "  " << Quote(key) << ": " << Quote(where) << "\n";
  }
  return o.str();
}

bool IsSoftwareStackPath(const std::string& name_or_path) {
  auto ends_with = [&](const std::string& suffix) {
    return name_or_path.size() > suffix.size() &&
           name_or_path.compare(name_or_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".yaml") || ends_with(".yml")) return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(name_or_path, ec);
}

}  // namespace parasim
