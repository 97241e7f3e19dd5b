#include "core/collective_params.h"

namespace parasim {

CollectiveModelParams CollectiveModelParams::AwsEfa() {
  CollectiveModelParams p;
  // Fitted to the HF ultrascale-playbook 256 MB AllGather/ReduceScatter sweep
  // (H100, EFA, 2-64 nodes): see tests/cost_model/collective_fit_test.cc
  // (plugin latency refitted with the network chunk pipeline: 10.7 -> 9.75 µs).
  p.nic_efficiency = 0.782;
  p.net_plugin_latency = Microseconds(9.75);
  p.network_ll128 = false;
  return p;
}

}  // namespace parasim
