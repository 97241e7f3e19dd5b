// What one collective over a placed parallel group sees on the cluster graph:
// how the group spans nodes and rails, the bottleneck bandwidth of the ring
// NCCL would build over it, and the per-hop latency by link class. The cost
// model turns this into collective time (cost_model/collective_cost.h).
#pragma once

#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/parallel_config.h"
#include "core/units.h"

namespace parasim {

enum class LinkClass { kNvLink, kPcie, kNic, kLeafSpine, kSpineCore };
const char* ToString(LinkClass c);

struct GroupPath {
  int ranks = 1;                 // n: members of the group
  int nodes = 1;                 // distinct nodes the group spans
  int ranks_per_node = 1;        // members per node (groups are placed regularly)
  bool crosses_nodes = false;
  bool single_rail = false;      // one member per node, all on the same NIC rail
  int groups_sharing_node = 1;   // concurrent groups of this dimension per node (share its NICs)
  int max_switch_hops = 0;       // switch traversals on the worst inter-node hop (1 = same leaf)

  // Bandwidth per direction.
  BytesPerSecond intra_bandwidth;  // per rank inside a node (NVLink, or PCIe)
  BytesPerSecond inter_bandwidth;  // per node boundary crossing of one ring, all channels: the
                                   // group's share of the node's NICs and of the fabric uplinks
  BytesPerSecond ring_bandwidth;   // bottleneck bus bandwidth of the ring as placed = min(intra, inter)

  // Latency of one ring step by hop type (NCCL-style α, before protocol cost).
  Seconds intra_hop_latency;     // NVLink/PCIe hop
  Seconds inter_hop_latency;     // NIC + switches + wire for a node-boundary hop

  bool nvls_capable = false;     // NVLink SHARP usable (group inside one NVSwitch domain)
  bool sharp_capable = false;    // IB SHARP usable across nodes
  LinkClass bottleneck_class = LinkClass::kNvLink;
};

// The parallel dimensions a group can belong to.
enum class ParallelDim { kTp, kCp, kEp, kDp, kPp };
const char* ToString(ParallelDim d);   // "tp" | "cp" | "ep" | "dp" | "pp"

// A sub-group of a dimension's group: `size` members taken every `stride`
// members of it. hsdp:G uses {G, 1} for the shard group and {dp/G, G} for the
// replica group; size 0 means the whole group. `ends`: the group's first and
// last member only (size and stride unused): the tied embedding's pair of
// pipeline stages 0 and pp − 1, which leaves the middle stages out and so
// does not tile its group as the strided sub-groups do.
struct SubGroup {
  int size = 0;
  int stride = 1;
  bool ends = false;
};
inline SubGroup GroupEnds() { return SubGroup{0, 1, true}; }

// What every group of `dim` (placed by config.order on `cluster`) sees when it
// runs a ring/tree collective while all groups of that dimension run theirs at
// once. Closed form from the cluster's regular structure: O(1), no graph, so
// the planner can call it for millions of configs. Pure and thread-safe.
// An `ends` sub-group resolves to GroupEndsPath of its whole group.
GroupPath ResolveGroupPath(const ClusterSpec& cluster, const ParallelConfig& config,
                           ParallelDim dim, SubGroup sub = {});

// The first and last member of a group, from the whole group's placed path.
// Groups are placed regularly, so the pair crosses a node boundary exactly
// when the group does; across nodes it has one member per node, which
// carries its own share of the node's NICs (the group's k members per node
// carried k shares), and its one hop is the ring's closing hop, last member
// to first, the group's widest.
GroupPath GroupEndsPath(const GroupPath& whole);

}  // namespace parasim
