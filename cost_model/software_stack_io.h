// Software-stack files (hw_profiles/SCHEMA.md, "Software-stack files"): a
// stack as YAML that starts from a built-in preset (`base`) and overrides any
// field of SoftwareStack under the struct's own names, so that calibration can
// write a fitted stack and every command can read it (`--stack FILE`). The
// files are written by the facade (StackProfileDocument, facade/fitted_profiles.h):
// `calibrate fit-stack`, `profiles stack` and a preset's provenance hash.
//
//   SoftwareStackFile f = ReadSoftwareStackFile("my-stack.yaml");
//   f.stack.kernel_gap_s = fitted_gap;
//   f.sources["kernel_gap_s"] = "profiler trace of one step";
#pragma once

#include <map>
#include <string>

#include "cost_model/software_stack.h"

namespace parasim {

struct SoftwareStackFile {
  std::string base;     // the preset the file starts from
  SoftwareStack stack;  // base with the file's fields applied
  // Field (`kernel_gap_s`, `attention.hopper.forward_efficiency`) -> where
  // its value comes from; kept so that a rewrite carries it along.
  std::map<std::string, std::string> sources;
};

// Parses a stack file. Every problem of the file (unknown keys, wrong types,
// negative or non-finite numbers, kernel counts < 1, efficiencies outside
// 0-1, an unknown or missing base, a missing schema_version) is collected and
// thrown as one parasim::Error naming the file, the key path and line:column.
// `file` names the text in messages; a missing `name` defaults to its stem.
SoftwareStackFile ParseSoftwareStackYaml(const std::string& text, const std::string& file);
SoftwareStackFile ReadSoftwareStackFile(const std::string& path);
SoftwareStack LoadSoftwareStackFile(const std::string& path);

// True for text that names a stack file rather than a preset: it ends in
// .yaml or .yml, or an existing file has that name.
bool IsSoftwareStackPath(const std::string& name_or_path);

}  // namespace parasim
