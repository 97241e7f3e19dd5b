// Hand-built cluster specs for the topology tests (independent of presets).
// Figures: data/hardware-and-collectives.md §1–2 (datasheets cited there).
#pragma once

#include "core/cluster_spec.h"

namespace parasim::test {

inline GpuProfile H100() {
  GpuProfile g;
  g.name = "h100-sxm";
  g.nvlink_bandwidth = GBps(450);   // NVLink4 900 GB/s bidir
  g.nvlink_links = 18;
  g.pcie_bandwidth = GBps(64);      // PCIe Gen5 x16
  g.nvls = true;
  return g;
}

inline GpuProfile V100() {
  GpuProfile g;
  g.name = "v100-sxm2";
  g.nvlink_bandwidth = GBps(150);   // 6 NVLink2 x 25 GB/s
  g.nvlink_links = 6;
  g.pcie_bandwidth = GBps(16);      // PCIe Gen3 x16
  return g;
}

// DGX H100 SuperPOD: 8 GPUs, 8 x 400 Gb/s NICs, rail-optimized radix-64 fat-tree.
inline ClusterSpec DgxH100(int nodes) {
  ClusterSpec c;
  c.name = "dgx-h100";
  c.gpu = H100();
  c.gpus_per_node = 8;
  c.nodes = nodes;
  c.intra_node.fabric = IntraNodeFabric::kNvSwitch;
  c.intra_node.nvlink_domain_size = 8;
  c.inter_node.nics_per_node = 8;
  c.inter_node.nic_bandwidth = Gbps(400);
  c.inter_node.switch_radix = 64;
  c.inter_node.tiers = 2;
  c.inter_node.rail_optimized = true;
  return c;
}

// DGX-1 V100: hybrid cube mesh, 4 x 100 Gb/s EDR NICs.
inline ClusterSpec Dgx1(int nodes) {
  ClusterSpec c;
  c.name = "dgx-v100";
  c.gpu = V100();
  c.gpus_per_node = 8;
  c.nodes = nodes;
  c.intra_node.fabric = IntraNodeFabric::kHybridCubeMesh;
  c.inter_node.nics_per_node = 4;
  c.inter_node.nic_bandwidth = Gbps(100);
  c.inter_node.switch_radix = 36;
  c.inter_node.rail_optimized = false;
  return c;
}

// GB200 NVL72: trays of 4 GPUs, 72-GPU NVLink domain, one 400G NIC per GPU.
inline ClusterSpec Nvl72(int racks, int domain = 72) {
  ClusterSpec c;
  c.name = "gb200-nvl72";
  c.gpu = H100();
  c.gpu.nvlink_bandwidth = GBps(900);
  c.gpus_per_node = 4;
  c.nodes = racks * domain / 4;
  c.intra_node.fabric = IntraNodeFabric::kNvlDomain;
  c.intra_node.nvlink_domain_size = domain;
  c.inter_node.nics_per_node = 4;
  c.inter_node.nic_bandwidth = Gbps(400);
  c.inter_node.switch_radix = 64;
  return c;
}

}  // namespace parasim::test
