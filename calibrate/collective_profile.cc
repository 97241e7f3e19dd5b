#include "calibrate/collective_profile.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "calibrate/collective_fit.h"
#include "core/error.h"
#include "core/internal/yaml_reader.h"

namespace parasim::calibrate {
namespace {

std::string Number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

CollectiveProfile FromYaml(const YAML::Node& root, const std::string& file, int depth) {
  IssueList issues;
  internal::YamlMap map(root, file, "", &issues);
  map.Int("schema_version", std::nullopt, 1);
  CollectiveProfile out;
  out.name = map.String("name", std::filesystem::path(file).stem().string());
  out.base = map.String("base", "infiniband");
  if (auto preset = TransportPreset(out.base)) {
    out.params = *preset;
  } else if (depth > 8) {
    map.AddIssue("base", "profiles name each other in a cycle");
  } else {
    std::filesystem::path base = out.base;
    if (base.is_relative()) base = std::filesystem::path(file).parent_path() / base;
    if (!std::filesystem::exists(base)) {
      map.AddIssue("base", StrCat("'", out.base, "' is neither a transport (infiniband, roce, efa) nor a profile file"));
    } else {
      out.params = FromYaml(internal::ParseYamlFile(base.string()), base.string(), depth + 1).params;
    }
  }
  internal::YamlMap coll = map.Map("collective");
  for (const FitParameter& p : CollectiveFitParameters()) {
    if (!coll.Has(p.name)) continue;
    const double v = coll.Double(p.name);
    // Physical validity, wider than the fit's search box.
    const bool fraction = p.name == "nic_efficiency";
    const double lo = p.name == "min_pipeline_chunks" ? 1.0 : 0.0;
    const bool ok = std::isfinite(v) && v >= lo && (!fraction || (v > 0 && v <= 1)) &&
                    (p.name != "net_chunk_bytes" || v > 0);
    if (!ok) {
      coll.AddIssue(p.name, StrCat(v, fraction ? " is not a fraction in (0, 1]" : StrCat(" must be >= ", lo)));
      continue;
    }
    p.set(out.params, v);
  }
  coll.Finish();
  std::stringstream fitted(map.String("fitted_to", ""));
  for (std::string s; std::getline(fitted, s, ',');) {
    const size_t b = s.find_first_not_of(' ');
    if (b != std::string::npos) out.fitted_to.push_back(s.substr(b));
  }
  for (const auto& [k, v] : map.StringMap("sources")) out.sources[k] = v;
  map.Finish();
  issues.ThrowIfAny();
  return out;
}

}  // namespace

std::optional<CollectiveModelParams> TransportPreset(const std::string& name) {
  if (name == "infiniband" || name == "ib" || name == "roce") return CollectiveModelParams::InfiniBand();
  if (name == "efa") return CollectiveModelParams::AwsEfa();
  return std::nullopt;
}

CollectiveProfile ParseCollectiveProfile(const std::string& text, const std::string& file) {
  return FromYaml(internal::ParseYamlText(text, file), file, 0);
}

CollectiveProfile ReadCollectiveProfile(const std::string& path) {
  return FromYaml(internal::ParseYamlFile(path), path, 0);
}

std::string CollectiveProfileToYaml(const CollectiveProfile& p) {
  std::ostringstream o;
  o << "# Collective hardware profile (hw_profiles/SCHEMA.md, \"Collective hardware profiles\").\n"
    << "# Written by `parasim calibrate fit`; use with --hw-profile or a cluster's hw_profile key.\n"
    << "schema_version: 1\n"
    << "name: " << Quote(p.name) << "\n"
    << "base: " << Quote(p.base) << "\n"
    << "collective:\n";
  for (const FitParameter& f : CollectiveFitParameters()) o << "  " << f.name << ": " << Number(f.get(p.params)) << "\n";
  std::string fitted;
  for (const auto& s : p.fitted_to) fitted += (fitted.empty() ? "" : ", ") + s;
  o << "fitted_to: " << Quote(fitted) << "\n";
  o << "sources:\n";
  if (p.sources.empty()) o.seekp(-1, std::ios::cur), o << " {}\n";
  for (const auto& [k, v] : p.sources) o << "  " << k << ": " << Quote(v) << "\n";
  return o.str();
}

void ApplyHwProfile(const std::string& path) {
  if (path.empty()) {
    SetDefaultCollectiveModelParams(std::nullopt);
    return;
  }
  SetDefaultCollectiveModelParams(ReadCollectiveProfile(path).params);
}

}  // namespace parasim::calibrate
