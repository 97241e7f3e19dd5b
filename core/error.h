// The library's exceptions (declared in the public include/parasim/error.h,
// which every installed header shares) and the internal helpers that build
// them: IssueList collects, StrCat formats.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "parasim/error.h"

namespace parasim {

// Collects issues, then throws them all at once.
class IssueList {
 public:
  void Add(Issue issue) { issues_.push_back(std::move(issue)); }
  void Add(std::string file, std::string key, std::string message) {
    issues_.push_back(Issue{std::move(file), std::move(key), 0, 0, std::move(message)});
  }
  bool empty() const { return issues_.empty(); }
  const std::vector<Issue>& issues() const { return issues_; }
  void ThrowIfAny() const {
    if (!issues_.empty()) throw InvalidInput(issues_);
  }

 private:
  std::vector<Issue> issues_;
};

// StrCat: GCC 12 has no <format>; this is the project's one string builder.
template <class... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  os.precision(12);
  (os << ... << args);
  return os.str();
}

}  // namespace parasim
