// Boost.Graph types of the topology (only topology/*.cc include this).
#pragma once

#include <array>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topology/topology.h"

namespace parasim::internal {

struct VertexProps {
  VertexKind kind = VertexKind::kGpu;
};
struct EdgeProps {
  int32_t link = -1;   // id in Topology's link arrays
};
// The cluster graph: one directed edge per Topology link.
using ClusterGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, EdgeProps>;

// One step of a routed hop inside a hybrid-cube-mesh node, found by search on
// the node template: a direct NVLink, or up/down through the host bridge.
struct MeshStep {
  enum Kind { kNvLink, kHostUp, kHostDown } kind;
  int a = 0, b = 0;   // local GPUs (kNvLink: a -> b; kHostUp: a; kHostDown: b)
};
using MeshRoutes = std::array<std::array<std::vector<MeshStep>, 8>, 8>;
MeshRoutes SearchMeshRoutes();

}  // namespace parasim::internal
