// Accuracy of the collective model on the pool of public multi-node
// nccl-tests logs that the data's SOURCES.md does not flag.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "calibrate/collective_accuracy.h"

namespace parasim::calibrate {
namespace {

const std::string kData = std::string(PARASIM_SOURCE_DIR) + "/tests/data";

// The fixed pool (tests/data/nccl_multinode/SOURCES.md says where each comes
// from). Left out as flagged: the VMware 4-node run (virtualized), the
// 128-node run (pathological), the B200 sendrecv series from 8 nodes up
// (unexplained drop, "use with care"). Single-node logs do not cross nodes.
std::vector<AccuracyLog> Pool() {
  const std::string xx = "xxrjun-cluster01.yaml";
  return {
      {"xxrjun-cluster01_h100_10n_all_reduce.log", xx, false},
      {"xxrjun-cluster01_h100_10n_all_gather.log", xx, false},
      {"xxrjun-cluster01_h100_10n_reduce_scatter.log", xx, false},
      {"xxrjun-cluster01_h100_10n_alltoall.log", xx, false},
      {"xxrjun-cluster01_h100_10n_sendrecv.log", xx, false},
      {"xxrjun-cluster01-1gpn_h100_10n_all_reduce.log", xx, false},
      {"xxrjun-cluster01-1gpn_h100_10n_all_gather.log", xx, false},
      {"xxrjun-cluster01-1gpn_h100_10n_reduce_scatter.log", xx, false},
      {"xxrjun-cluster01-1gpn_h100_10n_alltoall.log", xx, false},
      {"xxrjun-cluster01-1gpn_h100_10n_sendrecv.log", xx, false},
      {"xxrjun-cluster01-smoke-1gpn_h100_2n_all_reduce.log", xx, false},
      {"xxrjun-cluster01-smoke-1gpn_h100_2n_sendrecv.log", xx, false},
      {"xxrjun-cluster01_h100_2n_alltoall.log", xx, false},
      {"xxrjun-cluster01_h100_2n_sendrecv.log", xx, false},
      {"nccltests309-gjaion_h100_2n_all_reduce.log", "nccltests309-gjaion.yaml", true},
      {"nccltests309-gjaion-ring-tuned_h100_2n_all_reduce.log", "nccltests309-gjaion.yaml", true},
      {"nccltests309-qoofyk-xe9680_h100_2n_all_reduce.log", "nccltests309-xe9680.yaml", true},
      {"together-use3a-b200_b200_2n_sendrecv.log", "together-use3a-b200.yaml", true},
      {"together-use3a-b200_b200_4n_sendrecv.log", "together-use3a-b200.yaml", true},
      {"oci-gb200-v3-excerpt_gb200_32n_all_reduce.log", "oci-gb200-v3.yaml", true},
  };
}

TEST_CASE("collective accuracy on the multi-node nccl-tests pool", "[collective][accuracy]") {
  const AccuracyReport r = RunCollectiveAccuracy(Pool(), kData + "/nccl_multinode", kData + "/clusters");
  const std::string md = AccuracyMarkdown(r);
  std::cout << md;
}

}  // namespace
}  // namespace parasim::calibrate
