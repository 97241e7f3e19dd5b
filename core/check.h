// Checks for programmer errors (never for bad input: that is parasim::Error).
// PARASIM_CHECK is always on; PARASIM_DCHECK only in debug builds (hot loops).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace parasim {

// InternalError (parasim/error.h) is thrown when an invariant fails: a bug, exit code 1.
namespace detail {
template <class... Args>
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const Args&... args) {
  std::ostringstream os;
  os << file << ":" << line << ": check failed: " << cond;
  if constexpr (sizeof...(args) > 0) {
    os << ": ";
    (os << ... << args);
  }
  throw InternalError(os.str());
}
}  // namespace detail

}  // namespace parasim

#define PARASIM_CHECK(cond, ...)                                                  \
  do {                                                                            \
    if (!(cond)) ::parasim::detail::CheckFailed(__FILE__, __LINE__, #cond, ##__VA_ARGS__); \
  } while (0)

#ifdef NDEBUG
#define PARASIM_DCHECK(cond, ...) \
  do {                            \
  } while (0)
#else
#define PARASIM_DCHECK(cond, ...) PARASIM_CHECK(cond, ##__VA_ARGS__)
#endif
