#include "calibrate/device_programs.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "core/check.h"
#include "core/error.h"

namespace parasim::calibrate {
namespace {

namespace fs = std::filesystem;

// Environment failures (no GPU, a device error) exit with 3.
[[maybe_unused]] [[noreturn]] void EnvironmentFailure(const std::string& message) { throw EnvironmentError(message); }

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
int RunProgram(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
               std::ostream& log) {
  log << "parasim: running";
  for (const std::string& a : argv) log << ' ' << a;
  log << '\n';
  log.flush();   // before the program's own output
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

fs::path RequireProgram(const std::string& name) {
  const fs::path exe = ProgramPath(name);
  if (!fs::exists(exe)) {
    throw EnvironmentError(exe.string() + " is missing: build it (cmake --build build --target " + name + ")");
  }
  return exe;
}

}  // namespace

void RequireCudaBuild() {
#ifndef PARASIM_HAVE_CUDA
  throw InvalidInput("", "calibrate", kNoCuda);
#endif
}

void RunMicrobenchmarks(const std::string& out_dir, bool quick, std::ostream& log) {
#ifndef PARASIM_HAVE_CUDA
  (void)out_dir;
  (void)quick;
  (void)log;
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
      // FP8 (E4M3, cuBLASLt TN, per-tensor scales) at the same sustained clocks.
      {"parasim_gemm_sweep", "gemm_sweep_fp8_sustained.json",
       " --dtype fp8 --quick --preheat-s 10 --min-time-ms 1000"},
  };
  for (const Program& p : programs) {
    const fs::path exe = bin_dir / p.binary;
    if (!fs::exists(exe)) EnvironmentFailure(StrCat("calibrate run: ", exe.string(), " is missing (build it)"));
    const fs::path out = fs::path(out_dir) / p.output;
    const std::string cmd = StrCat("'", exe.string(), "' -o '", out.string(), "'", p.args);
    log << "parasim: running " << p.binary << p.args << "\n";
    log.flush();   // before the program's own output
    const int rc = std::system(cmd.c_str());
    const int status = rc == -1 ? -1 : WEXITSTATUS(rc);
    if (status == 3) EnvironmentFailure(StrCat("calibrate run: ", p.binary, " found no usable GPU"));
    if (status != 0) throw InternalError(StrCat("calibrate run: ", p.binary, " failed with exit code ", status));
  }
  log << "parasim: measurements in " << out_dir << "; fit with `parasim calibrate fit --measurements " << out_dir
      << "`\n";
#endif
}

void RunNcclBench(const NcclBenchOptions& o, std::ostream& log) {
  std::vector<std::string> argv = NcclBenchArgs(o, "parasim_nccl_bench");  // bad arguments first (exit 2)
  RequireCudaBuild();
  const std::string exe = RequireProgram("parasim_nccl_bench").string();
  for (std::string& a : argv) a = a == "parasim_nccl_bench" ? exe : a;
  std::vector<std::pair<std::string, std::string>> env;
  if (!o.algo.empty()) env.emplace_back("NCCL_ALGO", o.algo);
  if (!o.proto.empty()) env.emplace_back("NCCL_PROTO", o.proto);
  CheckExit(RunProgram(argv, env, log), "parasim_nccl_bench");
  log << "parasim: measurements in " << o.out << "; fit alpha-beta with `parasim calibrate import-nccl-tests "
      << o.out << "`\n";
}

void RunReferenceStep(const std::string& schedule, int warmup, int steps, const std::string& out, std::ostream& log) {
  const std::string exe = RequireProgram("parasim_reference_step").string();
  CheckExit(RunProgram({exe, "--schedule", schedule, "--warmup", std::to_string(warmup), "--steps",
                        std::to_string(steps), "-o", out},
                       {}, log),
            "parasim_reference_step");
}

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

}  // namespace parasim::calibrate
