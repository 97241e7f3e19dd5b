// A GPU profile built by hand for calibrate tests (H100 SXM datasheet
// figures), so the tests do not depend on the shipped YAML's values.
#pragma once

#include "core/gpu_profile.h"

namespace parasim::calibrate::testing {

inline GpuProfile HandH100() {
  GpuProfile g;
  g.name = "test-h100";
  g.display_name = "Test H100";
  g.architecture = "hopper";
  g.compute_capability = 90;
  g.bf16_dense = TFlops(989.0);
  g.fp16_dense = TFlops(989.0);
  g.fp8_dense = TFlops(1979.0);
  g.tf32_dense = TFlops(494.5);
  g.fp32 = TFlops(67.0);
  g.hbm_capacity = MiB(81559);
  g.hbm_bandwidth = GBps(3350);
  g.nvlink_bandwidth = GBps(450);
  g.nvlink_links = 18;
  g.pcie_bandwidth = GBps(63);
  g.l2_cache = MB(50);
  g.sm_count = 132;
  g.tdp = Watts(700);
  g.idle_power = Watts(70);
  g.gemm_max_efficiency = 0.8;
  g.memory_efficiency = 0.85;
  g.nvlink_efficiency = 0.824;
  g.nvls = true;
  g.power_matmul_fraction = 1.0;
  g.power_memory_fraction = 0.85;
  g.power_comm_fraction = 0.79;
  g.sources["peak"] = "datasheet";
  return g;
}

}  // namespace parasim::calibrate::testing
