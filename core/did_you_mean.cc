#include "core/did_you_mean.h"

#include <algorithm>

namespace parasim {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string DidYouMean(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.size() > 200) return "";
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? "" : "did you mean '" + best + "'? ";
}

std::string ShortName(const std::string& name) {
  return name.size() <= 200 ? name : name.substr(0, 120) + "..." + name.substr(name.size() - 60);
}

}  // namespace parasim
