#include "facade/plot_data.h"

#include "planner/plot_data.h"

namespace parasim {

std::string GnuplotQuote(const std::string& text) { return planner::GnuplotQuote(text); }

}  // namespace parasim
