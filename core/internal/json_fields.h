// Typed reads of a Hugging Face config.json object, collecting every problem
// (file, key path, message) instead of stopping at the first.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace parasim::internal {

class JsonFields {
 public:
  // `prefix` names the enclosing object in issue keys ("text_config.").
  JsonFields(const nlohmann::json& j, std::string file, IssueList& issues, std::string prefix = "")
      : j_(j), file_(std::move(file)), issues_(issues), prefix_(std::move(prefix)) {}

  bool Has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }
  int64_t Int(const char* key) {
    if (!Has(key)) {
      issues_.Add(file_, prefix_ + key, "required key is missing");
      return 0;
    }
    if (!j_[key].is_number_integer()) {
      issues_.Add(file_, prefix_ + key, StrCat("expected an integer, got ", j_[key].dump()));
      return 0;
    }
    return j_[key].get<int64_t>();
  }
  int64_t Int(const char* key, int64_t fallback) { return Has(key) ? Int(key) : fallback; }
  bool Bool(const char* key, bool fallback) {
    if (!Has(key)) return fallback;
    if (!j_[key].is_boolean()) {
      issues_.Add(file_, prefix_ + key, StrCat("expected true or false, got ", j_[key].dump()));
      return fallback;
    }
    return j_[key].get<bool>();
  }
  const nlohmann::json& Raw(const char* key) const { return j_[key]; }
  const std::string& file() const { return file_; }
  void AddIssue(const char* key, std::string message) { issues_.Add(file_, prefix_ + key, std::move(message)); }
  double Double(const char* key, double fallback) {
    if (!Has(key)) return fallback;
    if (!j_[key].is_number()) {
      issues_.Add(file_, prefix_ + key, StrCat("expected a number, got ", j_[key].dump()));
      return fallback;
    }
    return j_[key].get<double>();
  }

 private:
  const nlohmann::json& j_;
  std::string file_;
  IssueList& issues_;
  std::string prefix_;
};

}  // namespace parasim::internal
