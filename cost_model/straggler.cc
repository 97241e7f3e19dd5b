#include "cost_model/straggler.h"

#include <cmath>

namespace parasim {

double StragglerSeconds(double sigma, int ranks, double compute_s) {
  if (ranks <= 1 || sigma <= 0 || compute_s <= 0) return 0.0;
  return sigma * std::sqrt(2.0 * std::log(static_cast<double>(ranks))) * compute_s;
}

}  // namespace parasim
