// Parsing of unit strings in files: "400 Gb/s", "3.35 TB/s", "80 GB",
// "700 W", "989 TFLOP/s", "5 us". A bare number where a unit is due is an
// error that names the unit to add. Throws parasim::Error with `where`.
#pragma once

#include <string>

#include "core/units.h"

namespace parasim {

Seconds ParseDuration(const std::string& text, const std::string& where);
Bytes ParseBytes(const std::string& text, const std::string& where);
BytesPerSecond ParseBandwidth(const std::string& text, const std::string& where);
FlopsPerSecond ParseFlopRate(const std::string& text, const std::string& where);
Watts ParsePower(const std::string& text, const std::string& where);

}  // namespace parasim
