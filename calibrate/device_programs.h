// The CUDA programs built beside the parasim binary (build/calibrate/):
// the microbenchmarks `calibrate run` drives, the NCCL collective benchmark
// (calibrate/cuda/nccl_bench.cu) and the reference training step
// (reference_step.cu). A build without CUDA answers InvalidInput (a feature
// this build lacks, exit 2); a CUDA build without a usable GPU
// EnvironmentError (exit 3). Progress lines go to `log`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace parasim::calibrate {

// Runs the microbenchmarks on GPU 0, one JSON file each into `out_dir`.
void RunMicrobenchmarks(const std::string& out_dir, bool quick, std::ostream& log);

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

// The command line of the NCCL benchmark for these options; checks them
// (InvalidInput naming the flag) in every build.
std::vector<std::string> NcclBenchArgs(const NcclBenchOptions& o, const std::string& program);

// Runs the NCCL benchmark; its measurements go to `o.out`.
void RunNcclBench(const NcclBenchOptions& o, std::ostream& log);

// Throws InvalidInput in a build without CUDA.
void RequireCudaBuild();

// Replays `schedule` (from `simulate --export-schedule`) on this machine's GPU.
void RunReferenceStep(const std::string& schedule, int warmup, int steps, const std::string& out, std::ostream& log);

}  // namespace parasim::calibrate
