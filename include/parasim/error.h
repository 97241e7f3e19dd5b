// The library's exceptions. Every one derives from parasim::Error, so a caller
// can catch the library's failures in one place and tell them apart by type;
// the CLI maps each type to one exit code (cli/exit_codes.h):
//   InvalidInput      2  bad input or usage: names file, key path, line:column
//   NoAnswer          3  a valid request without an answer (no plan fits)
//   EnvironmentError  3  the machine cannot do it (no GPU, a device error)
//   InternalError     1  a bug
// A loader collects every problem of a file and throws once, so the user fixes
// them all in one round. Only standard-library types cross this header.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "parasim/export.h"

namespace parasim {

struct PARASIM_API Issue {
  std::string file;   // "" for command-line input or a library struct
  std::string key;    // dotted key path ("inter_node.nic_bandwidth") or struct field ("PlanQuery::top")
  int line = 0;       // 1-based; 0 = unknown
  int column = 0;     // 1-based; 0 = unknown
  std::string message;  // what is wrong and, where it helps, what would be valid

  std::string ToString() const;
};

// The base of every exception the library throws.
class PARASIM_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input: every problem found, each with where it is and what would be valid.
class PARASIM_API InvalidInput : public Error {
 public:
  explicit InvalidInput(std::vector<Issue> issues);
  InvalidInput(std::string file, std::string key, std::string message);
  const std::vector<Issue>& issues() const { return issues_; }

 private:
  std::vector<Issue> issues_;
};

// A valid request that has no answer: no config fits, nothing is feasible.
// `reasons` says why, one line per pruned dimension ("memory: 812 configs need
// more than 80 GB").
class PARASIM_API NoAnswer : public Error {
 public:
  NoAnswer(std::string summary, std::vector<std::string> reasons);
  const std::vector<std::string>& reasons() const { return reasons_; }

 private:
  std::vector<std::string> reasons_;
};

// The environment failed, not the input: no GPU, a CUDA/NCCL error, a
// program that cannot start.
class PARASIM_API EnvironmentError : public Error {
 public:
  using Error::Error;
};

// An internal invariant failed: a bug in parasim, not in the input.
class PARASIM_API InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace parasim
