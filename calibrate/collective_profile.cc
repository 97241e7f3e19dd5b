#include "calibrate/collective_profile.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "calibrate/collective_fit.h"
#include "core/error.h"
#include "core/internal/yaml_reader.h"

namespace parasim::calibrate {
namespace {

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
    const bool fraction = p.name == "nic_efficiency" || p.name == "tree_net_efficiency";
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

void AttachHwProfile(ClusterSpec& cluster, const std::string& path) {
  if (path.empty()) return;
  cluster.collective_params = ReadCollectiveProfile(path).params;
}

}  // namespace parasim::calibrate
