// Fits the cost model's GEMM efficiency (cost_model/kernel_time.h) to a
// measured sweep. The model is η(m,n,k) = gemm_max_efficiency × shape(m,n,k),
// where shape() (tile and wave quantization over the SMs, tile intensity,
// K-loop pipeline fill) has no free parameter exposed through the profile; so
// the fit finds the gemm_max_efficiency that minimizes the squared log error
// of the model's GemmSeconds (with its HBM roofline) against the measured
// times, and reports how well the shape term follows the data, per tensor-
// parallel degree and pass. FP8 rows (E4M3 operands, bf16 output) are
// measured and modelled against the profile's fp8 dense peak, as the
// evaluator prices an FP8 job's linear layers; fit one dtype at a time.
// FP8 rows timed with the split accumulator (fast_accumulate false) are kept
// out of gemm_max and fitted as their own rate against it (FitSplitAccumRate).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "calibrate/fit_summary.h"
#include "calibrate/microbench_data.h"
#include "core/gpu_profile.h"

namespace parasim::calibrate {

// The profile's dense peak for a sample's dtype: fp8_dense for "fp8", else bf16_dense.
double PeakFor(const GpuProfile& gpu, const std::string& dtype);

// Measured efficiency of one GEMM: achieved FLOP/s over the dense peak of its dtype.
double MeasuredEfficiency(const GemmSample& s, const GpuProfile& gpu);

struct GemmGroupError {
  int points = 0;
  double mean_log_error = 0;  // mean ln(model time / measured time): > 0 = model too slow
  double rms_rel_error = 0;
};

struct GemmFit {
  double gemm_max_efficiency = 0;      // fitted multiplier of the cost model's η
  int points = 0;                      // GEMMs in the fit
  double best_efficiency = 0;          // highest measured η over large shapes (min(m,n,k) ≥ 4096)
  std::string best_shape;              // "m×n×k" of that GEMM
  double mean_efficiency = 0;          // mean measured η over all rows
  FitSummary summary;                  // rms relative error of model vs measured time
  std::map<int, GemmGroupError> by_tp;             // residuals per tensor-parallel degree
  std::map<std::string, GemmGroupError> by_pass;   // per pass (fwd, dgrad, wgrad, square)
  std::map<int, double> mean_efficiency_by_tp;     // measured, Llama rows only
};

struct GemmFitOptions {
  double poor_fit_rms = 0.15;   // rms relative error above which the status is kPoorFit
  int64_t min_dim = 1;          // rows with min(m,n,k) below are left out of the fit
  // Rows faster than this are left out: a kernel's fixed device-side cost
  // (~1-2 µs between kernels, launch_overhead.json) is the software stack's
  // kernel gap, not GEMM efficiency, and dominates below ~20 µs.
  Seconds min_time = Microseconds(20);
};

GemmFit FitGemmEfficiency(const std::vector<GemmSample>& samples, const GpuProfile& gpu,
                          const GemmFitOptions& options = {});

// efficiency.gemm_fp8_split_accum: the rate of split-accumulator FP8 GEMMs
// over the fast-accumulation model (gemm_max_fp8 fitted to the fast rows).
struct SplitAccumFit {
  double rate = 0;           // written to the profile, in (0, 1]; 0 = not fitted
  double unclamped_rate = 0; // the least-squares value before the clamp to 1
  int points = 0;            // split rows whose model time depends on the rate
  FitSummary summary;        // rms relative time error of the split rows at `rate`
  std::map<std::string, GemmGroupError> by_pass;   // residuals per pass (dgrad, wgrad)
};

// Least squares in log time, the loss FitGemmEfficiency uses, of the split
// rows against the cost model at gemm_max_fp8 with the compute divided by the
// rate (GemmSeconds with a split pass; the HBM roofline unchanged). For
// compute-bound rows the minimum is in closed form: ln rate = mean ln(model
// time at rate 1 / measured time), the geometric mean of achieved over
// predicted rate. Rows the roofline bounds at every rate carry no information
// and are left out. A rate above 1 (split faster than fast) is stored as 1,
// status kPoorFit, said in the message.
SplitAccumFit FitSplitAccumRate(const std::vector<GemmSample>& split_rows, const GpuProfile& gpu,
                                double gemm_max_fp8, const GemmFitOptions& options = {});

// The cost model's predicted time for one GEMM under `gpu`, with the given
// gemm_max_efficiency (the evaluator's DeviceRates for the sample's dtype)
// and the pass's accumulator rate (1 = fast accumulation, or not FP8).
double ModelGemmSeconds(const GpuProfile& gpu, double gemm_max_efficiency, const GemmSample& s,
                        double accumulate_rate = 1.0);

}  // namespace parasim::calibrate
