// `parasim calibrate run | import | import-nccl-tests | import-trace | fit | fit-stack`:
// run the CUDA microbenchmarks (CUDA builds only), fit α-β to nccl-tests
// logs, summarize a profiled training step, fit a GPU profile to
// microbenchmark measurements, and (cmd_calibrate_fit_stack.cc) refit a
// software stack to a profiled step.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "calibrate/alpha_beta_fit.h"
#include "calibrate/calibration.h"
#include "calibrate/collective_fit.h"
#include "calibrate/collective_measurements.h"
#include "calibrate/collective_profile.h"
#include "calibrate/kineto_trace.h"
#include "calibrate/nccl_bench_data.h"
#include "calibrate/nccl_tests_log.h"
#include "cli/cmd_calibrate_device.h"
#include "cli/cmd_calibrate_fit_stack.h"
#include "cli/command.h"
#include "core/check.h"
#include "core/error.h"
#include "core/loaders.h"
#include "core/number_format.h"
#include "core/unit_parse.h"

namespace parasim::cli {
namespace {

using namespace parasim::calibrate;

// Environment failures (no GPU, a device error) exit with 3; a build without
// CUDA lacks the feature, which is a usage error (2), docs/exit-codes.md.
[[noreturn]] void EnvironmentFailure(const std::string& message) { throw EnvironmentError(message); }

std::string Fixed(double v, int digits) { return FormatFixed(v, digits); }

// ---- calibrate run --------------------------------------------------------

void RunMicrobenchmarks(const std::string& out_dir, bool quick) {
#ifndef PARASIM_HAVE_CUDA
  (void)out_dir;
  (void)quick;
  throw InvalidInput(
      "", "calibrate run",
      "built without CUDA (no CUDA toolkit and NCCL at configure time); build on a machine with "
      "them, or run calibrate/cuda/run_all.sh DIR on a GPU machine and then `parasim calibrate fit --measurements "
      "DIR`");
#else
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) EnvironmentFailure("calibrate run: cannot locate the parasim executable (/proc/self/exe)");
  const fs::path bin_dir = self.parent_path() / "calibrate";
  fs::create_directories(out_dir, ec);
  if (ec) throw InvalidInput(out_dir, "--out", StrCat("cannot create the directory: ", ec.message()));
  struct Program {
    const char* binary;
    const char* output;
    std::string args;
  };
  const std::string q = quick ? " --quick" : "";
  const Program programs[] = {
      {"parasim_launch_overhead", "launch_overhead.json", ""},
      {"parasim_power_states", "power_states.json", q},
      {"parasim_hbm_bandwidth", "hbm_bandwidth.json", q},
      {"parasim_gemm_sweep", "gemm_sweep.json", q},
      {"parasim_gemm_sweep", "gemm_sweep_sustained.json", " --quick --preheat-s 10 --min-time-ms 1000"},
  };
  for (const Program& p : programs) {
    const fs::path exe = bin_dir / p.binary;
    if (!fs::exists(exe)) EnvironmentFailure(StrCat("calibrate run: ", exe.string(), " is missing (build it)"));
    const fs::path out = fs::path(out_dir) / p.output;
    const std::string cmd = StrCat("'", exe.string(), "' -o '", out.string(), "'", p.args);
    std::cerr << "parasim: running " << p.binary << p.args << "\n";
    const int rc = std::system(cmd.c_str());
    const int status = rc == -1 ? -1 : WEXITSTATUS(rc);
    if (status == 3) EnvironmentFailure(StrCat("calibrate run: ", p.binary, " found no usable GPU"));
    if (status != 0) throw InternalError(StrCat("calibrate run: ", p.binary, " failed with exit code ", status));
  }
  std::cerr << "parasim: measurements in " << out_dir << "; fit with `parasim calibrate fit --measurements "
            << out_dir << "`\n";
#endif
}

// ---- calibrate import-nccl-tests -------------------------------------------

struct ImportOptions {
  std::vector<std::string> logs;
  std::string min_size = "1 B", max_size = "1000 TB";
  bool in_place = false;
};

nlohmann::ordered_json FitJson(const AlphaBetaFit& f) {
  nlohmann::ordered_json j;
  j["status"] = ToString(f.summary.status);
  j["message"] = f.summary.message;
  j["points"] = f.points;
  if (f.summary.usable()) {
    j["alpha_s"] = f.alpha.si();
    j["beta_Bps"] = f.beta.si();
    j["bus_beta_Bps"] = f.bus_beta.si();
    j["rms_rel_error"] = f.summary.rms_rel_error;
  }
  return j;
}

void ImportNcclTests(const ImportOptions& opt, const OutputOptions& out) {
  AlphaBetaOptions fit_opt;
  fit_opt.min_size = ParseBytes(opt.min_size, "--min-size");
  fit_opt.max_size = ParseBytes(opt.max_size, "--max-size");
  fit_opt.in_place = opt.in_place;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::ostringstream os;
  for (const std::string& log : opt.logs) {
    for (const NcclTestsTable& t : LoadCollectiveMeasurements(log)) {
      const AlphaBetaFit f = FitAlphaBeta(t, fit_opt);
      nlohmann::ordered_json j;
      j["file"] = t.file;
      j["collective"] = t.collective;
      j["ranks"] = t.ranks;
      j["nccl_version"] = t.nccl_version;
      j["bus_factor"] = t.BusFactor();
      j["fit"] = FitJson(f);
      j["rows"] = nlohmann::ordered_json::array();
      for (const NcclTestsRow& r : t.rows) {
        const NcclTestsResult& m = opt.in_place ? r.in_place : r.out_of_place;
        j["rows"].push_back({{"size_bytes", r.size.si()},
                             {"time_s", m.time.si()},
                             {"algbw_Bps", m.algbw.si()},
                             {"busbw_Bps", m.busbw.si()},
                             {"wrong", m.wrong}});
      }
      all.push_back(j);

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
  if (out.Parsed() == Format::kJson) {
    WriteOutput(out, nlohmann::ordered_json{{"tables", all}}.dump(2) + "\n");
  } else {
    WriteOutput(out, os.str());
  }
}

// ---- calibrate import-trace ------------------------------------------------

struct TraceOptions {
  std::string trace;
  int skip_steps = 0;
  int device = -1;  // -1: every device
};

nlohmann::ordered_json DeviceJson(const DeviceStep& d, const StepTraceSummary& s) {
  nlohmann::ordered_json j;
  j["device"] = d.device;
  auto name = s.device_names.find(d.device);
  j["name"] = name != s.device_names.end() ? name->second : "";
  j["steps"] = d.steps;
  j["streams"] = d.streams;
  j["first_start_s"] = d.first_start.si();
  j["last_end_s"] = d.last_end.si();
  j["span_s"] = d.span.si();
  j["busy_s"] = d.busy.si();
  j["compute_s"] = d.compute.si();
  j["comm_s"] = d.comm.si();
  j["exposed_comm_s"] = d.exposed_comm.si();
  j["overlapped_comm_s"] = d.overlapped_comm.si();
  j["idle_s"] = d.idle.si();
  // Same-name kernels beside NCCL over alone (0: nothing compared).
  j["matmul_slowdown_beside_nccl"] = d.matmul_slowdown.Factor();
  j["memory_slowdown_beside_nccl"] = d.memory_slowdown.Factor();
  nlohmann::ordered_json classes;
  for (int c = 0; c < kNumKernelClasses; ++c) {
    const ClassTime& t = d.by_class[c];
    classes[ToString(static_cast<KernelClass>(c))] = {
        {"kernels", t.kernels}, {"sum_s", t.sum.si()}, {"busy_s", t.busy.si()}};
  }
  j["by_class"] = classes;
  nlohmann::ordered_json colls;
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    const CollectiveTime& t = d.by_collective[k];
    colls[ToString(static_cast<CollectiveKind>(k))] = {
        {"kernels", t.kernels}, {"sum_s", t.sum.si()}, {"busy_s", t.busy.si()}, {"exposed_s", t.exposed.si()}};
  }
  j["by_collective"] = colls;
  return j;
}

nlohmann::ordered_json StepJson(const TraceStep& step, const StepTraceSummary& s) {
  nlohmann::ordered_json j;
  j["step"] = step.number;
  j["window_s"] = step.window.si();
  j["host"] = {{"launches", step.host.launches},
               {"launch_mean_s", step.host.launch_mean.si()},
               {"runtime_calls", step.host.runtime_calls},
               {"runtime_sum_s", step.host.runtime_sum.si()}};
  j["devices"] = nlohmann::ordered_json::array();
  for (const DeviceStep& d : step.devices) j["devices"].push_back(DeviceJson(d, s));
  return j;
}

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

void ImportTrace(const TraceOptions& opt, const OutputOptions& out) {
  TraceReadOptions read;
  read.skip_steps = opt.skip_steps;
  if (opt.device >= 0) read.device = opt.device;
  const StepTraceSummary s = ReadKinetoTrace(opt.trace, read);
  if (out.Parsed() != Format::kJson) return WriteOutput(out, TraceTable(s));
  nlohmann::ordered_json j;
  j["file"] = s.file;
  j["format"] = ToString(s.format);
  j["rank"] = s.rank;
  j["world_size"] = s.world_size;
  j["step_source"] = ToString(s.step_source);
  j["steps_found"] = s.steps_found;
  j["steps_skipped"] = s.steps_skipped;
  j["steps_used"] = s.steps.size();
  j["gpu_events"] = s.gpu_events;
  j["unattributed_gpu_events"] = s.unattributed_gpu_events;
  j["notes"] = s.notes;
  j["mean"] = StepJson(s.mean, s);
  j["steps"] = nlohmann::ordered_json::array();
  for (const TraceStep& step : s.steps) j["steps"].push_back(StepJson(step, s));
  WriteOutput(out, j.dump(2) + "\n");
}

// ---- calibrate fit ---------------------------------------------------------

struct FitOptions {
  std::string profile = "h100-sxm";
  std::vector<std::string> files;   // measurement JSON files (fit dispatches on their kind)
  std::string measurements;
  std::string name;
};

std::string FitReport(const CalibrationFits& f, const GpuProfile& base, const GpuProfile& out) {
  std::ostringstream os;
  os << "calibrated " << base.name << " -> " << out.name << " from " << f.device << " (" << f.date << ")\n";
  auto line = [&](const std::string& what, const FitSummary& s) {
    os << "  " << std::left << std::setw(22) << what << std::setw(18) << ToString(s.status) << s.message << "\n";
  };
  if (f.gemm) {
    line("gemm_max_efficiency", f.gemm->summary);
    os << "    " << base.gemm_max_efficiency << " -> " << out.gemm_max_efficiency << " (best measured "
       << Fixed(f.gemm->best_efficiency, 3) << " at " << f.gemm->best_shape << ")\n";
    const GemmFit& shown = f.gemm_burst ? *f.gemm_burst : *f.gemm;
    os << "    cost-model residual by tp (" << (f.gemm_burst ? "burst sweep" : "sweep")
       << ", mean ln(model/measured), rms):";
    for (const auto& [tp, e] : shown.by_tp)
      os << " tp" << tp << " " << Fixed(e.mean_log_error, 3) << "/" << Fixed(e.rms_rel_error, 3);
    os << "\n";
    if (f.gemm_burst)
      os << "    burst sweep alone would give " << Fixed(f.gemm_burst->gemm_max_efficiency, 4) << " over "
         << f.gemm_burst->points << " GEMMs, rms relative time error "
         << Fixed(f.gemm_burst->summary.rms_rel_error, 3) << "\n";
  }
  if (f.gemm_shape) {
    const GemmShapeFit& s = *f.gemm_shape;
    line("gemm shape model", s.summary);
    os << "    eta = g k/(k+k0) mn/(mn+c): g " << Fixed(s.params.g, 4) << ", k0 " << Fixed(s.params.k0, 1) << ", c "
       << Fixed(s.params.c_mn, 0) << "; rms by tp:";
    for (const auto& [tp, e] : s.rms_by_tp) os << " tp" << tp << " " << Fixed(e, 3);
    os << "\n";
  }
  if (f.memory) {
    line("memory_efficiency", f.memory->summary);
    os << "    " << base.memory_efficiency << " -> " << out.memory_efficiency << "\n";
  }
  if (f.power) {
    line("power", f.power->summary);
    os << "    idle " << base.idle_power.si() << " -> " << out.idle_power.si() << " W, matmul_fraction "
       << base.power_matmul_fraction << " -> " << out.power_matmul_fraction << ", memory_fraction "
       << base.power_memory_fraction << " -> " << out.power_memory_fraction << "\n";
  }
  if (f.launch) {
    os << "  launch overhead (not a GPU-profile field; see the software stack): host "
       << Fixed(f.launch->host_enqueue.si() * 1e6, 2) << " us, queued " << Fixed(f.launch->queued.si() * 1e6, 2)
       << " us, graph " << Fixed(f.launch->graph.si() * 1e6, 2) << " us per kernel\n";
  }
  return os.str();
}

void FitProfile(const FitOptions& opt, const OutputOptions& out) {
  if (opt.measurements.empty())
    throw InvalidInput("", "--measurements", "give measurement JSON files or --measurements DIR");
  const GpuProfile base = LoadGpuProfile(opt.profile);
  const MicrobenchData data = LoadMicrobenchDir(opt.measurements);
  const CalibrationFits fits = FitMicrobench(data, base);
  const std::string name = opt.name.empty() ? base.name + "-calibrated" : opt.name;
  const GpuProfile calibrated = ApplyCalibration(base, fits, name);
  WriteOutput(out, GpuProfileYaml(calibrated));
  std::cerr << FitReport(fits, base, calibrated);
}

// ---- calibrate import --nccl-tests / fit MEASUREMENTS.json --cluster ----------

struct CollectiveImportOptions {
  std::vector<std::string> logs;
  int nodes = 0, gpus_per_node = 0;
  bool in_place = false;
};

void ImportCollectives(const CollectiveImportOptions& opt, const OutputOptions& out) {
  if (opt.logs.empty()) throw InvalidInput("", "--nccl-tests", "name at least one nccl-tests log");
  CollectiveMeasurementSet all;
  for (const auto& log : opt.logs) {
    const CollectiveMeasurementSet one = ImportNcclTestsFile(log, {opt.nodes, opt.gpus_per_node, opt.in_place});
    all.rows.insert(all.rows.end(), one.rows.begin(), one.rows.end());
    std::cerr << "parasim: " << log << ": " << one.rows.size() << " rows";
    if (!one.rows.empty())
      std::cerr << " (" << one.rows.front().ranks << " ranks on " << one.rows.front().nodes << " nodes x "
                << one.rows.front().gpus_per_node << ")";
    std::cerr << "\n";
  }
  WriteOutput(out, CollectiveMeasurementsToJson(all));
}

struct CollectiveFitOptions {
  std::vector<std::string> measurements;  // JSON files
  std::string cluster;
  std::string base = "";                   // "" = the cluster's transport preset
  std::string name;
  std::string nccl = "current";            // when a measurement does not record it
};

void FitCollectiveProfile(const CollectiveFitOptions& opt, const OutputOptions& out) {
  if (opt.cluster.empty()) throw InvalidInput("", "--cluster", "collective measurements need --cluster CLUSTER.yaml");
  const ClusterSpec cluster = LoadCluster(opt.cluster);
  const int fallback = ParseNcclVersion(opt.nccl, "--nccl");
  std::vector<CollectiveCase> cases;
  for (const auto& file : opt.measurements)
    for (const auto& m : ReadCollectiveMeasurementsFile(file).rows) cases.push_back(MakeCase(opt.cluster, m, fallback));
  if (cases.empty()) throw InvalidInput("", "measurements", "no measurement rows to fit");
  CollectiveProfile profile;
  profile.base = !opt.base.empty() ? opt.base
                 : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa"
                 : cluster.inter_node.transport == NetworkTransport::kRoce ? "roce" : "infiniband";
  const auto preset = TransportPreset(profile.base);
  const CollectiveModelParams start = preset ? *preset : ReadCollectiveProfile(profile.base).params;
  const CollectiveFitResult fit = FitCollectiveParams(cases, start);
  profile.name = opt.name.empty() ? cluster.name + "-fitted" : opt.name;
  profile.params = fit.params;
  profile.fitted_to = fit.sources;
  std::string srcs;
  for (const auto& s : fit.sources) srcs += (srcs.empty() ? "" : ", ") + s;
  for (const auto& [k, v] : fit.values)
    profile.sources["collective." + k] = StrCat("fitted by parasim calibrate fit to ", fit.cases, " rows of ", srcs,
                                                " on cluster ", cluster.name);
  WriteOutput(out, CollectiveProfileToYaml(profile));
  std::cerr << "parasim: fitted " << fit.values.size() << " parameters to " << fit.cases
            << " rows; mean band-median |log error| " << Fixed(fit.mean_abs_log_error, 4) << "\n";
  for (const auto& c : cases) {
    const CollectiveCost p = PredictCase(c, fit.params);
    std::cerr << "  " << c.m.source << " " << ToString(c.m.op) << " " << c.m.ranks << " ranks " << Fixed(c.m.size.si(), 0)
              << " B: measured busbw " << Fixed(c.m.busbw.si() / 1e9, 2) << " GB/s, fitted "
              << Fixed(p.busbw.si() / 1e9, 2) << " (" << ToString(p.algo) << "/" << ToString(p.protocol) << ")\n";
  }
}

const CommandRegistration kCalibrate{
    "calibrate",
    "Measure a GPU (CUDA builds), import nccl-tests logs and profiler traces, fit a calibrated GPU profile",
    [](CLI::App& cmd) {
      cmd.require_subcommand(1);
      auto out = std::make_shared<OutputOptions>();
      auto run_dir = std::make_shared<std::string>("calibration-out");
      auto quick = std::make_shared<bool>(false);
      auto import = std::make_shared<ImportOptions>();
      auto fit = std::make_shared<FitOptions>();
      auto trace = std::make_shared<TraceOptions>();

      CLI::App* run = cmd.add_subcommand("run", "Run the CUDA microbenchmarks on GPU 0 (GEMM sweep, HBM, launch, power)");
      run->add_option("--out", *run_dir, "Directory for the measurement JSON files")->capture_default_str();
      run->add_flag("--quick", *quick, "A short subset (minutes less)");

      CLI::App* imp = cmd.add_subcommand("import-nccl-tests", "Fit alpha-beta per collective to nccl-tests logs");
      imp->add_option("logs", import->logs, "nccl-tests stdout logs or `calibrate nccl` JSON files")->required()->check(CLI::ExistingFile);
      imp->add_option("--min-size", import->min_size, "Fit only rows at least this size (e.g. 16MiB)")
          ->capture_default_str();
      imp->add_option("--max-size", import->max_size, "Fit only rows at most this size")->capture_default_str();
      imp->add_flag("--in-place", import->in_place, "Use the in-place columns (default: out-of-place)");
      AddOutputOptions(*imp, *out, /*csv_allowed=*/false);

      CLI::App* tr = cmd.add_subcommand(
          "import-trace", "Summarize the steps of a PyTorch profiler (Kineto) trace or a parasim --trace timeline");
      tr->add_option("--trace", trace->trace, "Chrome trace JSON (export_chrome_trace), or gzipped (.json.gz)")
          ->required()
          ->check(CLI::ExistingFile);
      tr->add_option("--skip-steps", trace->skip_steps, "Leave out the first K steps (warm-up)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
      tr->add_option("--device", trace->device, "Only this device (Kineto args.device; parasim traces: pid)")
          ->check(CLI::NonNegativeNumber);
      AddOutputOptions(*tr, *out, /*csv_allowed=*/false);

      CLI::App* fitc = cmd.add_subcommand("fit", "Fit a GPU profile to microbenchmark measurements; writes YAML");
      fitc->add_option("--profile", fit->profile, "GPU profile to start from (name or YAML file)")
          ->capture_default_str();
      auto cfit = std::make_shared<CollectiveFitOptions>();
      fitc->add_option("files", fit->files, "Measurement JSON files (kind nccl-collectives: fit a collective profile)")
          ->check(CLI::ExistingFile);
      fitc->add_option("--measurements", fit->measurements, "Directory written by `calibrate run` or run_all.sh");
      fitc->add_option("--cluster", cfit->cluster, "Cluster the collective measurements ran on (YAML or preset)");
      fitc->add_option("--base", cfit->base, "Profile to start from: infiniband | roce | efa | a profile file");
      fitc->add_option("--nccl", cfit->nccl, "NCCL version where a measurement does not record it")
          ->capture_default_str();
      fitc->add_option("--name", fit->name, "Name of the calibrated profile (default: <profile>-calibrated)");
      fitc->add_option("-o,--output", out->output_file, "Write the YAML to FILE (whole or not at all)");

      auto cimp = std::make_shared<CollectiveImportOptions>();
      CLI::App* imp2 = cmd.add_subcommand("import", "Import nccl-tests logs as collective measurements (JSON)");
      imp2->add_option("--nccl-tests", cimp->logs, "nccl-tests stdout logs (every op, every run)")
          ->required()
          ->check(CLI::ExistingFile);
      imp2->add_option("--nodes", cimp->nodes, "Nodes, where the log's device lines do not say");
      imp2->add_option("--gpus-per-node", cimp->gpus_per_node, "Ranks per node, where the device lines do not say");
      imp2->add_flag("--in-place", cimp->in_place, "Also import the in-place columns");
      imp2->add_option("-o,--output", out->output_file, "Write the JSON to FILE (whole or not at all)");

      const std::function<void()> fit_stack = AddFitStackSubcommand(cmd);
      const std::function<void()> device = AddDeviceSubcommands(cmd);

      return std::function<void()>([=] {
        if (run->parsed()) RunMicrobenchmarks(*run_dir, *quick);
        if (imp->parsed()) ImportNcclTests(*import, *out);
        if (tr->parsed()) ImportTrace(*trace, *out);
        if (imp2->parsed()) ImportCollectives(*cimp, *out);
        if (fitc->parsed()) {
          // Dispatch on the kind each JSON declares; --measurements DIR is the GPU fit.
          if (!fit->files.empty()) {
            for (const auto& f : fit->files)
              if (MeasurementKindOf(f) != kCollectiveMeasurementKind)
                throw InvalidInput(f, "kind", StrCat("'", MeasurementKindOf(f), "' is not a measurement kind calibrate fit reads (",
                                                     kCollectiveMeasurementKind, ")"));
            if (!fit->measurements.empty())
              throw InvalidInput("", "--measurements", "give JSON files or --measurements DIR, not both");
            cfit->measurements = fit->files;
            cfit->name = fit->name;
            FitCollectiveProfile(*cfit, *out);
          } else {
            FitProfile(*fit, *out);
          }
        }
        fit_stack();
        device();
      });
    }};

}  // namespace
}  // namespace parasim::cli
