#include "calibrate/device_fits.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/statistics.h"

namespace parasim::calibrate {

MemoryFit FitMemoryEfficiency(const BandwidthSweep& sweep, const GpuProfile& gpu) {
  MemoryFit fit;
  FitSummary& s = fit.summary;
  s.iterations = 1;
  const double min_array = std::max(8.0 * gpu.l2_cache.si(), 256.0 * 1048576.0);
  std::vector<double> rates;
  double best_copy = 0;
  for (const auto& r : sweep.samples) {
    if (r.array.si() < min_array) continue;
    if (r.op == "copy" || r.op == "scale" || r.op == "triad") rates.push_back(r.Rate().si());
    if (r.op == "copy" || r.op == "memcpy_d2d") best_copy = std::max(best_copy, r.Rate().si());
  }
  if (rates.empty() || gpu.hbm_bandwidth.si() <= 0) {
    s.status = FitStatus::kInsufficientData;
    s.message = StrCat("no copy/scale/triad rows with arrays of at least ", min_array / 1048576.0, " MiB");
    return fit;
  }
  const double median = Median(rates);
  double sq = 0;
  for (double r : rates) sq += (r - median) * (r - median) / (median * median);
  s.rms_rel_error = std::sqrt(sq / static_cast<double>(rates.size()));
  fit.achieved = BytesPerSecond(median);
  fit.best_copy = BytesPerSecond(best_copy);
  fit.memory_efficiency = median / gpu.hbm_bandwidth.si();
  if (fit.memory_efficiency > 1.0) {
    s.status = FitStatus::kPoorFit;
    s.message = StrCat("measured ", median * 1e-9, " GB/s exceeds the profile's HBM bandwidth ",
                       gpu.hbm_bandwidth.si() * 1e-9, " GB/s: wrong profile for this device?");
    fit.memory_efficiency = 1.0;
    return fit;
  }
  s.status = s.rms_rel_error > 0.1 ? FitStatus::kPoorFit : FitStatus::kConverged;
  s.message = StrCat(rates.size(), " rows, median ", median * 1e-9, " GB/s, spread ", s.rms_rel_error);
  return fit;
}

PowerFit FitPower(const PowerStates& states, const GpuProfile& gpu) {
  PowerFit fit;
  FitSummary& s = fit.summary;
  s.iterations = 1;
  const PowerState* idle = states.Find("idle");
  const PowerState* gemm = states.Find("gemm");
  const PowerState* mem = states.Find("memory");
  if (!idle || !gemm || !mem || gpu.tdp.si() <= 0) {
    s.status = FitStatus::kInsufficientData;
    s.message = "need the idle, gemm and memory states and a profile TDP";
    return fit;
  }
  fit.idle = idle->Mean();
  fit.matmul = gemm->Mean();
  fit.memory = mem->Mean();
  fit.limit = states.limit;
  // Agreement of the two NVML readings in the steady windows.
  double sq = 0;
  int n = 0;
  for (const PowerState* st : {idle, gemm, mem}) {
    if (st->from_energy.si() <= 0) continue;
    const double r = (st->sampled.si() - st->from_energy.si()) / st->from_energy.si();
    sq += r * r;
    ++n;
  }
  s.rms_rel_error = n ? std::sqrt(sq / n) : 0.0;
  const double tdp = gpu.tdp.si();
  fit.matmul_fraction = fit.matmul.si() / tdp;
  fit.memory_fraction = fit.memory.si() / tdp;
  std::string note;
  s.status = FitStatus::kConverged;
  // NVML's power reading is accurate to about ±5 W on data-center boards
  // (NVML API reference, nvmlDeviceGetPowerUsage); 2% of 700 W is 14 W.
  constexpr double kNoise = 1.02;
  for (double* f : {&fit.matmul_fraction, &fit.memory_fraction}) {
    if (*f > kNoise) {
      s.status = FitStatus::kPoorFit;
      note = StrCat("; a state drew ", *f, " × the profile TDP: the card's limit (", fit.limit.si(),
                    " W) is above the profile's TDP");
    }
    if (*f > 1.0) {
      if (note.empty()) note = StrCat("; ", *f, " × TDP is within NVML noise of the limit, stored as 1");
      *f = 1.0;
    }
  }
  if (!(fit.idle < fit.memory && fit.memory <= fit.matmul)) {
    s.status = FitStatus::kPoorFit;
    note += "; expected idle < memory-bound ≤ matmul power";
  }
  s.message = StrCat("idle ", fit.idle.si(), " W, gemm ", fit.matmul.si(), " W, memory ", fit.memory.si(),
                     " W of TDP ", tdp, " W", note);
  return fit;
}

}  // namespace parasim::calibrate
