#include "cost_model/power_cap.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace parasim {

double CappedClockRatio(double state_w, double idle_w, double cap_w) {
  if (state_w <= cap_w) return 1.0;
  const double dynamic_now = state_w - idle_w;
  const double dynamic_cap = cap_w - idle_w;
  if (!(dynamic_now > 0) || !(dynamic_cap > 0)) return 1.0;
  return std::pow(dynamic_cap / dynamic_now, 1.0 / kDvfsPowerExponent);
}

GpuProfile ApplyPowerCap(const GpuProfile& gpu, Watts cap, const std::string& where) {
  const double tdp = gpu.tdp.si(), idle = gpu.idle_power.si(), c = cap.si();
  if (!(c > idle) || !(c <= tdp)) {
    throw InvalidInput("", where,
                       StrCat("a power cap must lie above the idle power (", idle, " W) and at most the rated limit (",
                              tdp, " W), got ", c, " W"));
  }
  GpuProfile g = gpu;
  // Tensor-core bound kernels set the clock the compute peaks scale with.
  const double r = CappedClockRatio(tdp * gpu.power_matmul_fraction, idle, c);
  for (FlopsPerSecond* peak : {&g.bf16_dense, &g.fp16_dense, &g.fp8_dense, &g.tf32_dense, &g.fp32}) {
    *peak = *peak * r;
  }
  auto capped_fraction = [&](double fraction) { return std::min(tdp * fraction, c) / c; };
  g.power_matmul_fraction = capped_fraction(gpu.power_matmul_fraction);
  g.power_memory_fraction = capped_fraction(gpu.power_memory_fraction);
  g.power_comm_fraction = capped_fraction(gpu.power_comm_fraction);
  g.tdp = cap;
  return g;
}

}  // namespace parasim
