// parasim::Error: bad input. It names the file, the key path, the line and
// column when known, and what is wrong; a loader collects every problem of a
// file and throws once, so the user fixes them all in one round.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace parasim {

struct Issue {
  std::string file;   // "" for command-line input
  std::string key;    // dotted key path, e.g. "inter_node.nic_bandwidth"
  int line = 0;       // 1-based; 0 = unknown
  int column = 0;     // 1-based; 0 = unknown
  std::string message;

  std::string ToString() const;
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::vector<Issue> issues);
  Error(std::string file, std::string key, std::string message);
  const std::vector<Issue>& issues() const { return issues_; }

 private:
  std::vector<Issue> issues_;
};

// The environment failed, not the input: no GPU, a CUDA/NCCL error, a
// program that cannot start. The CLI exits with code 3 (STYLE.md §4.3).
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
    if (!issues_.empty()) throw Error(issues_);
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
