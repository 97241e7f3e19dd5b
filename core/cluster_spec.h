// A cluster: GPU profile, nodes, intra-node and inter-node fabric. Loaded
// from a preset (dgx-h100, ...) or a YAML file (core/cluster_loader.h).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/collective_params.h"
#include "core/gpu_profile.h"
#include "core/units.h"

namespace parasim {

enum class IntraNodeFabric { kNvSwitch, kHybridCubeMesh, kNvlDomain, kPcie };
enum class InterNodeFabric { kFatTree, kSingleSwitch };
// What carries NCCL's traffic between nodes: its latency and achievable
// bandwidth differ (cost_model/collective_cost.h, CollectiveModelParams).
enum class NetworkTransport { kInfiniBand, kRoce, kAwsEfa };
const char* ToString(NetworkTransport t);

struct IntraNodeSpec {
  IntraNodeFabric fabric = IntraNodeFabric::kNvSwitch;
  int nvlink_domain_size = 8;        // GPUs sharing one NVLink domain
  int nvlink_domain_usable = 0;      // GPUs of each domain a job may use (0: all); NVL72 with 2 trays spare: 64
  Seconds nvlink_latency = Microseconds(0.7);  // per hop, see hw_profiles sources
};

struct InterNodeSpec {
  InterNodeFabric fabric = InterNodeFabric::kFatTree;
  int tiers = 2;                     // switch tiers: 1 (single switch), 2 or 3 (fat-tree);
                                     // "auto" in files: the fewest that hold every NIC at 1:1
  bool rail_optimized = true;
  int scalable_unit_nodes = 32;      // nodes per scalable unit (rail-optimized leaf group)
  int nics_per_node = 8;
  BytesPerSecond nic_bandwidth = Gbps(400);  // per NIC, per direction
  double oversubscription = 1.0;     // down:up ratio at each leaf (>= 1)
  int switch_radix = 64;
  Seconds switch_latency = Nanoseconds(300);  // per switch traversal
  Seconds nic_latency = Microseconds(1.5);    // NIC + PCIe + proxy per message
  bool sharp = false;                // IB SHARP (CollNet) available
  NetworkTransport transport = NetworkTransport::kInfiniBand;
};

struct ClusterSpec {
  std::string name;
  GpuProfile gpu;
  int gpus_per_node = 8;
  int nodes = 1;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  Watts node_overhead_power;         // CPUs, NICs, fans per node (0 = not counted)
  Watts network_power_per_switch;    // 0 = not counted
  std::map<std::string, std::string> sources;  // field -> source, from the file
  std::string file;                  // where it was loaded from ("" = built in)
  // A fitted collective profile the cluster names (`hw_profile:`, a path
  // resolved against the cluster file's folder; "" = none): --hw-profile
  // overrides it (calibrate/collective_profile.h).
  std::string hw_profile;
  // That profile's parameters once read (calibrate::AttachHwProfile); nullopt
  // = the transport's preset. Carried by value, so evaluators of clusters with
  // different profiles run side by side (no process-wide state).
  std::optional<CollectiveModelParams> collective_params;

  int TotalGpus() const { return gpus_per_node * nodes; }
};

}  // namespace parasim
