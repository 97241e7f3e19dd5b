// Provenance of a CLI report (DESIGN.md §5): the CLI's loaders record each
// input they read (role, name, SHA-256), and WriteOutput opens every JSON
// report with `schema_version`, `parasim_version` and `inputs`. One command
// runs per process, so the record is process-wide; only the CLI records,
// the facade's own queries keep none.
#pragma once

#include <string>

#include "core/provenance.h"

namespace parasim {

// Records (or replaces) the input of `role`.
void RecordInput(InputRecord input);
// A file's hash when `name_or_path` is a readable file, else the embedded
// preset `preset_relative` ("clusters/dgx-h100.yaml"; "" = none).
void RecordFileOrPreset(const std::string& role, const std::string& name_or_path,
                        const std::string& preset_relative);

// The JSON members (indent 2, one per line, no braces) that begin every
// JSON report: schema and parasim versions, then the inputs by role.
std::string ProvenanceMembers();

}  // namespace parasim
