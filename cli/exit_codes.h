// The exit-code table (docs/exit-codes.md, README): one place, used by every
// command. main.cc maps the library's exception types onto it.
#pragma once

#include <exception>

#include "parasim/error.h"

namespace parasim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;       // a bug: InternalError or anything unexpected
inline constexpr int kExitBadInput = 2;       // InvalidInput, usage, a feature this build lacks
inline constexpr int kExitNoAnswer = 3;       // NoAnswer (no plan fits), EnvironmentError (no GPU)
inline constexpr int kExitFindingFailed = 4;  // validate ran and at least one finding failed

// Thrown by a command whose output is complete but whose exit code is not 0
// (validate with a failed finding): main returns `code` without a message.
struct ExitWith {
  int code;
};

// The exit code of a failure, by the library's exception type.
inline int ExitCodeOf(const std::exception& e) {
  if (dynamic_cast<const InvalidInput*>(&e)) return kExitBadInput;
  if (dynamic_cast<const NoAnswer*>(&e) || dynamic_cast<const EnvironmentError*>(&e)) return kExitNoAnswer;
  return kExitInternal;
}

}  // namespace parasim::cli
