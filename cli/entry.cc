// The parasim program: the whole command line is cli::RunCli (cli/main.cc),
// which parasim-mpi (mpi/) runs as well.
#include "cli/command.h"

int main(int argc, char** argv) { return parasim::cli::RunCli(argc, argv); }
