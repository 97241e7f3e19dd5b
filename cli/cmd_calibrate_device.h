// `parasim calibrate nccl` and `parasim calibrate step`: run the CUDA
// programs built beside the parasim binary (build/calibrate/) on this
// machine's GPUs: the NCCL collective benchmark (calibrate/cuda/
// nccl_bench.cu) and the reference training step (reference_step.cu), which
// replays the schedule `simulate --export-schedule` writes.
// A build without CUDA answers with exit code 2 (a feature this build lacks);
// a CUDA build on a machine without a GPU with exit code 3.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace parasim::cli {

// Adds both subcommands to `calibrate`; returns their action (run when parsed).
std::function<void()> AddDeviceSubcommands(CLI::App& calibrate);

// The command line of the NCCL benchmark for these options (tested on CPU).
struct NcclBenchOptions {
  std::string out = "nccl_bench.json";
  std::string min_bytes = "8", max_bytes = "1G", factor = "2";
  int warmup = 5, iters = 20;
  std::string ops = "all_reduce,all_gather,reduce_scatter,all_to_all,send_recv";
  std::string groups = "all";
  std::string gemm;         // "M,N,K": concurrent GEMM interference
  std::string algo, proto;  // NCCL_ALGO / NCCL_PROTO for the run
  int mpi_ranks = 0;        // > 0: run under mpirun -np N
};
std::vector<std::string> NcclBenchArgs(const NcclBenchOptions& o, const std::string& program);

}  // namespace parasim::cli
