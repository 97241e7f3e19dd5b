#include "cli/cmd_calibrate_device.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "core/check.h"
#include "core/error.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "simulator/schedule_export.h"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;

const char* const kNoCuda =
    "this parasim was built without CUDA and NCCL (none found at configure time), so it has no GPU programs; "
    "build it on a machine with the CUDA toolkit and NCCL, or build calibrate/cuda/ there with nvcc";

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

void CheckMembers(const std::string& list, const std::vector<std::string>& allowed, const std::string& flag) {
  const std::vector<std::string> items = SplitComma(list);
  if (items.empty()) throw InvalidInput("", flag, "is empty");
  for (const std::string& item : items) {
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || item == a;
    if (!ok) {
      std::string names;
      for (const std::string& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw InvalidInput("", flag, "'" + item + "' is not one of: " + names);
    }
  }
}

// The GPU programs live in build/calibrate/ beside the parasim binary.
fs::path ProgramPath(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw EnvironmentError("cannot locate the parasim executable (/proc/self/exe)");
  return self.parent_path() / "calibrate" / name;
}

// Runs argv[0] with `env` added; returns its exit status (-1: did not run).
int RunProgram(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env) {
  std::cerr << "parasim: running";
  for (const std::string& a : argv) std::cerr << ' ' << a;
  std::cerr << '\n';
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The programs' exit codes follow the CLI's: 2 bad input, 3 no usable GPU.
void CheckExit(int status, const std::string& program) {
  if (status == 0) return;
  if (status == 3) throw EnvironmentError(program + " found no usable GPU (no CUDA device, or a CUDA/NCCL error)");
  if (status == 2) throw InvalidInput("", program, "rejected its arguments (see its message above)");
  if (status == 127) throw EnvironmentError(program + " could not be started");
  throw InternalError(program + " failed with exit code " + std::to_string(status));
}

void RequireCudaBuild() {
#ifndef PARASIM_HAVE_CUDA
  throw InvalidInput("", "calibrate", kNoCuda);
#endif
}

fs::path RequireProgram(const std::string& name) {
  const fs::path exe = ProgramPath(name);
  if (!fs::exists(exe)) {
    throw EnvironmentError(exe.string() + " is missing: build it (cmake --build build --target " + name + ")");
  }
  return exe;
}

// ---- calibrate nccl -------------------------------------------------------------

void RunNcclBench(const NcclBenchOptions& o) {
  std::vector<std::string> argv = NcclBenchArgs(o, "parasim_nccl_bench");  // bad arguments first (exit 2)
  RequireCudaBuild();
  const std::string exe = RequireProgram("parasim_nccl_bench").string();
  for (std::string& a : argv) a = a == "parasim_nccl_bench" ? exe : a;
  std::vector<std::pair<std::string, std::string>> env;
  if (!o.algo.empty()) env.emplace_back("NCCL_ALGO", o.algo);
  if (!o.proto.empty()) env.emplace_back("NCCL_PROTO", o.proto);
  CheckExit(RunProgram(argv, env), "parasim_nccl_bench");
  std::cerr << "parasim: measurements in " << o.out << "; fit alpha-beta with `parasim calibrate import-nccl-tests "
            << o.out << "`\n";
}

// ---- calibrate step ---------------------------------------------------------------

struct StepOptions {
  std::string schedule;  // an exported schedule; else exported from the spec and --config
  std::string config;
  std::string out = "reference_step.json";
  int warmup = 3, steps = 10;
};

void RunReferenceStep(const StepOptions& o, const SpecOptions& spec) {
  // Arguments first: a usage error reads the same in every build.
  if (o.schedule.empty() && o.config.empty()) {
    throw InvalidInput("", "--config", "give --config (with the model and cluster) or --schedule FILE");
  }
  RequireCudaBuild();
  std::string schedule = o.schedule;
  if (schedule.empty()) {
    const ParallelConfig cfg = ParseParallelConfig(o.config, "--config");
    const AnalyticalEvaluator evaluator(spec.LoadModelSpec(), spec.LoadClusterSpec(), spec.LoadJobSpec());
    OutputOptions sched_out;
    sched_out.output_file = o.out + ".schedule.json";
    WriteOutput(sched_out, simulator::ScheduleJson(evaluator.BuildWorkload(cfg), evaluator.model(), evaluator.job(),
                                                   evaluator.Evaluate(cfg)));
    schedule = sched_out.output_file;
  }
  const std::string exe = RequireProgram("parasim_reference_step").string();
  CheckExit(RunProgram({exe, "--schedule", schedule, "--warmup", std::to_string(o.warmup), "--steps",
                        std::to_string(o.steps), "-o", o.out},
                       {}),
            "parasim_reference_step");
}

void AddNcclOptions(CLI::App& c, NcclBenchOptions& o) {
  c.add_option("-o,--out", o.out, "Measurement JSON to write")->capture_default_str();
  c.add_option("-b,--min-bytes", o.min_bytes, "Smallest size (bytes, or with K/M/G)")->capture_default_str();
  c.add_option("-e,--max-bytes", o.max_bytes, "Largest size")->capture_default_str();
  c.add_option("-f,--factor", o.factor, "Size multiplier between rows")->capture_default_str();
  c.add_option("-w,--warmup", o.warmup, "Untimed iterations per size")->capture_default_str()->check(CLI::NonNegativeNumber);
  c.add_option("-n,--iters", o.iters, "Timed iterations per size")->capture_default_str()->check(CLI::PositiveNumber);
  c.add_option("--ops", o.ops, "Collectives, comma separated")->capture_default_str();
  c.add_option("--groups", o.groups, "all, node (ranks of one host), rail (one rank per host), comma separated")
      ->capture_default_str();
  c.add_option("--gemm", o.gemm, "M,N,K: a bf16 GEMM loop beside the collective (interference)");
  c.add_option("--algo", o.algo, "NCCL_ALGO for the run (Ring, Tree, NVLS, ...; recorded in the output)");
  c.add_option("--proto", o.proto, "NCCL_PROTO for the run (LL, LL128, Simple; recorded in the output)");
  c.add_option("--mpi-ranks", o.mpi_ranks, "Run N ranks under mpirun (a program built with MPI)")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace

std::vector<std::string> NcclBenchArgs(const NcclBenchOptions& o, const std::string& program) {
  CheckMembers(o.ops, {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}, "--ops");
  CheckMembers(o.groups, {"all", "node", "rail"}, "--groups");
  if (!o.gemm.empty()) {
    const std::vector<std::string> mnk = SplitComma(o.gemm);
    bool ok = mnk.size() == 3;
    for (const std::string& v : mnk) ok = ok && !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
    if (!ok) throw InvalidInput("", "--gemm", "'" + o.gemm + "' is not M,N,K (three positive integers)");
  }
  if (o.out.empty()) throw InvalidInput("", "--out", "is empty");
  std::vector<std::string> argv;
  if (o.mpi_ranks > 0) argv = {"mpirun", "-np", std::to_string(o.mpi_ranks)};
  argv.insert(argv.end(), {program, "-b", o.min_bytes, "-e", o.max_bytes, "-f", o.factor, "-w",
                           std::to_string(o.warmup), "-n", std::to_string(o.iters), "--ops", o.ops, "--groups",
                           o.groups, "-o", o.out});
  if (!o.gemm.empty()) argv.insert(argv.end(), {"--gemm", o.gemm});
  return argv;
}

std::function<void()> AddDeviceSubcommands(CLI::App& calibrate) {
  auto nccl = std::make_shared<NcclBenchOptions>();
  CLI::App* n = calibrate.add_subcommand(
      "nccl", "Measure NCCL collectives on this machine's GPUs (nccl-tests sizes, algbw/busbw); writes JSON");
  AddNcclOptions(*n, *nccl);

  auto step = std::make_shared<StepOptions>();
  auto spec = std::make_shared<SpecOptions>();
  CLI::App* s = calibrate.add_subcommand(
      "step", "Replay parasim's schedule of one step on this machine's GPUs; measured vs predicted step time");
  s->add_option("--schedule", step->schedule, "A schedule from `simulate --export-schedule` (else built here)")
      ->check(CLI::ExistingFile);
  s->add_option("--config", step->config, "Parallel config to export and replay (with --model, --cluster, ...)");
  s->add_option("-o,--out", step->out, "Result JSON to write")->capture_default_str();
  s->add_option("--warmup", step->warmup, "Untimed steps")->capture_default_str()->check(CLI::NonNegativeNumber);
  s->add_option("--steps", step->steps, "Timed steps (median reported)")->capture_default_str()->check(CLI::PositiveNumber);
  AddSpecOptions(*s, *spec, /*need_batch=*/false);
  return [=] {
    if (n->parsed()) RunNcclBench(*nccl);
    if (s->parsed()) RunReferenceStep(*step, *spec);
  };
}

}  // namespace parasim::cli
