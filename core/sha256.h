// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the hash
// a report records of each input file it used, so a plan can be audited and
// replayed (DESIGN.md §5).
#pragma once

#include <string>
#include <string_view>

namespace parasim {

std::string Sha256Hex(std::string_view data);

}  // namespace parasim
