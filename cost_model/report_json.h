// One report as a JSON value (the DESIGN.md §5 contract), for writers that
// place it inside a larger document: they insert the value instead of
// printing text and parsing it back. ReportToJson (report_format.h) prints it.
#pragma once

#include <nlohmann/json.hpp>

#include "cost_model/report.h"

namespace parasim {

nlohmann::ordered_json ReportToJsonValue(const Report& report);

}  // namespace parasim
