// Link figures the cluster spec does not carry, each with its source.
#pragma once

#include "core/gpu_profile.h"
#include "core/units.h"

namespace parasim {

// One PCIe hop (GPU to host bridge/switch or to a NIC), physical one-way
// latency. UNCERTAIN: no datasheet figure; NCCL charges 1.0 us for a PCI hop
// with its LL protocol (src/graph/tuning.cc hwLat, v2.30.7-1), which bounds it.
constexpr Seconds kPcieHopLatency = Microseconds(1.0);

// One NVLink's bandwidth per direction: the GPU's NVLink total over its link
// count (V100: 150 GB/s / 6 = 25 GB/s, DGX-1 white paper).
inline BytesPerSecond NvLinkPerLink(const GpuProfile& gpu) {
  const int links = gpu.nvlink_links > 0 ? gpu.nvlink_links : 6;  // 6 = V100 NVLink2 ports
  return gpu.nvlink_bandwidth / links;
}

}  // namespace parasim
