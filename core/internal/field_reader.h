// Reads the field registry's entries (core/field_registry.h) out of a YAML
// file: each key path through its sub-mapping, each value in its unit and
// range, every problem an issue at its key. Used by the profile, cluster and
// job loaders and by cost_model/software_stack_io.cc.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/field_registry.h"
#include "core/internal/yaml_reader.h"

namespace parasim::internal {

// A mapping and the child mappings its dotted keys pass through, each opened
// once so that Finish() reports every unknown key exactly once.
class YamlTree {
 public:
  explicit YamlTree(YamlMap& root) : root_(root) {}
  // The mapping at a dotted prefix ("" = the root).
  YamlMap& At(const std::string& prefix);
  void Finish();

 private:
  YamlMap& root_;
  std::map<std::string, YamlMap> children_;
};

// Reads one value of `unit` at `key` of `map`; false (and an issue) when the
// text is not a value of the unit or lies outside `range`; false without an
// issue when the key is absent and not required.
bool ReadFieldValue(YamlMap& map, const std::string& key, FieldUnit unit, const FieldRange& range, bool required,
                    double& out);

// Every entry of `fields` present in the tree (by key path, or by its flat
// name when `flat`, as in a cluster's `overrides:`), except those in `skip`.
// Values in range are set on `spec`; absent ones keep the spec's value.
template <class Spec>
void ReadFields(YamlTree& tree, const std::vector<FieldEntry<Spec>>& fields, Spec& spec, bool flat = false,
                const std::set<std::string>& skip = {}) {
  for (const auto& f : fields) {
    if (skip.count(f.key)) continue;
    const std::string& path = flat ? f.Name() : f.key;
    const size_t dot = path.rfind('.');
    YamlMap& map = tree.At(dot == std::string::npos ? "" : path.substr(0, dot));
    double v = 0;
    if (ReadFieldValue(map, dot == std::string::npos ? path : path.substr(dot + 1), f.unit, f.range,
                       f.required && !flat, v)) {
      f.set(spec, v);
    }
  }
}

}  // namespace parasim::internal
