// `parasim calibrate nccl` and `parasim calibrate step`: run the CUDA
// programs built beside the parasim binary (build/calibrate/) on this
// machine's GPUs: the NCCL collective benchmark (calibrate/cuda/
// nccl_bench.cu) and the reference training step (reference_step.cu), which
// replays the schedule `simulate --export-schedule` writes.
// Flags only: the programs run through facade/calibration.h
// (calibrate/device_programs.h). A build without CUDA answers with exit
// code 2 (a feature this build lacks); a CUDA build without a GPU with 3.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace parasim::cli {

// Adds both subcommands to `calibrate`; returns their action (run when parsed).
std::function<void()> AddDeviceSubcommands(CLI::App& calibrate);

}  // namespace parasim::cli
