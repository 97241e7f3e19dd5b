// Order statistics shared by the calibration fits, the accuracy reports and
// the device benchmark programs (header-only, standard library only, so the
// standalone CUDA programs in calibrate/cuda/ include it too).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace parasim {

// The median of `v` (the mean of the two middle values for an even count);
// 0 for an empty vector.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median of |v|.
inline double MedianAbs(std::vector<double> v) {
  for (double& x : v) x = std::abs(x);
  return Median(std::move(v));
}

}  // namespace parasim
