// The DGX-1 (V100) hybrid cube mesh: 8 GPUs, 6 NVLink2 ports each, wired so
// some pairs have two links, some one and some none. NCCL builds its rings
// as Hamiltonian cycles over direct NVLinks; the best ring set for a subset
// of GPUs is found by search (exhaustive packing of edge-disjoint cycles).
#pragma once

#include <cstdint>
#include <vector>

namespace parasim {

constexpr int kHcmGpus = 8;
constexpr int kHcmLinksPerGpu = 6;  // NVLink2 ports per V100 (DGX-1 white paper)

// Number of NVLinks between local GPUs a and b (0, 1 or 2).
int HcmLinks(int a, int b);

// Rings NCCL can build over the GPUs in `mask` (bit g = local GPU g) using
// direct NVLinks only: each ring a directed cycle visiting every member once.
struct HcmRings {
  std::vector<std::vector<int>> rings;  // directed orders (a ring and its reverse both listed)
  // Per-rank bandwidth of all rings together, in NVLink-link units (x per-link bandwidth).
  int link_units = 0;
};
// Deterministic; computed once per mask and cached (thread-safe).
const HcmRings& HcmBestRings(uint32_t mask);

}  // namespace parasim
