// `parasim calibrate run | import | import-nccl-tests | import-trace | fit`:
// flags, then the facade (facade/calibration.h): run the CUDA
// microbenchmarks (CUDA builds only), fit alpha-beta to nccl-tests logs,
// summarize a profiled training step, fit a GPU or collective profile to
// measurements (written by cmd_calibrate_report.cc); cmd_calibrate_fit_stack.cc refits a software stack and
// cmd_calibrate_device.cc runs the NCCL benchmark and the reference step.
#include <iostream>
#include <memory>

#include "cli/cmd_calibrate_device.h"
#include "cli/cmd_calibrate_report.h"
#include "cli/cmd_calibrate_fit_stack.h"
#include "cli/command.h"
#include "facade/calibration.h"

namespace parasim::cli {
namespace {

const CommandRegistration kCalibrate{
    "calibrate",
    "Measure a GPU (CUDA builds), import nccl-tests logs and profiler traces, fit a calibrated GPU profile",
    [](CLI::App& cmd) {
      cmd.require_subcommand(1);
      auto out = std::make_shared<OutputOptions>();
      auto run_dir = std::make_shared<std::string>("calibration-out");
      auto quick = std::make_shared<bool>(false);
      auto import = std::make_shared<NcclTestsImportOptions>();
      auto fit = std::make_shared<ProfileFitOptions>();
      auto trace = std::make_shared<TraceImportOptions>();

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
      fitc->add_option("files", fit->files, "Measurement JSON files (kind nccl-collectives: fit a collective profile)")
          ->check(CLI::ExistingFile);
      fitc->add_option("--measurements", fit->measurements, "Directory written by `calibrate run` or run_all.sh");
      fitc->add_option("--cluster", fit->cluster, "Cluster the collective measurements ran on (YAML or preset)");
      fitc->add_option("--base", fit->base, "Profile to start from: infiniband | roce | efa | a profile file");
      fitc->add_option("--nccl", fit->nccl, "NCCL version where a measurement does not record it")
          ->capture_default_str();
      fitc->add_option("--name", fit->name, "Name of the calibrated profile (default: <profile>-calibrated)");
      fitc->add_option("-o,--output", out->output_file, "Write the YAML to FILE (whole or not at all)");
      fitc->add_option("--format", out->format, "Fit report (on stderr): table or json")
          ->check(CLI::IsMember({"table", "json"}))
          ->capture_default_str();

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
        if (run->parsed()) RunMicrobenchmarks(*run_dir, *quick, std::cerr);
        if (imp->parsed()) WriteReport(*out, ImportNcclTests(*import, out->Parsed()));
        if (tr->parsed()) WriteReport(*out, ImportTrace(*trace, out->Parsed()));
        if (imp2->parsed()) WriteOutput(*out, ImportCollectiveMeasurements(*cimp, std::cerr));
        if (fitc->parsed()) WriteFittedProfile(*out, FitProfileToMeasurements(*fit));
        fit_stack();
        device();
      });
    }};

}  // namespace
}  // namespace parasim::cli
