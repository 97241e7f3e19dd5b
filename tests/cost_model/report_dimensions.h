// A report's per-dimension communication totals by name, for cost_model tests.
#pragma once

#include <string_view>

#include "cost_model/report.h"

namespace parasim::testing {

// Communication time of dimension `dim` ("cp", "tp", ...) in the step; 0 when absent.
inline double DimTotal(const Report& r, std::string_view dim) {
  for (const auto& e : r.by_dimension)
    if (e.name == dim) return e.total.si();
  return 0;
}

// The part of it not hidden behind compute; 0 when absent.
inline double DimExposed(const Report& r, std::string_view dim) {
  for (const auto& e : r.by_dimension)
    if (e.name == dim) return e.exposed.si();
  return 0;
}

}  // namespace parasim::testing
