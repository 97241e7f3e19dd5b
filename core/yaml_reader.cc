#include "core/internal/yaml_reader.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/unit_parse.h"

namespace parasim::internal {

YAML::Node ParseYamlText(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InvalidInput({Issue{file, "", e.mark.line + 1, e.mark.column + 1, StrCat("invalid YAML: ", e.msg)}});
  }
}

YAML::Node ParseYamlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path, "", "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseYamlText(text.str(), path);
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path, IssueList* issues)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)), issues_(issues) {
  if (node_ && !node_.IsNull() && !node_.IsMap()) {
    issues_->Add(Issue{file_, path_, node_.Mark().line + 1, node_.Mark().column + 1, "expected a mapping"});
    node_ = YAML::Node();
  }
}

std::string YamlMap::KeyPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool YamlMap::Has(const std::string& key) const { return node_ && node_.IsMap() && node_[key]; }

void YamlMap::AddIssue(const std::string& key, const std::string& message) {
  Issue issue{file_, KeyPath(key), 0, 0, message};
  if (Has(key)) {
    const YAML::Mark mark = node_[key].Mark();
    issue.line = mark.line + 1;
    issue.column = mark.column + 1;
  } else if (node_ && !node_.Mark().is_null()) {
    issue.line = node_.Mark().line + 1;
    issue.column = node_.Mark().column + 1;
  }
  issues_->Add(std::move(issue));
}

std::optional<YAML::Node> YamlMap::Lookup(const std::string& key, bool required) {
  consumed_.insert(key);
  if (!Has(key) || node_[key].IsNull()) {
    if (required) AddIssue(key, "required key is missing");
    return std::nullopt;
  }
  return node_[key];
}

std::optional<std::string> YamlMap::Scalar(const std::string& key, bool required) {
  auto n = Lookup(key, required);
  if (!n) return std::nullopt;
  if (!n->IsScalar()) {
    AddIssue(key, "expected a single value");
    return std::nullopt;
  }
  return n->Scalar();
}

std::string YamlMap::String(const std::string& key, std::optional<std::string> fallback) {
  auto s = Scalar(key, !fallback.has_value());
  return s ? *s : fallback.value_or("");
}

int64_t YamlMap::Int(const std::string& key, std::optional<int64_t> fallback, int64_t min) {
  auto s = Scalar(key, !fallback.has_value());
  if (!s) return fallback.value_or(min);
  std::istringstream in(*s);
  long long v = 0;
  char extra = 0;
  if (!(in >> v) || (in >> extra)) {
    AddIssue(key, StrCat("'", *s, "' is not an integer"));
    return fallback.value_or(min);
  }
  if (v < min) {
    AddIssue(key, StrCat(v, " is below the minimum ", min));
    return fallback.value_or(min);
  }
  return v;
}

double YamlMap::Double(const std::string& key, std::optional<double> fallback, double min, double max) {
  auto s = Scalar(key, !fallback.has_value());
  if (!s) return fallback.value_or(min);
  std::istringstream in(*s);
  double v = 0;
  char extra = 0;
  if (!(in >> v) || (in >> extra) || !std::isfinite(v)) {
    AddIssue(key, StrCat("'", *s, "' is not a number"));
    return fallback.value_or(min);
  }
  if (v < min || v > max) {
    AddIssue(key, StrCat(v, " is outside [", min, ", ", max, "]"));
    return fallback.value_or(min);
  }
  return v;
}

bool YamlMap::Bool(const std::string& key, std::optional<bool> fallback) {
  auto s = Scalar(key, !fallback.has_value());
  if (!s) return fallback.value_or(false);
  if (*s == "true" || *s == "yes" || *s == "on") return true;
  if (*s == "false" || *s == "no" || *s == "off") return false;
  AddIssue(key, StrCat("'", *s, "' is not a boolean; write true or false"));
  return fallback.value_or(false);
}

template <class Q>
Q YamlMap::Unit(const std::string& key, std::optional<Q> fallback,
                Q (*parse)(const std::string&, const std::string&)) {
  auto s = Scalar(key, !fallback.has_value());
  if (!s) return fallback.value_or(Q());
  try {
    return parse(*s, KeyPath(key));
  } catch (const InvalidInput& e) {
    for (const Issue& issue : e.issues()) AddIssue(key, issue.message);
    return fallback.value_or(Q());
  }
}

Bytes YamlMap::BytesValue(const std::string& key, std::optional<Bytes> fallback) {
  return Unit<Bytes>(key, fallback, &ParseBytes);
}
BytesPerSecond YamlMap::Bandwidth(const std::string& key, std::optional<BytesPerSecond> fallback) {
  return Unit<BytesPerSecond>(key, fallback, &ParseBandwidth);
}
FlopsPerSecond YamlMap::FlopRate(const std::string& key, std::optional<FlopsPerSecond> fallback) {
  return Unit<FlopsPerSecond>(key, fallback, &ParseFlopRate);
}
Seconds YamlMap::Duration(const std::string& key, std::optional<Seconds> fallback) {
  return Unit<Seconds>(key, fallback, &ParseDuration);
}
Watts YamlMap::Power(const std::string& key, std::optional<Watts> fallback) {
  return Unit<Watts>(key, fallback, &ParsePower);
}

YamlMap YamlMap::Map(const std::string& key, bool required) {
  auto n = Lookup(key, required);
  return YamlMap(n ? *n : YAML::Node(), file_, KeyPath(key), issues_);
}

std::vector<std::pair<std::string, std::string>> YamlMap::StringMap(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  auto n = Lookup(key, false);
  if (!n) return out;
  if (!n->IsMap()) {
    AddIssue(key, "expected a mapping of names to text");
    return out;
  }
  for (const auto& kv : *n) {
    if (!kv.second.IsScalar()) {
      AddIssue(key, StrCat("entry '", kv.first.Scalar(), "' is not text"));
      continue;
    }
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return out;
}

void YamlMap::Finish() {
  if (!node_ || !node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (!consumed_.count(key)) {
      issues_->Add(Issue{file_, KeyPath(key), kv.first.Mark().line + 1, kv.first.Mark().column + 1,
                         "unknown key"});
    }
  }
}

}  // namespace parasim::internal

namespace parasim::internal {

void LocateIssues(const YAML::Node& root, std::vector<Issue>& issues) {
  for (Issue& issue : issues) {
    if (issue.line > 0 || issue.key.empty()) continue;
    YAML::Node node = root;
    std::string rest = issue.key;
    bool found = true;
    while (found && !rest.empty()) {
      const size_t dot = rest.find('.');
      const std::string part = rest.substr(0, dot);
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
      const YAML::Node& current = node;  // const: operator[] must not insert
      if (!current.IsMap() || !current[part]) {
        found = false;
      } else {
        node.reset(current[part]);
      }
    }
    if (found && !node.Mark().is_null()) {
      issue.line = node.Mark().line + 1;
      issue.column = node.Mark().column + 1;
    }
  }
}

}  // namespace parasim::internal
