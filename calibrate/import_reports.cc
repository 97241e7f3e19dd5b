#include "calibrate/import_reports.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "calibrate/collective_measurements.h"
#include "calibrate/nccl_bench_data.h"
#include "core/check.h"
#include "core/error.h"
#include "core/number_format.h"
#include "core/unit_parse.h"

namespace parasim::calibrate {
namespace {

std::string Fixed(double v, int digits) { return FormatFixed(v, digits); }

std::string Ms(Seconds t) { return Fixed(t.si() * 1e3, 3); }

// A count that is a mean over steps: an integer when it is one.
std::string Count(double v) { return v == std::floor(v) ? Fixed(v, 0) : Fixed(v, 1); }

std::string TraceTable(const StepTraceSummary& s) {
  std::ostringstream os;
  os << s.file << ": " << ToString(s.format) << " trace";
  if (s.rank >= 0) os << ", rank " << s.rank << " of " << s.world_size;
  os << "\n";
  os << "steps: " << ToString(s.step_source) << ", " << s.steps_found << " found, " << s.steps_skipped
     << " skipped, " << s.steps.size() << " used";
  if (!s.steps.empty() && s.steps.front().number >= 0) {
    os << " (#" << s.steps.front().number;
    if (s.steps.size() > 1) os << "-#" << s.steps.back().number;
    os << ")";
  }
  os << "; " << s.gpu_events << " GPU events\n";
  for (const std::string& n : s.notes) os << "note: " << n << "\n";
  const TraceStep& m = s.mean;
  os << "mean step: window " << Ms(m.window) << " ms; host " << Count(m.host.launches) << " kernel launches (mean "
     << Fixed(m.host.launch_mean.si() * 1e6, 2) << " us), " << Count(m.host.runtime_calls) << " runtime calls ("
     << Ms(m.host.runtime_sum) << " ms)\n";
  for (const DeviceStep& d : m.devices) {
    auto name = s.device_names.find(d.device);
    os << "device " << d.device << (name != s.device_names.end() ? " (" + name->second + ")" : "") << ": mean over "
       << Count(d.steps) << " steps, " << Count(d.streams) << " streams\n";
    const double pct = d.span.si() > 0 ? 100 * (d.exposed_comm / d.span) : 0;
    os << "  span " << Ms(d.span) << " ms, busy " << Ms(d.busy) << " ms, idle " << Ms(d.idle) << " ms\n";
    os << "  compute " << Ms(d.compute) << " ms, comm " << Ms(d.comm) << " ms, exposed comm " << Ms(d.exposed_comm)
       << " ms (" << Fixed(pct, 1) << "% of span), overlapped comm " << Ms(d.overlapped_comm) << " ms\n";
    if (d.matmul_slowdown.weight > 0 || d.memory_slowdown.weight > 0)
      os << "  beside NCCL, same-name kernels run x" << Fixed(d.matmul_slowdown.Factor(), 3) << " (gemm, attention), x"
         << Fixed(d.memory_slowdown.Factor(), 3) << " (elementwise) of their time alone (0: not compared)\n";
    os << "  " << std::left << std::setw(20) << "class" << std::right << std::setw(10) << "kernels" << std::setw(12)
       << "sum (ms)" << std::setw(12) << "busy (ms)" << "\n";
    for (int c = 0; c < kNumKernelClasses; ++c) {
      const ClassTime& t = d.by_class[c];
      if (t.kernels == 0) continue;
      os << "  " << std::left << std::setw(20) << ToString(static_cast<KernelClass>(c)) << std::right << std::setw(10)
         << Count(t.kernels) << std::setw(12) << Ms(t.sum) << std::setw(12) << Ms(t.busy) << "\n";
    }
    if (d.by_class[static_cast<int>(KernelClass::kNccl)].kernels == 0) continue;
    os << "  " << std::left << std::setw(20) << "collective" << std::right << std::setw(10) << "kernels"
       << std::setw(12) << "sum (ms)" << std::setw(12) << "busy (ms)" << std::setw(14) << "exposed (ms)" << "\n";
    for (int k = 0; k < kNumCollectiveKinds; ++k) {
      const CollectiveTime& t = d.by_collective[k];
      if (t.kernels == 0) continue;
      os << "  " << std::left << std::setw(20) << ToString(static_cast<CollectiveKind>(k)) << std::right
         << std::setw(10) << Count(t.kernels) << std::setw(12) << Ms(t.sum) << std::setw(12) << Ms(t.busy)
         << std::setw(14) << Ms(t.exposed) << "\n";
    }
  }
  return os.str();
}

}  // namespace

NcclTestsImport NcclTestsReport(const NcclTestsImportOptions& opt) {
  AlphaBetaOptions fit_opt;
  fit_opt.min_size = ParseBytes(opt.min_size, "--min-size");
  fit_opt.max_size = ParseBytes(opt.max_size, "--max-size");
  fit_opt.in_place = opt.in_place;
  NcclTestsImport out;
  out.in_place = opt.in_place;
  std::ostringstream os;
  for (const std::string& log : opt.logs) {
    for (const NcclTestsTable& t : LoadCollectiveMeasurements(log)) {
      const AlphaBetaFit f = FitAlphaBeta(t, fit_opt);
      out.tables.push_back({t, f});

      os << t.file << ": " << t.collective << ", " << t.ranks << " ranks"
         << (t.nccl_version.empty() ? "" : ", " + t.nccl_version) << "\n";
      if (f.summary.usable()) {
        os << "  alpha " << Fixed(f.alpha.si() * 1e6, 2) << " us, beta " << Fixed(f.beta.si() * 1e-9, 1)
           << " GB/s algbw (" << Fixed(f.bus_beta.si() * 1e-9, 1) << " GB/s busbw), " << f.points
           << " rows, rms error " << Fixed(f.summary.rms_rel_error * 100, 1) << "% [" << ToString(f.summary.status)
           << "]\n";
      } else {
        os << "  no alpha-beta fit: " << ToString(f.summary.status) << ": " << f.summary.message << "\n";
      }
      os << "  " << std::right << std::setw(14) << "size (B)" << std::setw(12) << "time (us)" << std::setw(14)
         << "algbw (GB/s)" << std::setw(14) << "busbw (GB/s)" << std::setw(12) << "fit (us)" << "\n";
      for (const NcclTestsRow& r : t.rows) {
        const NcclTestsResult& m = opt.in_place ? r.in_place : r.out_of_place;
        const double model = f.summary.usable() ? (f.alpha.si() + r.size.si() / f.beta.si()) * 1e6 : 0.0;
        os << "  " << std::setw(14) << static_cast<long long>(r.size.si()) << std::setw(12)
           << Fixed(m.time.si() * 1e6, 2) << std::setw(14) << Fixed(m.algbw.si() * 1e-9, 2) << std::setw(14)
           << Fixed(m.busbw.si() * 1e-9, 2) << std::setw(12) << (f.summary.usable() ? Fixed(model, 2) : "-")
           << "\n";
      }
    }
  }
  out.table = os.str();
  return out;
}

TraceImport TraceReport(const TraceImportOptions& opt) {
  TraceReadOptions read;
  read.skip_steps = opt.skip_steps;
  if (opt.device >= 0) read.device = opt.device;
  TraceImport out;
  out.summary = ReadKinetoTrace(opt.trace, read);
  out.table = TraceTable(out.summary);
  return out;
}

std::string ImportCollectiveMeasurements(const CollectiveImportOptions& opt, std::ostream& log) {
  if (opt.logs.empty()) throw InvalidInput("", "--nccl-tests", "name at least one nccl-tests log");
  CollectiveMeasurementSet all;
  for (const auto& file : opt.logs) {
    const CollectiveMeasurementSet one = ImportNcclTestsFile(file, {opt.nodes, opt.gpus_per_node, opt.in_place});
    all.rows.insert(all.rows.end(), one.rows.begin(), one.rows.end());
    log << "parasim: " << file << ": " << one.rows.size() << " rows";
    if (!one.rows.empty())
      log << " (" << one.rows.front().ranks << " ranks on " << one.rows.front().nodes << " nodes x "
          << one.rows.front().gpus_per_node << ")";
    log << "\n";
  }
  return CollectiveMeasurementsToJson(all);
}

}  // namespace parasim::calibrate
