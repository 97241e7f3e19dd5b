#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/number_format.h"

namespace parasim::calibrate {
namespace {

std::string Num(double v) { return FormatSignificant(v, 12); }

std::string Pct(double x) { return Num(std::round(x * 1000.0) / 10.0) + "%"; }

}  // namespace

CalibrationFits FitMicrobench(const MicrobenchData& data, const GpuProfile& base) {
  CalibrationFits f;
  f.device = data.device;
  f.date = data.date;
  // The shape (k0, c) from the fullest sweep first; gemm_max is then fitted
  // through the cost model with that shape, so the two agree.
  // Every bf16 fit reads the bf16 rows only; FP8 rows have their own peak.
  const auto bf16 = [](const std::optional<GemmSweep>& s) { return SamplesOfDtype(s->samples, "bf16"); };
  if (data.gemm) f.gemm_shape = FitGemmShapeModel(bf16(data.gemm), base);
  else if (data.gemm_sustained) f.gemm_shape = FitGemmShapeModel(bf16(data.gemm_sustained), base);
  GpuProfile shaped = base;
  if (f.gemm_shape && f.gemm_shape->summary.usable()) {
    shaped.gemm_k0 = f.gemm_shape->params.k0;
    shaped.gemm_half_outputs = f.gemm_shape->params.c_mn;
  }
  if (data.gemm_sustained) {
    f.gemm = FitGemmEfficiency(bf16(data.gemm_sustained), shaped);
    f.gemm_source = data.gemm_sustained->file;
    if (data.gemm) f.gemm_burst = FitGemmEfficiency(bf16(data.gemm), shaped);
  } else if (data.gemm) {
    f.gemm = FitGemmEfficiency(bf16(data.gemm), shaped);
    f.gemm_source = data.gemm->file;
  }
  if (data.gemm_fp8_sustained) {
    // The bf16 shape model stands in for FP8's (the same kernels' tiling and
    // waves); only the best-shape level is FP8's own. gemm_max_fp8 is the
    // fast-accumulation rate (the forward pass as Transformer Engine runs it);
    // the split rows (dgrad, wgrad) are the separate split rate on top of it,
    // so a split pass, priced at gemm_max_fp8 × split rate, pays it once.
    const std::vector<GemmSample> fp8 = SamplesOfDtype(data.gemm_fp8_sustained->samples, "fp8");
    const std::vector<GemmSample> split = SamplesWithFastAccumulate(fp8, false);
    f.gemm_fp8 = FitGemmEfficiency(SamplesWithFastAccumulate(fp8, true), shaped);
    f.gemm_fp8_source = data.gemm_fp8_sustained->file;
    f.gemm_fp8_split_rows = static_cast<int>(split.size());
    f.gemm_fp8_split =
        FitSplitAccumRate(split, shaped, f.gemm_fp8->summary.usable() ? f.gemm_fp8->gemm_max_efficiency : 0.0);
  }
  if (data.hbm) f.memory = FitMemoryEfficiency(*data.hbm, base);
  if (data.power) f.power = FitPower(*data.power, base);
  f.launch = data.launch;
  return f;
}

GpuProfile ApplyCalibration(const GpuProfile& base, const CalibrationFits& fits, const std::string& name) {
  GpuProfile g = base;
  g.name = name;
  g.file.clear();
  const std::string device = fits.device.empty() ? std::string("unknown device") : fits.device;
  const std::string date = fits.date.empty() ? std::string("unknown date") : fits.date;
  const std::string tag = StrCat("calibrated on ", device, " ", date, " by parasim calibrate");
  g.sources["calibration"] = StrCat(tag, " (from profile ", base.name, ")");
  if (fits.gemm_shape && fits.gemm_shape->summary.usable() && fits.gemm && fits.gemm->summary.usable()) {
    g.gemm_k0 = fits.gemm_shape->params.k0;
    g.gemm_half_outputs = fits.gemm_shape->params.c_mn;
    g.sources["efficiency.gemm_k0"] =
        StrCat(tag, ": GEMM shape model k/(k+k0)·mn/(mn+c) fitted to the sweep, rms time error ",
               Pct(fits.gemm_shape->summary.rms_rel_error));
    g.sources["efficiency.gemm_half_outputs"] = g.sources["efficiency.gemm_k0"];
  }
  if (fits.gemm && fits.gemm->summary.usable()) {
    g.gemm_max_efficiency = fits.gemm->gemm_max_efficiency;
    const std::string file = fits.gemm_source.substr(fits.gemm_source.find_last_of('/') + 1);
    g.sources["efficiency.gemm_max"] =
        StrCat(tag, ": cost model GEMM efficiency (kernel_time.h) fitted to ", fits.gemm->points, " bf16 GEMMs of ",
               file, ", rms time error ", Pct(fits.gemm->summary.rms_rel_error), "; best measured ",
               Pct(fits.gemm->best_efficiency), " of peak (", fits.gemm->best_shape, ")");
  }
  if (fits.gemm_fp8 && fits.gemm_fp8->summary.usable()) {
    g.gemm_max_fp8_efficiency = fits.gemm_fp8->gemm_max_efficiency;
    const std::string file = fits.gemm_fp8_source.substr(fits.gemm_fp8_source.find_last_of('/') + 1);
    g.sources["efficiency.gemm_max_fp8"] =
        StrCat(tag, ": cost model GEMM efficiency (kernel_time.h) against the fp8 peak, fitted to ",
               fits.gemm_fp8->points, " FP8 E4M3 GEMMs (cuBLASLt, TN, per-tensor scales) of ", file,
               ", rms time error ", Pct(fits.gemm_fp8->summary.rms_rel_error), "; best measured ",
               Pct(fits.gemm_fp8->best_efficiency), " of fp8 peak (", fits.gemm_fp8->best_shape,
               "); fast-accumulation rows only, ", fits.gemm_fp8_split_rows, " split-accumulator rows left out");
  }
  if (fits.gemm_fp8 && fits.gemm_fp8->summary.usable() && fits.gemm_fp8_split && fits.gemm_fp8_split->summary.usable()) {
    const SplitAccumFit& s = *fits.gemm_fp8_split;
    g.gemm_fp8_split_accum_rate = s.rate;
    const std::string file = fits.gemm_fp8_source.substr(fits.gemm_fp8_source.find_last_of('/') + 1);
    g.sources["efficiency.gemm_fp8_split_accum"] = StrCat(
        tag, ": least squares in log time of ", s.points,
        " FP8 GEMMs with the split accumulator (cuBLASLt FAST_ACCUM off, fast_accumulate false) of ", file,
        " against the cost model at the fitted gemm_max_fp8, rms time error ", Pct(s.summary.rms_rel_error),
        s.unclamped_rate > 1.0 ? StrCat("; measured ", Num(s.unclamped_rate), " > 1, stored as 1") : std::string());
  }
  if (fits.gemm && fits.gemm_burst && fits.gemm->summary.usable() && fits.gemm_burst->summary.usable()) {
    // The same cost model fitted to the same shapes, at power-capped and at
    // burst clocks: their ratio is what the power cap costs a tensor-core kernel.
    g.sustained_fraction = std::min(1.0, fits.gemm->gemm_max_efficiency / fits.gemm_burst->gemm_max_efficiency);
    g.sources["efficiency.sustained"] =
        StrCat(tag, ": GEMM fit after 10 s of load (", Num(fits.gemm->gemm_max_efficiency), ") / burst fit (",
               Num(fits.gemm_burst->gemm_max_efficiency), ")");
  }
  if (fits.memory && fits.memory->summary.usable()) {
    g.memory_efficiency = fits.memory->memory_efficiency;
    g.sources["efficiency.memory"] =
        StrCat(tag, ": median copy/scale/triad at >= 256 MiB arrays, ", Num(fits.memory->achieved.si() * 1e-9),
               " GB/s of ", Num(base.hbm_bandwidth.si() * 1e-9), " GB/s");
  }
  if (fits.power && fits.power->summary.usable()) {
    const PowerFit& p = *fits.power;
    g.idle_power = p.idle;
    g.power_matmul_fraction = p.matmul_fraction;
    g.power_memory_fraction = p.memory_fraction;
    const std::string nvml = StrCat(tag, ": NVML energy counter, ");
    g.sources["power.idle"] = StrCat(nvml, "idle with a CUDA context (clocks up, as in a pipeline bubble) ",
                                     Num(p.idle.si()), " W");
    g.sources["power.matmul_fraction"] =
        StrCat(nvml, "sustained bf16 GEMM ", Num(p.matmul.si()), " W / TDP ", Num(base.tdp.si()), " W");
    g.sources["power.memory_fraction"] =
        StrCat(nvml, "sustained STREAM triad ", Num(p.memory.si()), " W / TDP ", Num(base.tdp.si()), " W");
  }
  return g;
}

}  // namespace parasim::calibrate
