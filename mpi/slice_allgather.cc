#include "mpi/slice_allgather.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"

namespace parasim::mpi {
namespace {

void Check(int rc, const char* call) { PARASIM_CHECK(rc == MPI_SUCCESS, call, " failed with MPI error ", rc); }

std::vector<planner::PlanSlice> AllGather(MPI_Comm comm, const planner::SliceScorer& score) {
  int rank = 0, size = 1;
  Check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  Check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const std::string mine = planner::SerializePlanSlice(score(rank, size));
  // MPI counts are int: a slice is ~33 bytes a candidate, so 2 GiB is ~65 million candidates.
  PARASIM_CHECK(mine.size() <= static_cast<size_t>(INT32_MAX), "plan slice of ", mine.size(), " bytes is too large");
  int my_size = static_cast<int>(mine.size());
  std::vector<int> sizes(static_cast<size_t>(size));
  Check(MPI_Allgather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<int> offsets(static_cast<size_t>(size));
  int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    PARASIM_CHECK(total <= INT32_MAX, "gathered plan slices exceed 2 GiB");
    offsets[static_cast<size_t>(r)] = static_cast<int>(total);
    total += sizes[static_cast<size_t>(r)];
  }
  PARASIM_CHECK(total <= INT32_MAX, "gathered plan slices exceed 2 GiB");
  std::string all(static_cast<size_t>(total), '\0');
  Check(MPI_Allgatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, comm),
        "MPI_Allgatherv");
  std::vector<planner::PlanSlice> slices;
  slices.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    slices.push_back(planner::DeserializePlanSlice(
        std::string_view(all).substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                     static_cast<size_t>(sizes[static_cast<size_t>(r)]))));
  }
  return slices;
}

}  // namespace

planner::SliceRunner AllGatherSliceRunner(MPI_Comm comm) {
  return [comm](const planner::SliceScorer& score) { return AllGather(comm, score); };
}

}  // namespace parasim::mpi
