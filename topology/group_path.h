// What one collective over a placed parallel group sees on the cluster graph:
// how the group spans nodes and rails, the bottleneck bandwidth of the ring
// NCCL would build over it, and the per-hop latency by link class. The cost
// model turns this into collective time (cost_model/collective_cost.h).
#pragma once

#include <string>
#include <vector>

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

}  // namespace parasim
