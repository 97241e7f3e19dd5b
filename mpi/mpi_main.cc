// parasim-mpi: `plan`, `scale` and `whatif` with the planner's search split
// over MPI ranks (mpirun -n K, srun). Every rank runs the same command; each
// scores its slice of every search space and receives the others' slices
// (mpi/slice_allgather.h), so all ranks rank alike, and rank 0 alone prints
// and writes files: the output is byte for byte what `parasim` prints.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "mpi/slice_allgather.h"

namespace {

// The subcommands that distribute; the others run with `parasim`.
bool Distributes(const char* command) {
  for (const char* name : {"plan", "scale", "whatif"}) {
    if (std::strcmp(command, name) == 0) return true;
  }
  return false;
}

// The first argument that is not an option (the subcommand), or null.
const char* Subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // Funneled: only the main thread calls MPI; the planner's threads score.
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "parasim-mpi: error: MPI_Init failed\n");
    return parasim::cli::kExitInternal;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* command = Subcommand(argc, argv);
  if (command != nullptr && !Distributes(command)) {
    if (rank == 0) {
      std::fprintf(stderr, "parasim-mpi: error: '%s' does not distribute; parasim-mpi runs plan, scale and whatif "
                   "(run '%s' with parasim)\n", command, command);
    }
    MPI_Finalize();
    return parasim::cli::kExitBadInput;
  }
  parasim::cli::OutputSuppressed() = rank != 0;
  if (rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) std::fclose(stdout);   // --help prints once
  parasim::planner::SetDefaultSliceRunner(parasim::mpi::AllGatherSliceRunner(MPI_COMM_WORLD));
  const int code = parasim::cli::RunCli(argc, argv);
  parasim::planner::SetDefaultSliceRunner(nullptr);
  // Bad input and "no answer" are found alike on every rank; an internal
  // error may be one rank's alone, and the others could wait for it forever.
  if (code == parasim::cli::kExitInternal) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  return code;
}
