// The regular structure of a cluster, in closed form: NVLink domains, NIC
// rails, and the fat-tree (leaves, pods, spines, cores) derived from switch
// radix, oversubscription and node count. Both the O(1) ResolveGroupPath and
// the graph builder (Topology) read it, so the two agree by construction on
// where every NIC sits; the tests check that the traffic agrees too.
#pragma once

#include "core/cluster_spec.h"

namespace parasim {

struct ClusterShape {
  // --- NVLink domains ("nodes" as NCCL sees them) ---
  int gpus = 0;                 // total GPUs
  int domain_gpus = 1;          // D: GPUs per NVLink domain (node for NVSwitch/mesh/PCIe)
  int domains = 1;              // gpus / D
  int nics_per_domain = 0;      // Nn: the domain's NICs (nics_per_node * D / gpus_per_node)
  IntraNodeFabric intra = IntraNodeFabric::kNvSwitch;

  // --- inter-node fabric ---
  int tiers = 0;                // 0: one domain, no fabric; 1: single switch; 2 or 3: fat-tree
  bool rail_optimized = false;
  int radix = 0;
  int endpoints = 0;            // NICs attached to the fabric: domains * Nn
  int leaf_down = 0;            // leaf ports facing NICs
  double leaf_up = 0;           // leaf uplink capacity in ports (leaf_down / oversubscription)
  int leaves = 0;
  int su_domains = 0;           // rail-optimized: domains per scalable unit (one leaf per rail)
  int leaves_per_pod = 0;       // 3-tier: leaves under one set of spines; 2-tier: all leaves
  int pods = 1;
  int spines_per_pod = 0;       // 2-tier: all spines
  double leaf_spine_ports = 0;  // ports in one leaf-spine trunk
  int cores_per_group = 0;      // 3-tier: cores serving spine index s of every pod
  double spine_core_ports = 0;  // ports in one spine-core trunk
  bool promoted_to_3_tiers = false;  // a 2-tier request too large for the radix

  // NIC (rail) of local GPU g: GPUs are split evenly over the domain's NICs.
  // With more NICs than GPUs, GPU g owns NICs [FirstNic(g), FirstNic(g) + NicsPerGpu()).
  int FirstNic(int local_gpu) const {
    return nics_per_domain >= domain_gpus ? local_gpu * (nics_per_domain / domain_gpus)
                                          : local_gpu * nics_per_domain / domain_gpus;
  }
  int NicsPerGpu() const { return nics_per_domain >= domain_gpus ? nics_per_domain / domain_gpus : 1; }
  // The local GPU a NIC hangs off (the lowest one when GPUs share a NIC).
  int NicOwner(int nic) const {
    return nics_per_domain >= domain_gpus ? nic / (nics_per_domain / domain_gpus)
                                          : (nic * domain_gpus + nics_per_domain - 1) / nics_per_domain;
  }

  // Fat-tree position of NIC `nic` of domain `domain`.
  int LeafOf(int domain, int nic) const {
    if (tiers <= 1) return 0;
    if (rail_optimized) return (domain / su_domains) * nics_per_domain + nic;
    return (domain * nics_per_domain + nic) / leaf_down;
  }
  int LeafPort(int domain, int nic) const {
    if (tiers <= 1) return domain * nics_per_domain + nic;
    if (rail_optimized) return domain % su_domains;
    return (domain * nics_per_domain + nic) % leaf_down;
  }
  int PodOf(int leaf) const { return tiers == 3 ? leaf / leaves_per_pod : 0; }
  // Domains that always share a leaf on a rail / a pod (closed-form blocks).
  int LeafBlockDomains() const;
  int PodBlockDomains() const;
  int spines() const { return spines_per_pod * pods; }
  int cores() const { return tiers == 3 ? spines_per_pod * cores_per_group : 0; }
};

// Throws parasim::Error for clusters that cannot be built (a fabric too large
// for its radix, NVLink domains that do not tile the nodes, no NICs, ...).
ClusterShape MakeClusterShape(const ClusterSpec& cluster);

}  // namespace parasim
