#include "topology/cluster_shape.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace parasim {

int ClusterShape::LeafBlockDomains() const {
  if (tiers <= 1) return domains;
  if (rail_optimized) return su_domains;
  return std::max(1, domains_per_leaf);
}

int ClusterShape::PodBlockDomains() const {
  if (tiers <= 2) return domains;
  if (rail_optimized) return su_domains * std::max(1, leaves_per_pod / leaves_per_su);
  return std::max(1, leaves_per_pod * std::max(1, domains_per_leaf));
}

ClusterShape MakeClusterShape(const ClusterSpec& c) {
  const std::string file = c.file;
  if (c.gpus_per_node < 1) throw InvalidInput(file, "gpus_per_node", "must be >= 1");
  if (c.nodes < 1) throw InvalidInput(file, "nodes", "must be >= 1");
  ClusterShape s;
  s.gpus = c.TotalGpus();
  s.intra = c.intra_node.fabric;
  // An NVSwitch node whose NVLink domain spans several nodes (NVLink Switch
  // System: DGX GH200's 256 GPUs, NVL72's 18 trays) is an NVLink domain
  // fabric: the domain, not the node, is what the NICs leave from.
  if (s.intra == IntraNodeFabric::kNvSwitch && c.intra_node.nvlink_domain_size > c.gpus_per_node) {
    s.intra = IntraNodeFabric::kNvlDomain;
  }
  if (s.intra == IntraNodeFabric::kNvlDomain) {
    const int d = c.intra_node.nvlink_domain_size;
    if (d < c.gpus_per_node || d % c.gpus_per_node != 0)
      throw InvalidInput(file, "intra_node.nvlink_domain_size",
                  StrCat(d, " must be a multiple of gpus_per_node (", c.gpus_per_node, ")"));
    if (s.gpus % d != 0)
      throw InvalidInput(file, "nodes", StrCat(s.gpus, " GPUs do not fill whole NVLink domains of ", d));
    s.domain_gpus = d;
  } else {
    if (s.intra == IntraNodeFabric::kHybridCubeMesh && c.gpus_per_node != 8)
      throw InvalidInput(file, "gpus_per_node", "the DGX-1 hybrid cube mesh has 8 GPUs per node");
    s.domain_gpus = c.gpus_per_node;
  }
  s.domains = s.gpus / s.domain_gpus;
  s.nics_per_domain = c.inter_node.nics_per_node * (s.domain_gpus / c.gpus_per_node);
  if (s.domains == 1) return s;   // one NVLink domain: no fabric traffic

  const InterNodeSpec& in = c.inter_node;
  if (s.nics_per_domain < 1) throw InvalidInput(file, "inter_node.nics_per_node", "a multi-node cluster needs NICs");
  if (s.nics_per_domain > s.domain_gpus && s.nics_per_domain % s.domain_gpus != 0)
    throw InvalidInput(file, "inter_node.nics_per_node", "more NICs than GPUs must be a whole number per GPU");
  if (!(in.nic_bandwidth.si() > 0)) throw InvalidInput(file, "inter_node.nic_bandwidth", "must be > 0");
  if (in.switch_radix < 2) throw InvalidInput(file, "inter_node.switch_radix", "must be >= 2");
  if (!(in.oversubscription >= 1.0) || !std::isfinite(in.oversubscription))
    throw InvalidInput(file, "inter_node.oversubscription", "must be >= 1 (down:up ports at a leaf)");
  s.radix = in.switch_radix;
  s.endpoints = s.domains * s.nics_per_domain;
  s.rail_optimized = in.rail_optimized;

  if (in.fabric == InterNodeFabric::kSingleSwitch || in.tiers == 1) {
    if (s.endpoints > s.radix)
      throw InvalidInput(file, "inter_node.switch_radix",
                  StrCat("a single switch of ", s.radix, " ports cannot connect ", s.endpoints, " NICs"));
    s.tiers = 1;
    s.leaves = 1;
    s.leaf_down = s.endpoints;
    return s;
  }
  if (in.tiers != 2 && in.tiers != 3) throw InvalidInput(file, "inter_node.tiers", "fat-trees have 2 or 3 tiers");

  // Leaf ports split down:up = oversubscription; uplink capacity kept exact
  // (in port units) so a 2:1 leaf has exactly half its down capacity up.
  const double o = in.oversubscription;
  s.leaf_down = std::max(1, static_cast<int>(std::lround(s.radix * o / (1.0 + o))));
  if (s.leaf_down >= s.radix) s.leaf_down = s.radix - 1;
  s.leaf_up = s.leaf_down / o;
  if (s.rail_optimized) {
    // Scalable unit in domains, at most one leaf's down ports.
    const long long su = std::max(1LL, static_cast<long long>(in.scalable_unit_nodes) * c.gpus_per_node / s.domain_gpus);
    s.su_domains = static_cast<int>(std::min<long long>(su, s.leaf_down));
    s.rails_per_leaf = std::max(1, std::min(s.nics_per_domain, s.leaf_down / s.su_domains));
    s.leaves_per_su = (s.nics_per_domain + s.rails_per_leaf - 1) / s.rails_per_leaf;
    const int sus = (s.domains + s.su_domains - 1) / s.su_domains;
    s.leaves = sus * s.leaves_per_su;
  } else {
    s.domains_per_leaf = s.leaf_down / s.nics_per_domain;
    s.leaves = s.domains_per_leaf > 0 ? (s.domains + s.domains_per_leaf - 1) / s.domains_per_leaf
                                      : (s.endpoints + s.leaf_down - 1) / s.leaf_down;
  }

  s.tiers = in.tiers;
  if (s.tiers == 2 && s.leaves > s.radix) {   // a spine cannot reach every leaf
    s.tiers = 3;
    s.promoted_to_3_tiers = true;
  }
  if (s.tiers == 2) {
    s.leaves_per_pod = s.leaves;
    s.pods = 1;
    // Fewest spines whose ports reach every leaf's uplinks, preferring a
    // count that divides the uplinks (every leaf-spine trunk the same width,
    // as the SuperPOD designs do: 1 SU 4 spines, 3 SU 16).
    const int need = std::max(1, static_cast<int>(std::ceil(s.leaves * s.leaf_up / s.radix - 1e-9)));
    const int up_ports = std::max(1, static_cast<int>(std::floor(s.leaf_up + 1e-9)));
    s.spines_per_pod = need;
    for (int n = need; n <= up_ports; ++n)
      if (up_ports % n == 0) {
        s.spines_per_pod = n;
        break;
      }
    s.leaf_spine_ports = s.leaf_up / s.spines_per_pod;
    return s;
  }
  // 3 tiers: a pod is radix/2 leaves under spines with radix/2 ports down and
  // radix/2 up (non-blocking above the leaf); core group g links spine g of
  // every pod; cores fold parallel ports into trunks.
  s.leaves_per_pod = std::max(1, s.radix / 2);
  // Pods hold whole scalable units where one fits (as SuperPOD designs cable
  // them), unless the smaller pods would need more than the cores can take.
  if (s.rail_optimized && s.leaves_per_su <= s.leaves_per_pod) {
    const int aligned = s.leaves_per_pod / s.leaves_per_su * s.leaves_per_su;
    const int pods = (s.leaves + aligned - 1) / aligned;
    if ((pods + 1) / 2 <= aligned * (s.leaf_up / std::ceil(s.leaf_up - 1e-9)) + 1e-9) s.leaves_per_pod = aligned;
  }
  s.pods = (s.leaves + s.leaves_per_pod - 1) / s.leaves_per_pod;
  s.spines_per_pod = std::max(1, static_cast<int>(std::ceil(s.leaf_up - 1e-9)));
  s.leaf_spine_ports = s.leaf_up / s.spines_per_pod;
  const double spine_down = s.leaves_per_pod * s.leaf_spine_ports;
  s.cores_per_group = std::max(1, (s.pods + 1) / 2);
  // A core has radix ports, one trunk per pod of at least one port.
  if (s.pods > s.radix || s.cores_per_group > spine_down + 1e-9)
    throw InvalidInput(file, "inter_node.switch_radix",
                StrCat(s.endpoints, " NICs need ", s.pods, " pods, more than a 3-tier fat-tree of radix ", s.radix,
                       " connects; raise the radix (4 tiers are not modelled)"));
  s.spine_core_ports = spine_down / s.cores_per_group;
  return s;
}

}  // namespace parasim
