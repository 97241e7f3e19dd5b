#include "cli/cmd_calibrate_device.h"

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "facade/calibration.h"
#include "parasim/error.h"

namespace parasim::cli {
namespace {

struct StepOptions {
  std::string schedule;  // an exported schedule; else exported from the spec and --config
  std::string config;
  std::string out = "reference_step.json";
  int warmup = 3, steps = 10;
};

void ReplayStep(const StepOptions& o, const SpecOptions& spec) {
  // Arguments first: a usage error reads the same in every build.
  if (o.schedule.empty() && o.config.empty()) {
    throw InvalidInput("", "--config", "give --config (with the model and cluster) or --schedule FILE");
  }
  RequireCudaBuild();
  std::string schedule = o.schedule;
  if (schedule.empty()) {
    OutputOptions sched_out;
    sched_out.output_file = o.out + ".schedule.json";
    WriteOutput(sched_out, StepScheduleJson(spec, o.config));
    schedule = sched_out.output_file;
  }
  RunReferenceStep(schedule, o.warmup, o.steps, o.out, std::cerr);
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
    if (n->parsed()) RunNcclBench(*nccl, std::cerr);
    if (s->parsed()) ReplayStep(*step, *spec);
  };
}

}  // namespace parasim::cli
