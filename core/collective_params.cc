#include "core/collective_params.h"

namespace parasim {

CollectiveModelParams CollectiveModelParams::AwsEfa() {
  CollectiveModelParams p;
  // Least-squares fit (tests/cost_model/collective_fit_test.cc) to the
  // healthy runs of the Ultra-Scale Playbook nanotron sweep's start-up
  // measurements: world AllGather/ReduceScatter of 1 GiB on 2-64 nodes of AWS
  // p5 (H100, EFA; tests/data/collective_nanotron_startup_h100_efa.csv), the
  // median per node count. Earlier fit: 0.782 / 9.75 µs, on the playbook
  // figure's mean line (both cluster states, labelled 256 MB).
  p.nic_efficiency = 0.934;
  p.net_plugin_latency = Microseconds(9.6);
  p.network_ll128 = false;
  return p;
}

}  // namespace parasim
