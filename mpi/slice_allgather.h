// The MPI side of a distributed plan: each rank scores its own slice of the
// search space (planner/plan_slice.h) and every rank receives all slices, so
// every rank ranks the same table and the program's control flow, collectives
// included, stays the same on all ranks.
#pragma once

#include <mpi.h>

#include "planner/plan_slice.h"

namespace parasim::mpi {

// A SliceRunner over `comm`: rank r scores slice r of size(comm), then all
// slices are all-gathered (sizes first, then the bytes).
planner::SliceRunner AllGatherSliceRunner(MPI_Comm comm);

}  // namespace parasim::mpi
