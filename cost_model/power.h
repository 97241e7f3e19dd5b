// GPU power by activity state (DESIGN.md §4 Power): tensor-core bound
// kernels, memory-bound kernels, NCCL kernels running alone, idle (pipeline
// bubble, waiting). Values come from the GPU profile (fractions of TDP and
// idle power), which calibration refits from NVML samples. Communication that
// overlaps compute draws the compute state's power (the compute kernels set
// the clock and the power draw; NCCL's few SMs add little).
#pragma once

#include "core/cluster_spec.h"
#include "core/gpu_profile.h"
#include "cost_model/workload.h"

namespace parasim {

PowerStates PowerStatesOf(const GpuProfile& gpu);

// Time one GPU spends in each state during a step (they sum to the step time).
struct StateTimes {
  double matmul_s = 0, memory_s = 0, comm_only_s = 0, idle_s = 0;
  double Total() const { return matmul_s + memory_s + comm_only_s + idle_s; }
};

struct PowerEstimate {
  double gpu_avg_w = 0;           // average per GPU over the step
  double energy_per_step_j = 0;   // all GPUs + node overhead (when the cluster gives it)
  double comm_only_energy_j = 0;  // all GPUs, energy spent in exposed communication
};

// Switches of the inter-node fabric, for network power: a fat tree of
// radix-k switches with half the ports down at each tier below the top
// (leaves = ⌈NICs / (k/2)⌉; each tier above holds half as many as the one
// below, the top tier's switches use all ports down); a single switch is one.
int FabricSwitchCount(const ClusterSpec& cluster);

PowerEstimate EstimatePower(const PowerStates& p, const StateTimes& t, int world_size, int gpus_per_node,
                            double node_overhead_w);

}  // namespace parasim
