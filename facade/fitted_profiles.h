// What `calibrate fit` and `calibrate fit-stack` fitted, as values: the
// profile file (a Value tree the CLI writes as YAML, with the comment that
// heads the file) and the fit report (a Value the CLI prints as a table or
// JSON). The files read back through LoadGpuProfile, ReadCollectiveProfile
// and ReadSoftwareStackFile; numbers go out in the shortest form that reads
// back bit for bit. Not installed.
#pragma once

#include <map>
#include <string>

#include "calibrate/profile_fitting.h"
#include "facade/value.h"

namespace parasim {

struct ProfileDocument {
  std::string comment;   // the file's leading comment, one line per '\n'
  Value body;
};

// A GPU profile in the hw_profiles schema: every registry field
// (core/field_registry.h) under its section, dimensioned values as
// "<%.17g> <unit>" strings, ratios and counts as numbers, sources last.
ProfileDocument GpuProfileDocument(const GpuProfile& gpu);

// A collective (fabric) profile: base, every fitted parameter (SI), fitted_to
// and sources.
ProfileDocument CollectiveProfileDocument(const calibrate::CollectiveProfile& profile);

// A complete software-stack file: every field (each with its meaning as a
// comment), nccl_version, the attention kernels per architecture, sources.
// `base` must name a preset.
ProfileDocument StackProfileDocument(const SoftwareStack& stack, const std::map<std::string, std::string>& sources,
                                     const std::string& base);

// The fit reports: {"fit", "summary", "parameters": [rows of parameter,
// status, base and fitted value, source measurements, residual], "residuals":
// [rows of the model against each measurement or group], "notes": [text]}.
Value GpuFitReport(const calibrate::GpuProfileFit& fit);
Value CollectiveFitReport(const calibrate::CollectiveProfileFit& fit);
Value StackFitReport(const calibrate::StackProfileFit& fit);

}  // namespace parasim
