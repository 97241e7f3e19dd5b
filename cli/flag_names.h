// The facade names a bad field as its struct does ("CollectiveQuery::nodes");
// the CLI tells the user the flag they typed ("--nodes").
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "parasim/error.h"

namespace parasim::cli {

using FlagNames = std::map<std::string, std::string>;   // facade field -> flag

// Runs `f`; an InvalidInput from it is thrown again with each known field
// renamed to its flag.
template <class F>
auto WithFlagNames(const FlagNames& names, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InvalidInput& e) {
    std::vector<Issue> issues = e.issues();
    for (Issue& issue : issues) {
      auto it = names.find(issue.key);
      if (it != names.end()) issue.key = it->second;
    }
    throw InvalidInput(std::move(issues));
  }
}

}  // namespace parasim::cli
