#include "calibrate/gemm_fit.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "cost_model/kernel_time.h"

namespace parasim::calibrate {
namespace {

DeviceRates RatesFor(const GpuProfile& gpu, double gemm_max, const std::string& dtype) {
  // As the evaluator builds them (cost_model/evaluator.cc): the dtype's peak,
  // HBM at the profile's streaming efficiency, bf16 activation bytes in the
  // roofline (an FP8 job's DeviceRates keep element_bytes 2).
  DeviceRates d;
  d.peak_flops = PeakFor(gpu, dtype);
  d.gemm_max_efficiency = gemm_max;
  d.hbm_Bps = gpu.hbm_bandwidth.si() * gpu.memory_efficiency;
  d.sm_count = gpu.sm_count;
  d.gemm_k0 = gpu.gemm_k0;
  d.gemm_half_outputs = gpu.gemm_half_outputs;
  return d;
}

double SumSqLog(const std::vector<const GemmSample*>& rows, const GpuProfile& gpu, double g, double rate) {
  double sum = 0;
  for (const GemmSample* s : rows) {
    const double e = std::log(ModelGemmSeconds(gpu, g, *s, rate) / s->time.si());
    sum += e * e;
  }
  return sum;
}

// Golden-section search for the minimum of a unimodal f on [lo, hi].
template <typename F>
double GoldenMinimum(F f, double lo, double hi, int* iterations) {
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  int it = 0;
  while (hi - lo > 1e-7 && it < 200) {
    ++it;
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = f(x2);
    }
  }
  *iterations = it;
  return 0.5 * (lo + hi);
}

std::vector<const GemmSample*> FittableRows(const std::vector<GemmSample>& samples, const GemmFitOptions& options) {
  std::vector<const GemmSample*> rows;
  for (const auto& s : samples)
    if (std::min({s.m, s.n, s.k}) >= options.min_dim && s.time >= options.min_time && s.time.si() > 0)
      rows.push_back(&s);
  return rows;
}

void Accumulate(GemmGroupError& g, double log_err, double rel_err) {
  ++g.points;
  g.mean_log_error += log_err;
  g.rms_rel_error += rel_err * rel_err;
}

void Finish(GemmGroupError& g) {
  if (g.points == 0) return;
  g.mean_log_error /= g.points;
  g.rms_rel_error = std::sqrt(g.rms_rel_error / g.points);
}

}  // namespace

double PeakFor(const GpuProfile& gpu, const std::string& dtype) {
  return dtype == "fp8" ? gpu.fp8_dense.si() : gpu.bf16_dense.si();
}

double MeasuredEfficiency(const GemmSample& s, const GpuProfile& gpu) {
  return s.Flop() / (s.time.si() * PeakFor(gpu, s.dtype));
}

double ModelGemmSeconds(const GpuProfile& gpu, double gemm_max_efficiency, const GemmSample& s,
                        double accumulate_rate) {
  // Priced as the evaluator prices a split pass (any pass: dgrad's slot holds the rate).
  DeviceRates d = RatesFor(gpu, gemm_max_efficiency, s.dtype);
  d.dgrad_rate = accumulate_rate;
  return GemmSeconds(d, static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k),
                     GemmPass::kDgrad);
}

GemmFit FitGemmEfficiency(const std::vector<GemmSample>& samples, const GpuProfile& gpu,
                          const GemmFitOptions& options) {
  GemmFit fit;
  const std::vector<const GemmSample*> rows = FittableRows(samples, options);
  FitSummary& sum = fit.summary;
  bool peaks = gpu.sm_count > 0;
  for (const GemmSample* s : rows) peaks = peaks && PeakFor(gpu, s->dtype) > 0;
  if (rows.empty() || !peaks) {
    sum.status = FitStatus::kInsufficientData;
    sum.message = rows.empty() ? "no GEMM rows to fit"
                               : StrCat("the profile has no ", rows.front()->dtype, " peak or SM count");
    return fit;
  }
  // One parameter, unimodal loss (the model time is ∝ 1/g until the HBM
  // roofline takes over): golden-section search on [0.05, 1].
  int it = 0;
  const double g = GoldenMinimum([&](double x) { return SumSqLog(rows, gpu, x, 1.0); }, 0.05, 1.0, &it);
  fit.gemm_max_efficiency = g;
  fit.points = static_cast<int>(rows.size());
  sum.iterations = it;

  double rel_sq = 0, eff_sum = 0;
  std::map<int, std::pair<double, int>> eff_tp;
  for (const GemmSample* s : rows) {
    const double model = ModelGemmSeconds(gpu, g, *s);
    const double log_err = std::log(model / s->time.si());
    const double rel_err = (model - s->time.si()) / s->time.si();
    rel_sq += rel_err * rel_err;
    Accumulate(fit.by_tp[s->tp], log_err, rel_err);
    Accumulate(fit.by_pass[s->pass], log_err, rel_err);
    const double eta = MeasuredEfficiency(*s, gpu);
    eff_sum += eta;
    if (!s->model.empty()) {
      eff_tp[s->tp].first += eta;
      eff_tp[s->tp].second += 1;
    }
    if (std::min({s->m, s->n, s->k}) >= 4096 && eta > fit.best_efficiency) {
      fit.best_efficiency = eta;
      fit.best_shape = StrCat(s->m, "x", s->n, "x", s->k);
    }
  }
  for (auto& [tp, e] : fit.by_tp) Finish(e);
  for (auto& [p, e] : fit.by_pass) Finish(e);
  for (const auto& [tp, acc] : eff_tp) fit.mean_efficiency_by_tp[tp] = acc.first / acc.second;
  fit.mean_efficiency = eff_sum / static_cast<double>(rows.size());
  sum.rms_rel_error = std::sqrt(rel_sq / static_cast<double>(rows.size()));
  const bool at_bound = g < 0.05 + 1e-5 || g > 1.0 - 1e-5;
  if (at_bound) {
    sum.status = FitStatus::kIllConditioned;
    sum.message = StrCat("gemm_max_efficiency ran to the bound of [0.05, 1] (", g, "): the sweep does not match the model");
  } else {
    sum.status = sum.rms_rel_error > options.poor_fit_rms ? FitStatus::kPoorFit : FitStatus::kConverged;
    sum.message = StrCat(rows.size(), " GEMMs, gemm_max_efficiency ", g, ", rms relative time error ",
                         sum.rms_rel_error);
  }
  return fit;
}

SplitAccumFit FitSplitAccumRate(const std::vector<GemmSample>& split_rows, const GpuProfile& gpu,
                                double gemm_max_fp8, const GemmFitOptions& options) {
  SplitAccumFit fit;
  FitSummary& sum = fit.summary;
  // Rows whose model time moves with the rate: compute-bound at some rate in
  // the search range (at its low end the compute term is largest).
  constexpr double kLo = 0.05, kHi = 2.0;   // above 1 searched, to see and say a sweep's > 1
  std::vector<const GemmSample*> rows;
  bool peaks = gpu.sm_count > 0 && gemm_max_fp8 > 0;
  for (const GemmSample* s : FittableRows(split_rows, options)) {
    peaks = peaks && PeakFor(gpu, s->dtype) > 0;
    if (!peaks) break;
    if (ModelGemmSeconds(gpu, gemm_max_fp8, *s, kLo) > ModelGemmSeconds(gpu, gemm_max_fp8, *s, 1.0)) rows.push_back(s);
  }
  if (rows.empty() || !peaks) {
    sum.status = FitStatus::kInsufficientData;
    sum.message = !peaks ? "no usable fast-accumulation fit or fp8 peak to measure the split rows against"
                  : split_rows.empty()
                      ? "no split-accumulator rows (fast_accumulate false): efficiency.gemm_fp8_split_accum left out "
                        "(neutral)"
                      : "no split-accumulator row long and compute-bound enough to fit: efficiency.gemm_fp8_split_accum "
                        "left out (neutral)";
    return fit;
  }
  int it = 0;
  const double r = GoldenMinimum([&](double x) { return SumSqLog(rows, gpu, gemm_max_fp8, x); }, kLo, kHi, &it);
  sum.iterations = it;
  fit.points = static_cast<int>(rows.size());
  fit.unclamped_rate = r;
  fit.rate = std::min(r, 1.0);
  double rel_sq = 0;
  for (const GemmSample* s : rows) {
    const double model = ModelGemmSeconds(gpu, gemm_max_fp8, *s, fit.rate);
    const double rel_err = (model - s->time.si()) / s->time.si();
    rel_sq += rel_err * rel_err;
    Accumulate(fit.by_pass[s->pass], std::log(model / s->time.si()), rel_err);
  }
  for (auto& [p, e] : fit.by_pass) Finish(e);
  sum.rms_rel_error = std::sqrt(rel_sq / static_cast<double>(rows.size()));
  if (r < kLo + 1e-5 || r > kHi - 1e-5) {
    sum.status = FitStatus::kIllConditioned;
    sum.message = StrCat("the split-accumulator rate ran to the bound of [", kLo, ", ", kHi, "] (", r,
                         "): the split rows do not match the fast-row model");
  } else if (r > 1.0) {
    sum.status = FitStatus::kPoorFit;
    sum.message = StrCat("WARNING: the ", rows.size(), " split-accumulator GEMMs ran faster than the fast-accumulation "
                         "model (rate ", r, " > 1); stored as 1 (no slowdown): check the sweep's fast rows");
  } else {
    sum.status = sum.rms_rel_error > options.poor_fit_rms ? FitStatus::kPoorFit : FitStatus::kConverged;
    sum.message = StrCat(rows.size(), " split-accumulator GEMMs, rate ", r, " of the fast-accumulation model, rms "
                         "relative time error ", sum.rms_rel_error);
  }
  return fit;
}

}  // namespace parasim::calibrate
