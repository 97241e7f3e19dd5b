// cost_model builds a Report's JSON with nlohmann (cost_model/report_json.h);
// the facade hands reports to the CLI as Values (facade/value.h). This
// converts, keeping each number's kind (integer or double) so the CLI's writer
// prints the same bytes. Not installed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "facade/value.h"

namespace parasim {

Value JsonToValue(const nlohmann::ordered_json& json);

}  // namespace parasim
