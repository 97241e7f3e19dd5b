// The modules build some JSON with nlohmann; the facade hands reports to the
// CLI as Values (facade/value.h). These convert, keeping each number's kind
// (integer or double) so the CLI's writer prints the same bytes. Not installed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "facade/value.h"

namespace parasim {

Value JsonToValue(const nlohmann::ordered_json& json);
// `text` is JSON a module wrote (never user input).
Value JsonTextToValue(const std::string& text);

}  // namespace parasim
