// NaN and infinities never reach an output: every report is checked where it
// is built (tier A, the simulator, the planner's results). A non-finite
// number there is a bug (validation keeps user numbers finite), so it throws
// InternalError naming the field instead of printing "nan".
#pragma once

#include <string>

#include "cost_model/report.h"

namespace parasim {

// Throws InternalError "<where>: report field '<name>' is <value>" for the
// first non-finite number of `rep`, breakdowns included.
void CheckReportFinite(const Report& rep, const std::string& where);

// The same for one number outside a Report (planner values, goodput).
void CheckFinite(double value, const std::string& field, const std::string& where);

}  // namespace parasim
