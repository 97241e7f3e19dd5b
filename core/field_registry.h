// The field registry: every user-settable number of a GPU profile, a cluster
// and a job, with its key path (as in the YAML files), unit, valid range and
// accessors. It is the one place that the loaders' range checks, Validate(),
// `whatif --vary`, uncertainty sampling and the calibrated-profile writer
// read, so a range is written once. The software stack's table lives in
// cost_model/stack_field_registry.h (core does not know the stack).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_spec.h"
#include "core/error.h"
#include "core/gpu_profile.h"
#include "core/job_spec.h"

namespace parasim {

// How a field's text is read and written: physical quantities carry a unit
// ("3.35 TB/s"); counts are integers; ratios are plain numbers; flags are
// true/false (1/0 through the accessors).
enum class FieldUnit { kCount, kRatio, kFlag, kBytes, kBytesPerSecond, kFlopsPerSecond, kSeconds, kWatts };

// The unit's SI name as printed in messages ("B/s"); "" for counts and ratios.
const char* UnitName(FieldUnit unit);

// An upper bound at or above this means "none" (messages say ">= min").
inline constexpr double kNoMax = 1e300;

// A closed, open or half-open interval; `integer` also asks for a whole number.
struct FieldRange {
  double min = 0;
  double max = 0;
  bool min_open = false;   // min itself excluded (positive quantities: (0, max])
  bool max_open = false;
  bool integer = false;

  // False for NaN and infinities, whatever the bounds.
  bool Contains(double v) const;
  // "in (0, 1e+18] FLOP/s", ">= 1" (no upper bound below kNoMax).
  std::string Describe(FieldUnit unit) const;
};

template <class Spec>
struct FieldEntry {
  std::string key;     // key path in the YAML file: "memory.bandwidth"
  std::string alias;   // flat name in a cluster's `overrides:` and for --vary ("" = the key)
  FieldUnit unit = FieldUnit::kRatio;
  FieldRange range;
  bool required = false;  // a file must give it (else the struct's default stands)
  std::string meaning;
  // Relative 1-sigma uncertainty where a source states one; nullopt = none given.
  std::optional<double> uncertainty;
  std::function<double(const Spec&)> get;
  std::function<void(Spec&, double)> set;

  const std::string& Name() const { return alias.empty() ? key : alias; }
};

using GpuField = FieldEntry<GpuProfile>;
using ClusterField = FieldEntry<ClusterSpec>;
using JobField = FieldEntry<JobSpec>;

// The tables, in file order.
const std::vector<GpuField>& GpuProfileFields();
const std::vector<ClusterField>& ClusterFields();  // the cluster's own fields; the GPU's are GpuProfileFields
const std::vector<JobField>& JobFields();

// The entry whose key or alias is `name`; nullptr when none.
template <class Spec>
const FieldEntry<Spec>* FindField(const std::vector<FieldEntry<Spec>>& fields, std::string_view name) {
  for (const auto& f : fields) {
    if (f.key == name || (!f.alias.empty() && f.alias == name)) return &f;
  }
  return nullptr;
}

// Reads a field's text in its unit ("700 W", "8", "0.85", "true"). Throws
// InvalidInput naming `where` for text that is not a finite value of the unit.
// No range check: see RangeProblem.
double ParseFieldValue(FieldUnit unit, const std::string& text, const std::string& where);

// Writes a value so that ParseFieldValue reads the same double back.
std::string FormatFieldValue(FieldUnit unit, double value);

// What is wrong with `value` for this range, or nullopt when it is valid:
// "must be in (0, 1e+06] W, got 0 W".
std::optional<std::string> RangeProblem(const FieldRange& range, FieldUnit unit, double value);

// The cited source of a field: the `sources` entry for its key, else for the
// nearest enclosing key ("peak" for "peak.bf16"); "" when none is cited.
std::string FieldSource(const std::map<std::string, std::string>& sources, const std::string& key);

// Every field out of range, one issue each, keyed by the key path; plus the
// rules that tie fields together (idle power <= tdp, ...). `file` names the
// source for the issues.
std::vector<Issue> ValidateGpuProfile(const GpuProfile& gpu, const std::string& file);
std::vector<Issue> ValidateCluster(const ClusterSpec& cluster, const std::string& file);  // includes its GPU
std::vector<Issue> ValidateJob(const JobSpec& job, const std::string& file);

// Documented size limits (hw_profiles/SCHEMA.md): far above any real system,
// low enough that products of them stay exact in 64 bits and doubles.
inline constexpr double kMaxTotalGpus = 1e6;

}  // namespace parasim
