// The metrics every tier derives the same way from what it measured over one
// step (DESIGN.md §5): throughput, MFU/HFU and TFLOP/s, average GPU power,
// energy per step (GPUs + node overhead + fabric switches), tokens per joule
// and the energy of exposed communication. Tier A (cost_model/evaluator.cc)
// and tiers B/C (simulator/simulate.cc) both finish their reports here, so
// the energy a report counts does not depend on the tier that timed the step.
#pragma once

#include "core/cluster_spec.h"
#include "cost_model/report.h"

namespace parasim {

// Power drawn beside the GPUs (0 W = not counted): per node, and per switch
// of the inter-node fabric (power.h FabricSwitchCount).
struct FacilityPower {
  double node_overhead_w = 0;
  int gpus_per_node = 1;
  double switch_w = 0;
  int switches = 0;
};
FacilityPower FacilityPowerOf(const ClusterSpec& cluster);

// GPU energy as a tier knows it: tier A averages the power per GPU over its
// stage shapes, the simulator sums the energy of its ranks. The other form
// is derived from it.
struct GpuDraw {
  bool per_gpu_average = true;
  double value = 0;   // W per GPU, or J for all GPUs
  static GpuDraw AveragePerGpu(double watts) { return {true, watts}; }
  static GpuDraw AllGpus(double joules) { return {false, joules}; }
};

// What one step took, as measured by a tier.
struct StepMeasures {
  double step_s = 0;
  double tokens = 0;                 // per step, whole job
  int world = 1;                     // GPUs
  double model_flops = 0;            // per step, whole job (MFU basis)
  double hardware_flops = 0;         // + recomputation (HFU basis)
  double peak_flops = 0;             // dense BF16 per GPU; <= 0 leaves MFU and HFU at 0
  double own_peak_flops = 0;         // the precision's own peak (mfu_own_precision); <= 0: peak_flops
  GpuDraw gpu;
  double comm_only_energy_j = 0;     // all GPUs, in exposed communication
};

// Fills step_time, tokens_per_s(_per_gpu), (hardware_)tflops_per_gpu,
// mfu, hfu, power_per_gpu, energy_per_step, tokens_per_joule and
// exposed_comm_energy_per_token; leaves every other field as it is.
void FinishReport(const StepMeasures& s, const FacilityPower& facility, Report* rep);

}  // namespace parasim
