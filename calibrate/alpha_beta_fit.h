// Latency-bandwidth (α-β, Hockney) fit of a collective's time against its
// message size: t(S) = α + S/β, by least squares on relative residuals
// ((α + S/β − t)/t), so a 30 µs row and a 30 ms row weigh the same. β is the
// algorithm bandwidth (nccl-tests' algbw convention, S/t); bus_beta = β × the
// table's bus factor. One α-β pair cannot follow NCCL's protocol switches
// (LL → LL128 → Simple) across nine decades of size: fit a size window
// (min_size/max_size) to get a local model, and read rms_rel_error.
#pragma once

#include <string>
#include <vector>

#include "calibrate/fit_summary.h"
#include "calibrate/nccl_tests_log.h"
#include "core/units.h"

namespace parasim::calibrate {

struct SizeTime {
  Bytes size;
  Seconds time;
};

struct AlphaBetaOptions {
  Bytes min_size = Bytes(1);      // rows below are ignored (size-0 rows always are)
  Bytes max_size = Bytes(1e300);  // rows above are ignored
  bool in_place = false;          // fit the in-place columns instead of out-of-place
  double poor_fit_rms = 0.25;     // rms relative error above which the status is kPoorFit
};

struct AlphaBetaFit {
  std::string collective;
  int ranks = 0;
  Seconds alpha;
  BytesPerSecond beta;      // algorithm bandwidth
  BytesPerSecond bus_beta;  // beta × bus factor (0 when the table has none)
  int points = 0;
  FitSummary summary;
};

// Fits α and β to (size, time) points. α is kept ≥ 0: when the unconstrained
// solution has α < 0, the fit is redone through the origin (said in message).
AlphaBetaFit FitAlphaBeta(const std::vector<SizeTime>& points, const AlphaBetaOptions& options = {});

// Fits one nccl-tests table (its out-of-place or in-place columns).
AlphaBetaFit FitAlphaBeta(const NcclTestsTable& table, const AlphaBetaOptions& options = {});

}  // namespace parasim::calibrate
