// The facade's entries the parasim CLI needs beyond include/parasim/ (not
// installed): parsing of values the library defines, so cli/ only parses flags.
#pragma once

#include <string>

namespace parasim {

// A message size as nccl-tests takes it: a count of bytes or K/M/G/T binary
// suffixes ("256M" = 256 MiB), or a unit string ("256 MB"). `where` names
// the flag or field in errors.
double ParseSizeBytes(const std::string& text, const std::string& where);

}  // namespace parasim
