// A GPU run under a power limit below its rated one (`nvidia-smi -pl`,
// `whatif --vary gpu.power_cap=...`). The GPU's power manager holds the
// board under the limit by lowering the SM clock (DVFS), not the memory
// clock: kernels that would draw more than the limit run at the clock where
// they draw exactly the limit. Dynamic power grows with f·V², and V rises
// with f across the DVFS range, so P(f) = P_idle + (P_stock - P_idle)·(f/f0)^3
// (CMOS dynamic power; the cubic DVFS form P = a·f³ + b·f + c used by GPU
// energy simulators). Tensor and FP throughput scale with the SM clock;
// HBM-bound kernels and NCCL keep their bandwidth and draw at most the limit.
// docs/DECISIONS.md "Power cap" gives the sources and what this leaves out.
#pragma once

#include "core/gpu_profile.h"
#include "core/units.h"

namespace parasim {

// The DVFS exponent of P(f) - P_idle above the voltage floor (V ∝ f).
inline constexpr double kDvfsPowerExponent = 3.0;

// The SM clock, relative to the stock limit's, at which a state that draws
// `state_w` at the stock limit draws `cap_w` (1 when it already fits).
double CappedClockRatio(double state_w, double idle_w, double cap_w);

// The profile as the GPU runs under `cap`: compute peaks scaled by the
// tensor-core state's clock ratio, power fractions re-expressed against the
// new limit (each state draws at most the cap), tdp = cap. Throws
// InvalidInput naming `where` unless idle < cap <= tdp.
GpuProfile ApplyPowerCap(const GpuProfile& gpu, Watts cap, const std::string& where);

}  // namespace parasim
