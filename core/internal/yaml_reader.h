// Strict YAML access for loaders: every value is read through a key path, type
// and unit errors carry the file, the key and line:column, keys nobody asked
// for are reported as unknown, and every problem of a file is collected before
// one parasim::Error is thrown. Used by core/*.cc and cost_model/software_stack_io.cc (yaml-cpp stays private).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/units.h"

namespace parasim::internal {

// Parses a YAML document; syntax errors throw parasim::Error with the mark.
YAML::Node ParseYamlText(const std::string& text, const std::string& file);
YAML::Node ParseYamlFile(const std::string& path);

// Resolves each issue's dotted key path under `root` to the YAML mark of
// that key (issues that already carry a line are left alone).
void LocateIssues(const YAML::Node& root, std::vector<Issue>& issues);

// One mapping. Reads record the key as consumed; Finish() reports the rest.
class YamlMap {
 public:
  YamlMap(YAML::Node node, std::string file, std::string path, IssueList* issues);

  bool Has(const std::string& key) const;
  const std::string& file() const { return file_; }
  std::string KeyPath(const std::string& key) const;

  // Required when `fallback` is empty; a missing required key is an issue.
  std::string String(const std::string& key, std::optional<std::string> fallback = std::nullopt);
  int64_t Int(const std::string& key, std::optional<int64_t> fallback = std::nullopt, int64_t min = 0);
  double Double(const std::string& key, std::optional<double> fallback = std::nullopt,
                double min = 0.0, double max = 1e300);
  bool Bool(const std::string& key, std::optional<bool> fallback = std::nullopt);
  Bytes BytesValue(const std::string& key, std::optional<Bytes> fallback = std::nullopt);
  BytesPerSecond Bandwidth(const std::string& key, std::optional<BytesPerSecond> fallback = std::nullopt);
  FlopsPerSecond FlopRate(const std::string& key, std::optional<FlopsPerSecond> fallback = std::nullopt);
  Seconds Duration(const std::string& key, std::optional<Seconds> fallback = std::nullopt);
  Watts Power(const std::string& key, std::optional<Watts> fallback = std::nullopt);
  // The scalar text of a key; nullopt when absent or null (an issue when required).
  std::optional<std::string> Text(const std::string& key, bool required) { return Scalar(key, required); }
  // A child mapping; a missing optional one reads as empty (all fallbacks apply).
  YamlMap Map(const std::string& key, bool required = false);
  // A mapping of string to string (e.g. `sources`), in key order.
  std::vector<std::pair<std::string, std::string>> StringMap(const std::string& key);

  // Records an issue at this key's position.
  void AddIssue(const std::string& key, const std::string& message);
  // Reports every key present but never read.
  void Finish();

 private:
  std::optional<YAML::Node> Lookup(const std::string& key, bool required);
  std::optional<std::string> Scalar(const std::string& key, bool required);
  template <class Q>
  Q Unit(const std::string& key, std::optional<Q> fallback, Q (*parse)(const std::string&, const std::string&));

  YAML::Node node_;
  std::string file_;
  std::string path_;
  IssueList* issues_;
  std::set<std::string> consumed_;
};

}  // namespace parasim::internal
