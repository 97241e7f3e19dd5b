// Fits of the GPU profile's memory and power parameters from the HBM sweep
// and the NVML power states.
#pragma once

#include "calibrate/fit_summary.h"
#include "calibrate/microbench_data.h"
#include "core/gpu_profile.h"

namespace parasim::calibrate {

struct MemoryFit {
  double memory_efficiency = 0;  // achieved / profile HBM bandwidth
  BytesPerSecond achieved;       // median over the rows used
  BytesPerSecond best_copy;      // best memcpy/copy row at those sizes
  FitSummary summary;            // rms_rel_error: spread of the rows around the median
};

// Streaming kernels (copy, scale, triad; not the copy engine) at array sizes
// of at least max(8 × L2, 256 MiB), where L2 holds no meaningful share.
MemoryFit FitMemoryEfficiency(const BandwidthSweep& sweep, const GpuProfile& gpu);

struct PowerFit {
  Watts idle, matmul, memory;   // mean per state (energy counter when present)
  Watts limit;                  // NVML enforced power limit during the run
  double matmul_fraction = 0;   // of the profile TDP, at most 1
  double memory_fraction = 0;
  FitSummary summary;           // rms_rel_error: sampled vs energy-counter means
};

// Needs the idle, gemm and memory states; fractions are of the profile's TDP.
// A mean above TDP by measurement noise (≤ 2%) is stored as 1 and said in the
// message; more than that is a poor fit (the card's limit exceeds its TDP).
PowerFit FitPower(const PowerStates& states, const GpuProfile& gpu);

}  // namespace parasim::calibrate
