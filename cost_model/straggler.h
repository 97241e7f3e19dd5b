// The compute-side synchronisation term: a step ends when the slowest of the
// ranks that synchronise has finished its compute. Identical GPUs of one SKU
// differ in sustained speed (manufacturing and power management: Sinha et
// al., "Not All GPUs Are Created Equal", SC'22, arXiv:2208.11035), so with
// N ranks the step waits E[max of N] ≈ σ·sqrt(2 ln N) of the compute longer
// than the median GPU's (Gaussian extreme-value bound). Per-collective
// latency tails are the collective model's, not added here.
#pragma once

namespace parasim {

// Extra seconds per step for `ranks` synchronising GPUs whose critical
// compute takes `compute_s`, with relative speed spread `sigma`. 0 for one rank.
double StragglerSeconds(double sigma, int ranks, double compute_s);

}  // namespace parasim
