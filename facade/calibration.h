// `parasim calibrate` through the facade (not installed): imports of
// nccl-tests logs and profiler traces, profile fits (GPU, collective,
// software stack; as values, facade/fitted_profiles.h) and the CUDA
// programs, so cli/ only parses flags, calls and writes. The work lives in calibrate/ (import_reports.h,
// profile_fitting.h, device_programs.h); what needs the spec inputs or the
// simulator is here.
#pragma once

#include <string>

#include "calibrate/device_programs.h"
#include "calibrate/import_reports.h"
#include "calibrate/profile_fitting.h"
#include "facade/command_report.h"
#include "facade/fitted_profiles.h"
#include "facade/spec_inputs.h"

namespace parasim {

using calibrate::CollectiveImportOptions;
using calibrate::ImportCollectiveMeasurements;
using calibrate::NcclBenchArgs;
using calibrate::NcclBenchOptions;
using calibrate::NcclTestsImportOptions;
using calibrate::ProfileFitOptions;
using calibrate::RequireCudaBuild;
using calibrate::RunMicrobenchmarks;
using calibrate::RunNcclBench;
using calibrate::RunReferenceStep;
using calibrate::StackFitOptions;
using calibrate::TraceImportOptions;

// `import-nccl-tests`: alpha-beta per table of the logs; `import-trace`: the
// steps of a profiled trace. The report in `format` (JSON or a table).
CommandReport ImportNcclTests(const NcclTestsImportOptions& opt, ReportFormat format);
CommandReport ImportTrace(const TraceImportOptions& opt, ReportFormat format);

// A fitted profile: the file to write (the CLI writes it as YAML) and the
// fit report (printed as a table or JSON, facade/fitted_profiles.h).
struct FittedProfile {
  ProfileDocument profile;
  Value report;
};

// `calibrate fit`: a GPU or a collective profile, by the measurements given
// (calibrate::FitProfile).
FittedProfile FitProfileToMeasurements(const ProfileFitOptions& opt);

// The spec's stack refitted to a profiled step (calibrate::FitStack).
FittedProfile FitStackToTrace(const StackFitOptions& opt, const SpecInputs& spec);

// The schedule of one step of `config` (`simulate --export-schedule`'s
// JSON) for the reference-step program to replay.
std::string StepScheduleJson(const SpecInputs& spec, const std::string& config);

}  // namespace parasim
