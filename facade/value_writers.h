// A Value as JSON or YAML text: the CLI renders reports with these
// (cli/output/writers.h), and the facade hashes a preset stack as the very
// file `parasim profiles stack` prints. Numbers in core/number_format.h's
// shortest round-trip form. Not installed.
#pragma once

#include <string>

#include "facade/value.h"

namespace parasim {

// JSON with a 2-space indent, byte-identical to nlohmann::json::dump(2); no
// trailing newline.
std::string WriteJson(const Value& value);

// Block-style YAML, a trailing newline: `comment` first (each of its lines
// as "# line"), members' comments (Value::Comment) after them at column 40;
// string values double-quoted, keys bare unless YAML would read them as
// something else; numbers in FormatShortest's form (reads back bit for bit).
std::string WriteYaml(const Value& value, const std::string& comment = "");

}  // namespace parasim
