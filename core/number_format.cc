#include "core/number_format.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace parasim {
namespace {

std::string Printf(const char* format, int digits, double v) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, format, digits, v);
  if (n < static_cast<int>(sizeof buf)) return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  std::string out(static_cast<size_t>(n) + 1, '\0');   // (1e300 with 2 digits: longer than the buffer)
  std::snprintf(out.data(), out.size(), format, digits, v);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string FormatFixed(double v, int digits) { return Printf("%.*f", digits, v); }
std::string FormatSignificant(double v, int digits) { return Printf("%.*g", digits, v); }
// nlohmann's Grisu2 (not always the very shortest), so JSON reports keep their bytes.
std::string FormatShortest(double v) { return nlohmann::json(v).dump(); }

}  // namespace parasim
