// The one number formatter of parasim's text output (tables, CSV, reports):
// printf's rounding, so every writer prints a value the same way.
#pragma once

#include <string>

namespace parasim {

std::string FormatFixed(double v, int digits);        // "%.*f": 1234.5678, 2 -> "1234.57"
std::string FormatSignificant(double v, int digits);  // "%.*g": 1234.5678, 3 -> "1.23e+03"
// JSON's form: the shortest text that reads back to the same double, with
// ".0" on whole numbers ("268435456.0", "2.786e-05"); "null" for NaN and
// infinities. Byte-identical to what nlohmann::json dumps.
std::string FormatShortest(double v);

}  // namespace parasim
