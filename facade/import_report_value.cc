#include "facade/import_report_value.h"

#include <string>
#include <vector>

namespace parasim {
namespace {

using calibrate::AlphaBetaFit;
using calibrate::DeviceStep;
using calibrate::StepTraceSummary;
using calibrate::TraceStep;

// The fit's parameters only when it is usable (the status says why not).
Value FitValue(const AlphaBetaFit& f) {
  Value j = Value::Object();
  j.Set("status", ToString(f.summary.status));
  j.Set("message", f.summary.message);
  j.Set("points", f.points);
  if (f.summary.usable()) {
    j.Set("alpha_s", f.alpha.si());
    j.Set("beta_Bps", f.beta.si());
    j.Set("bus_beta_Bps", f.bus_beta.si());
    j.Set("rms_rel_error", f.summary.rms_rel_error);
  }
  return j;
}

Value TableValue(const calibrate::FittedNcclTable& fitted, bool in_place) {
  const calibrate::NcclTestsTable& t = fitted.table;
  Value j = Value::Object();
  j.Set("file", t.file);
  j.Set("collective", t.collective);
  j.Set("ranks", t.ranks);
  j.Set("nccl_version", t.nccl_version);
  j.Set("bus_factor", t.BusFactor());
  j.Set("fit", FitValue(fitted.fit));
  j.Set("rows", ArrayOf(t.rows, [in_place](const calibrate::NcclTestsRow& r) {
          const calibrate::NcclTestsResult& m = in_place ? r.in_place : r.out_of_place;
          return Value::Record({{"size_bytes", r.size.si()},
                                {"time_s", m.time.si()},
                                {"algbw_Bps", m.algbw.si()},
                                {"busbw_Bps", m.busbw.si()},
                                {"wrong", m.wrong}});
        }));
  return j;
}

Value DeviceValue(const DeviceStep& d, const StepTraceSummary& s) {
  Value j = Value::Object();
  j.Set("device", d.device);
  const auto name = s.device_names.find(d.device);
  j.Set("name", name != s.device_names.end() ? name->second : "");
  j.Set("steps", d.steps);
  j.Set("streams", d.streams);
  j.Set("first_start_s", d.first_start.si());
  j.Set("last_end_s", d.last_end.si());
  j.Set("span_s", d.span.si());
  j.Set("busy_s", d.busy.si());
  j.Set("compute_s", d.compute.si());
  j.Set("comm_s", d.comm.si());
  j.Set("exposed_comm_s", d.exposed_comm.si());
  j.Set("overlapped_comm_s", d.overlapped_comm.si());
  j.Set("idle_s", d.idle.si());
  // Same-name kernels beside NCCL over alone (0: nothing compared).
  j.Set("matmul_slowdown_beside_nccl", d.matmul_slowdown.Factor());
  j.Set("memory_slowdown_beside_nccl", d.memory_slowdown.Factor());
  Value classes = Value::Object();
  for (int c = 0; c < calibrate::kNumKernelClasses; ++c) {
    const calibrate::ClassTime& t = d.by_class[c];
    classes.Set(ToString(static_cast<calibrate::KernelClass>(c)),
                Value::Record({{"kernels", t.kernels}, {"sum_s", t.sum.si()}, {"busy_s", t.busy.si()}}));
  }
  j.Set("by_class", std::move(classes));
  Value colls = Value::Object();
  for (int k = 0; k < calibrate::kNumCollectiveKinds; ++k) {
    const calibrate::CollectiveTime& t = d.by_collective[k];
    colls.Set(ToString(static_cast<calibrate::CollectiveKind>(k)),
              Value::Record({{"kernels", t.kernels},
                             {"sum_s", t.sum.si()},
                             {"busy_s", t.busy.si()},
                             {"exposed_s", t.exposed.si()}}));
  }
  j.Set("by_collective", std::move(colls));
  return j;
}

Value StepValue(const TraceStep& step, const StepTraceSummary& s) {
  Value j = Value::Object();
  j.Set("step", step.number);
  j.Set("window_s", step.window.si());
  j.Set("host", Value::Record({{"launches", step.host.launches},
                               {"launch_mean_s", step.host.launch_mean.si()},
                               {"runtime_calls", step.host.runtime_calls},
                               {"runtime_sum_s", step.host.runtime_sum.si()}}));
  j.Set("devices", ArrayOf(step.devices, [&s](const DeviceStep& d) { return DeviceValue(d, s); }));
  return j;
}

}  // namespace

Value NcclTestsImportToValue(const calibrate::NcclTestsImport& report) {
  return Value::Record({{"tables", ArrayOf(report.tables, [&report](const calibrate::FittedNcclTable& t) {
                           return TableValue(t, report.in_place);
                         })}});
}

Value TraceSummaryToValue(const StepTraceSummary& s) {
  Value j = Value::Object();
  j.Set("file", s.file);
  j.Set("format", ToString(s.format));
  j.Set("rank", s.rank);
  j.Set("world_size", s.world_size);
  j.Set("step_source", ToString(s.step_source));
  j.Set("steps_found", s.steps_found);
  j.Set("steps_skipped", s.steps_skipped);
  j.Set("steps_used", s.steps.size());
  j.Set("gpu_events", s.gpu_events);
  j.Set("unattributed_gpu_events", s.unattributed_gpu_events);
  j.Set("notes", ArrayOf(s.notes, [](const std::string& n) { return Value(n); }));
  j.Set("mean", StepValue(s.mean, s));
  j.Set("steps", ArrayOf(s.steps, [&s](const TraceStep& step) { return StepValue(step, s); }));
  return j;
}

}  // namespace parasim
