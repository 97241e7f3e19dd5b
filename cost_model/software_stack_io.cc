#include "cost_model/software_stack_io.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>
#include <tuple>
#include <variant>

#include "core/error.h"
#include "core/internal/field_reader.h"
#include "core/internal/yaml_reader.h"
#include "cost_model/stack_field_registry.h"

namespace parasim {
namespace {

using internal::YamlMap;

// Reads every entry of `fields` present in `map`; values outside their
// range are issues and leave `out` as it was.
template <class S>
void ReadFields(YamlMap& map, const std::vector<FieldEntry<S>>& fields, S& out) {
  for (const FieldEntry<S>& f : fields) {
    double v = 0;
    if (internal::ReadFieldValue(map, f.key, f.unit, f.range, false, v)) f.set(out, v);
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

// `framework`: one of the known frameworks, since it picks the launch emitter.
void ReadFramework(YamlMap& map, SoftwareStack& s) {
  const std::string text = map.String("framework", s.framework);
  const auto& known = SoftwareStackFrameworks();
  if (std::find(known.begin(), known.end(), text) != known.end()) {
    s.framework = text;
    return;
  }
  std::string list;
  for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
  map.AddIssue("framework", StrCat("unknown framework '", text, "' (known: ", list, ")"));
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
    ReadFields(k, AttentionFields(), a);
    k.Finish();
  }
}

// The keys `sources` may name: every field, dotted as in the file.
bool IsFieldPath(const std::string& key, const SoftwareStack& s) {
  if (key == "name" || key == "description" || key == "framework" || key == "nccl_version" || key == "attention") return true;
  for (const auto& f : StackFields()) {
    if (key == f.key) return true;
  }
  for (const auto& [arch, kernel] : s.attention_by_arch) {
    const std::string prefix = "attention." + arch;
    if (key == prefix || key == prefix + ".name") return true;
    for (const auto& f : AttentionFields()) {
      if (key == prefix + "." + f.key) return true;
    }
  }
  return false;
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
  ReadFramework(map, s);
  ReadFields(map, StackFields(), s);
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
  {
    // Cross-field rules; out-of-range values were never set, so nothing repeats.
    std::vector<Issue> found = ValidateSoftwareStack(s, file);
    internal::LocateIssues(root, found);
    for (Issue& issue : found) issues.Add(std::move(issue));
  }
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
