// The JSON reports of `calibrate import-nccl-tests` ({"tables": [...]}: each
// table's rows and alpha-beta fit) and `calibrate import-trace` (the trace's
// steps, their mean, per device and kernel class), built as Values from what
// calibrate/ read. Counts are integers, measures doubles. Not installed.
#pragma once

#include "calibrate/import_reports.h"
#include "facade/value.h"

namespace parasim {

Value NcclTestsImportToValue(const calibrate::NcclTestsImport& report);
Value TraceSummaryToValue(const calibrate::StepTraceSummary& summary);

}  // namespace parasim
