#include "topology/cluster_shape.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace parasim {

int ClusterShape::LeafBlockDomains() const {
  if (tiers <= 1) return domains;
  if (rail_optimized) return su_domains;
  return std::max(1, leaf_down / std::max(1, nics_per_domain));
}

int ClusterShape::PodBlockDomains() const {
  if (tiers <= 2) return domains;
  if (rail_optimized) return su_domains * std::max(1, leaves_per_pod / nics_per_domain);
  return std::max(1, leaves_per_pod * leaf_down / std::max(1, nics_per_domain));
}

ClusterShape MakeClusterShape(const ClusterSpec& c) {
  const std::string file = c.file;
  if (c.gpus_per_node < 1) throw Error(file, "gpus_per_node", "must be >= 1");
  if (c.nodes < 1) throw Error(file, "nodes", "must be >= 1");
  ClusterShape s;
  s.gpus = c.TotalGpus();
  s.intra = c.intra_node.fabric;
  if (s.intra == IntraNodeFabric::kNvlDomain) {
    const int d = c.intra_node.nvlink_domain_size;
    if (d < c.gpus_per_node || d % c.gpus_per_node != 0)
      throw Error(file, "intra_node.nvlink_domain_size",
                  StrCat(d, " must be a multiple of gpus_per_node (", c.gpus_per_node, ")"));
    if (s.gpus % d != 0)
      throw Error(file, "nodes", StrCat(s.gpus, " GPUs do not fill whole NVLink domains of ", d));
    s.domain_gpus = d;
  } else {
    if (s.intra == IntraNodeFabric::kHybridCubeMesh && c.gpus_per_node != 8)
      throw Error(file, "gpus_per_node", "the DGX-1 hybrid cube mesh has 8 GPUs per node");
    s.domain_gpus = c.gpus_per_node;
  }
  s.domains = s.gpus / s.domain_gpus;
  s.nics_per_domain = c.inter_node.nics_per_node * (s.domain_gpus / c.gpus_per_node);
  if (s.domains == 1) return s;   // one NVLink domain: no fabric traffic

  const InterNodeSpec& in = c.inter_node;
  if (s.nics_per_domain < 1) throw Error(file, "inter_node.nics_per_node", "a multi-node cluster needs NICs");
  if (s.nics_per_domain > s.domain_gpus && s.nics_per_domain % s.domain_gpus != 0)
    throw Error(file, "inter_node.nics_per_node", "more NICs than GPUs must be a whole number per GPU");
  if (!(in.nic_bandwidth.si() > 0)) throw Error(file, "inter_node.nic_bandwidth", "must be > 0");
  if (in.switch_radix < 2) throw Error(file, "inter_node.switch_radix", "must be >= 2");
  if (!(in.oversubscription >= 1.0) || !std::isfinite(in.oversubscription))
    throw Error(file, "inter_node.oversubscription", "must be >= 1 (down:up ports at a leaf)");
  s.radix = in.switch_radix;
  s.endpoints = s.domains * s.nics_per_domain;
  s.rail_optimized = in.rail_optimized;

  if (in.fabric == InterNodeFabric::kSingleSwitch) {
    if (s.endpoints > s.radix)
      throw Error(file, "inter_node.switch_radix",
                  StrCat("a single switch of ", s.radix, " ports cannot connect ", s.endpoints, " NICs"));
    s.tiers = 1;
    s.leaves = 1;
    s.leaf_down = s.endpoints;
    return s;
  }
  if (in.tiers != 2 && in.tiers != 3) throw Error(file, "inter_node.tiers", "fat-trees have 2 or 3 tiers");

  // Leaf ports split down:up = oversubscription; uplink capacity kept exact
  // (in port units) so a 2:1 leaf has exactly half its down capacity up.
  const double o = in.oversubscription;
  s.leaf_down = std::max(1, static_cast<int>(std::lround(s.radix * o / (1.0 + o))));
  if (s.leaf_down >= s.radix) s.leaf_down = s.radix - 1;
  s.leaf_up = s.leaf_down / o;
  if (s.rail_optimized) {
    s.su_domains = s.leaf_down;
    const int sus = (s.domains + s.su_domains - 1) / s.su_domains;
    s.leaves = sus * s.nics_per_domain;
  } else {
    s.leaves = (s.endpoints + s.leaf_down - 1) / s.leaf_down;
  }

  s.tiers = in.tiers;
  if (s.tiers == 2 && s.leaves > s.radix) {   // a spine cannot reach every leaf
    s.tiers = 3;
    s.promoted_to_3_tiers = true;
  }
  if (s.tiers == 2) {
    s.leaves_per_pod = s.leaves;
    s.pods = 1;
    s.spines_per_pod = std::max(1, static_cast<int>(std::ceil(s.leaves * s.leaf_up / s.radix - 1e-9)));
    s.leaf_spine_ports = s.leaf_up / s.spines_per_pod;
    return s;
  }
  // 3 tiers: a pod is radix/2 leaves under spines with radix/2 ports down and
  // radix/2 up (non-blocking above the leaf); core group g links spine g of
  // every pod; cores fold parallel ports into trunks.
  s.leaves_per_pod = std::max(1, s.radix / 2);
  s.pods = (s.leaves + s.leaves_per_pod - 1) / s.leaves_per_pod;
  if (s.pods > s.radix)
    throw Error(file, "inter_node.switch_radix",
                StrCat(s.endpoints, " NICs need ", s.pods, " pods, more than a 3-tier fat-tree of radix ", s.radix,
                       " connects (", s.radix, "); raise the radix"));
  s.spines_per_pod = std::max(1, static_cast<int>(std::ceil(s.leaf_up - 1e-9)));
  s.leaf_spine_ports = s.leaf_up / s.spines_per_pod;
  const double spine_down = s.leaves_per_pod * s.leaf_spine_ports;
  s.cores_per_group = std::max(1, (s.pods + 1) / 2);
  s.spine_core_ports = spine_down / s.cores_per_group;
  return s;
}

}  // namespace parasim
