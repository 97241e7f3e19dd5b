// "Did you mean" for unknown names and keys: the closest candidate by edit
// distance, when it is close enough to be a typo.
#pragma once

#include <string>
#include <vector>

namespace parasim {

// Levenshtein distance.
size_t EditDistance(const std::string& a, const std::string& b);

// "did you mean 'h100-sxm'? " or "" when no candidate is within a third of
// the name's length (at least 2 edits).
std::string DidYouMean(const std::string& name, const std::vector<std::string>& candidates);

// A name shortened for a message: a 5,000-character path prints its ends.
std::string ShortName(const std::string& name);

}  // namespace parasim
