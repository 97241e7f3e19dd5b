#include "core/internal/field_reader.h"

namespace parasim::internal {

YamlMap& YamlTree::At(const std::string& prefix) {
  if (prefix.empty()) return root_;
  if (auto it = children_.find(prefix); it != children_.end()) return it->second;
  const size_t dot = prefix.rfind('.');
  YamlMap& parent = At(dot == std::string::npos ? "" : prefix.substr(0, dot));
  YamlMap child = parent.Map(dot == std::string::npos ? prefix : prefix.substr(dot + 1));
  return children_.emplace(prefix, std::move(child)).first->second;
}

void YamlTree::Finish() {
  for (auto& [prefix, map] : children_) map.Finish();
}

bool ReadFieldValue(YamlMap& map, const std::string& key, FieldUnit unit, const FieldRange& range, bool required,
                    double& out) {
  const auto text = map.Text(key, required);
  if (!text) return false;
  double v = 0;
  try {
    v = ParseFieldValue(unit, *text, map.KeyPath(key));
  } catch (const InvalidInput& e) {
    for (const Issue& issue : e.issues()) map.AddIssue(key, issue.message);
    return false;
  }
  if (auto problem = RangeProblem(range, unit, v)) {
    map.AddIssue(key, *problem);
    return false;
  }
  out = v;
  return true;
}

}  // namespace parasim::internal
