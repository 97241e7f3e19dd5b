#include "core/unit_parse.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace parasim {
namespace {

struct UnitEntry {
  std::string_view spelling;
  double factor;  // to SI base units
};

// Splits "<number><space?><unit>" into its parts; false if there is no number.
bool SplitNumberUnit(const std::string& text, double& number, std::string& unit) {
  const char* begin = text.c_str();
  while (*begin && std::isspace(static_cast<unsigned char>(*begin))) ++begin;
  char* end = nullptr;
  number = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(number)) return false;
  std::string rest(end);
  size_t a = rest.find_first_not_of(" \t");
  size_t b = rest.find_last_not_of(" \t");
  unit = a == std::string::npos ? std::string() : rest.substr(a, b - a + 1);
  return true;
}

double Parse(const std::string& text, const std::string& where, const char* dimension,
             const char* example, std::initializer_list<UnitEntry> units) {
  double number = 0;
  std::string unit;
  if (!SplitNumberUnit(text, number, unit)) {
    throw InvalidInput("", where, StrCat("'", text, "' is not a ", dimension, "; write e.g. '", example, "'"));
  }
  if (unit.empty()) {
    throw InvalidInput("", where, StrCat("'", text, "' has no unit; write e.g. '", example, "'"));
  }
  for (const auto& u : units) {
    if (unit == u.spelling) {
      if (number < 0) throw InvalidInput("", where, StrCat("'", text, "' is negative"));
      return number * u.factor;
    }
  }
  std::string valid;
  for (const auto& u : units) valid += StrCat(valid.empty() ? "" : ", ", u.spelling);
  throw InvalidInput("", where, StrCat("unknown ", dimension, " unit '", unit, "' in '", text, "'; valid: ", valid));
}

}  // namespace

Seconds ParseDuration(const std::string& text, const std::string& where) {
  return Seconds(Parse(text, where, "duration", "5 us",
                       {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9},
                        {"min", 60}, {"h", 3600}}));
}

Bytes ParseBytes(const std::string& text, const std::string& where) {
  return Bytes(Parse(text, where, "size", "80 GB",
                     {{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
                      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                      {"TiB", 1099511627776.0}}));
}

BytesPerSecond ParseBandwidth(const std::string& text, const std::string& where) {
  // Bits and bytes differ in the case of the 'b': NIC rates are quoted in bits.
  return BytesPerSecond(Parse(text, where, "bandwidth", "400 Gb/s",
                              {{"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
                               {"b/s", 1.0 / 8}, {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8},
                               {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8}, {"GiB/s", 1073741824.0}}));
}

FlopsPerSecond ParseFlopRate(const std::string& text, const std::string& where) {
  return FlopsPerSecond(Parse(text, where, "FLOP rate", "989 TFLOP/s",
                              {{"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}}));
}

Watts ParsePower(const std::string& text, const std::string& where) {
  return Watts(Parse(text, where, "power", "700 W", {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}}));
}

}  // namespace parasim
