// A second, smooth GEMM efficiency model fitted alongside the cost model's
// (gemm_fit.h), to show where the latter's shape term departs from cuBLAS:
//
//   η(m, n, k) = g · k / (k + k0) · mn / (mn + c)
//
// k/(k + k0): each output tile pays a fixed prologue/epilogue (operand
//   pipeline fill, accumulator write-back) worth k0 steps of its K loop.
// mn/(mn + c): a C matrix of few outputs cannot keep every SM busy; c is the
//   output count at which half of the machine works. No ceil(): Hopper cuBLAS
//   splits work stream-K/split-K style, which smooths the wave quantization a
//   tile-by-tile model predicts (the H100 sweep shows no wave steps).
// Time = max(2mnk / (peak · η), HBM roofline of operands and result).
// Fitted by Levenberg–Marquardt on ln(time) residuals over (ln g, ln k0, ln c).
#pragma once

#include <map>
#include <vector>

#include "calibrate/fit_summary.h"
#include "calibrate/microbench_data.h"
#include "core/gpu_profile.h"

namespace parasim::calibrate {

struct GemmShapeParams {
  double g = 0.8;      // best-shape efficiency
  double k0 = 64;      // K-loop steps' worth of fixed per-tile cost
  double c_mn = 1e5;   // output elements at half occupancy
};

double ShapeModelEfficiency(const GemmShapeParams& p, double m, double n, double k);
// Time under the model (η above, with the HBM roofline at the profile's
// achievable bandwidth hbm_bandwidth × memory_efficiency).
double ShapeModelSeconds(const GemmShapeParams& p, const GpuProfile& gpu, const GemmSample& s);

struct GemmShapeFit {
  GemmShapeParams params;
  FitSummary summary;                  // rms relative time error over all rows
  std::map<int, double> rms_by_tp;     // rms relative time error per tensor-parallel degree
};

// Rows faster than `min_time` are left out, as in FitGemmEfficiency.
GemmShapeFit FitGemmShapeModel(const std::vector<GemmSample>& samples, const GpuProfile& gpu,
                               const GemmShapeParams& start = {}, Seconds min_time = Microseconds(20));

}  // namespace parasim::calibrate
