// Traffic on the topology graph: per-link load of a set of concurrent flows,
// the ring NCCL would build over a placed group (channel orders and the NIC
// rail each channel crosses node boundaries on), and the ring's bottleneck
// bandwidth when every group of a dimension runs its collective at once.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/parallel_config.h"
#include "core/units.h"
#include "topology/group_path.h"
#include "topology/topology.h"

namespace parasim {

struct Flow {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0;
  int rail = -1;   // NIC index in the domain to cross on; -1: the GPUs' own NICs
};

struct LinkLoad {
  std::vector<double> bytes;   // per directed link
  double injected_bytes = 0;   // sum over flows
  double delivered_bytes = 0;  // bytes reaching destinations (on each route's last link; local flows count directly)
  int bottleneck_link = -1;    // link with the largest bytes / capacity (-1: no traffic)
  double bottleneck_seconds = 0;  // that ratio: the time the flow set needs at full link rates
};

LinkLoad ComputeLinkLoad(const Topology& topo, const std::vector<Flow>& flows);

// A ring over a group: channels, each a cyclic order of all members and the
// rail its node-boundary hops use (-1 inside one domain).
struct RingChannel {
  std::vector<int> order;
  int rail = -1;
};
struct RingPlan {
  std::vector<int> members;
  std::vector<RingChannel> channels;
};
// NCCL-style: inside a domain the members in rank order (hybrid cube mesh:
// along the Hamiltonian NVLink cycles NCCL would find); across domains one
// channel per NIC the members own, each entering and leaving every domain on
// its rail, so the node's NICs carry the ring in parallel.
RingPlan PlanRing(const Topology& topo, const std::vector<int>& members);

// Flows of one ring step pattern: every member sends `bytes` to its successor,
// split evenly over the channels.
void AppendRingFlows(const RingPlan& plan, double bytes, std::vector<Flow>* flows);

// A ring as one flow for a max-min solver: every link the ring's channels
// cross, with the bytes it carries per byte each member sends to its
// successor (summed over channels and hops; ascending link id). A solver
// rate r then loads link l with r * weight: the DGX H100 256-GPU ring puts
// 1/8 on each NIC link (400 GB/s at 50 GB/s NICs), a rank-order ring with
// each GPU's own NIC would put 1 on one NIC per node and cross rails.
std::vector<std::pair<int32_t, double>> RingLinkWeights(const Topology& topo, const std::vector<int>& members);

// NCCL's double binary tree over the domains a group spans (src/graph/trees.cc
// ncclGetBtree / ncclGetDtree: tree 0 a binary tree on the in-order numbering,
// tree 1 its mirror for an even count or its shift by one for an odd count),
// so every domain is an interior node in at most one tree. Inside a domain the
// members form a chain from the domain's first member (NCCL's intra-node
// tree). Each tree carries half the data.
struct TreePlan {
  std::vector<int> members;
  std::vector<int> leaders;                 // per domain (in domain order): the GPU on the tree
  std::array<std::vector<int>, 2> parent;   // per tree, per domain index: parent domain index, -1 = root
};
TreePlan PlanDoubleBinaryTree(const Topology& topo, const std::vector<int>& members);

// Flows of a tree AllReduce of `bytes` per rank: reduce up both trees and
// broadcast down them (half the bytes each), plus the intra-domain chains.
void AppendTreeFlows(const Topology& topo, const TreePlan& plan, double bytes, std::vector<Flow>* flows);

// Graph-derived ring figures for every group of `dim` running at once.
struct RingAnalysis {
  BytesPerSecond bus_bandwidth;   // per rank: bytes each rank sends per hop / time of the busiest link
  LinkClass bottleneck_class = LinkClass::kNvLink;
  int max_switch_hops = 0;        // on the worst node-boundary hop
  int nodes = 1;                  // domains spanned by group 0
  int ranks_per_node = 1;
  int groups = 1;
  int channels = 1;
  LinkLoad load;
};
RingAnalysis AnalyzeRings(const Topology& topo, const ParallelConfig& config, ParallelDim dim, SubGroup sub = {});

}  // namespace parasim
