// The collective model's fabric parameters (DESIGN.md §4): the named parts of
// the scale-dependent model that NCCL's own tuning constants leave out. Plain
// data in core so that a cluster can carry a fitted set (`--hw-profile`,
// `hw_profile:`) to every evaluator that prices its collectives.
#pragma once

#include "core/units.h"

namespace parasim {

// The named parts of the scale-dependent model (DESIGN.md §4) that NCCL's own
// tuning constants leave out. Defaults: sources and fits in docs/DECISIONS.md
// ("Collectives:") and tests/cost_model/collective_fit_test.cc.
struct CollectiveModelParams {
  // Host cost of starting one collective: a kernel launch per GPU the calling
  // thread drives (NCCL group launch). Training runs one process per GPU.
  Seconds launch_per_gpu = Microseconds(2.86);  // fitted: nccl-tests 8xH100 -g 8, sizes <= 64 KB
  int gpus_per_launch_thread = 1;               // nccl-tests -g 8 = 8

  // Achieved fraction of a NIC's line rate: NCCL's inter-node channel ladder
  // tops out at 48 GB/s for a 50 GB/s (400 Gb/s) NIC (search.cc), and NCCL
  // maintainers quote 46-48 GB/s per NDR NIC (nccl-tests #290).
  double nic_efficiency = 0.96;
  // NCCL's inter-node per-channel bandwidth (top of the Hopper inter ladder);
  // the number of network channels is the NIC bandwidth / this.
  BytesPerSecond net_channel_bandwidth = GBps(48);
  // Extra latency the network plugin reports per network hop, added to NCCL's
  // NET constants (twice for Simple: "flush"). IB verbs: 0 (tuning.cc).
  Seconds net_plugin_latency = Microseconds(0);
  // NCCL's netOverhead: per intra step of a multi-node ring, x3 for Simple;
  // 1.0 us Intel/other CPUs, 2.0 AMD (tuning.cc).
  Seconds net_overhead = Microseconds(1.0);

  // Lock-step synchronization (DESIGN.md §4): every ring step waits for the
  // slowest of its m network hops. With per-hop delay jitter sigma the step
  // pays sigma * sqrt(2 ln m) (expected maximum of m Gaussian delays), and the
  // ring moves at the pace of its slowest link: bandwidth x (1 - cv * sqrt(2 ln m)).
  // sigma: the IB sweep's least-squares optimum is 0 (at the bound; its rms
  // grows 3.2% -> 3.4% -> 4.0% at 0, 0.5, 2 µs); we take 0.5 µs, the largest
  // value within one standard error of that optimum, since a lock-step ring
  // without any per-hop delay spread is not physical (µs-scale OS-noise
  // detours: Hoefler, Schneider, Lumsdaine, SC10; IB wire jitter is ~0.03 µs).
  Seconds hop_latency_jitter = Microseconds(0.5);
  // cv: least-squares fit to the B200 IB 16 GB and H100 EFA 256 MB node sweeps
  // (tests/cost_model/collective_fit_test.cc).
  double link_bandwidth_jitter = 0.063;
  // Switch traversal beyond the leaf: each extra tier (max_switch_hops > 1)
  // adds its port-to-port latency only through path.inter_hop_latency; ECMP
  // hash collisions on shared uplinks cut the bandwidth of traffic that
  // crosses the spine by this factor (1 = adaptive routing, as IB fabrics run;
  // static ECMP with one flow per uplink keeps ~1 - 1/e of it).
  double ecmp_uplink_efficiency = 1.0;
  // Per-peer cost of the grouped send/recv that AllToAll issues (proxy
  // progress and connection setup per peer): assumption, see DECISIONS.md.
  Seconds p2p_per_peer_latency = Microseconds(0.5);
  // Network chunk pipeline (DESIGN.md §4; docs/DECISIONS.md "Collectives:
  // chunk pipeline"). Across nodes NCCL moves each channel's data in chunks
  // of at most `net_chunk_bytes`; every chunk costs `net_chunk_latency` of
  // proxy post, completion poll and GPU flag on top of its wire time, and a
  // chunk enters a pipeline of D stages (ring: its lock-step steps; trees:
  // 2 log2(nodes) network stages plus the NVLink stages) — the number of
  // chunks grows with size; in steady state the chunk cost overlaps the
  // chunks in flight, so it and the fill of a pipeline that NCCL splits into
  // at least `min_pipeline_chunks` chunks cost mid sizes, not large ones.
  // Cold values: 512 KiB = NCCL's Simple step (NCCL_BUFFSIZE 4 MiB /
  // NCCL_STEPS 8, src/include/device.h); 8 = NCCL_STEPS slots; 2 µs =
  // UNCERTAIN ibv_post_send + CQ poll + flag write on a GPUDirect RDMA path.
  // Fitted values: a --hw-profile (calibrate/collective_fit.h).
  Seconds net_chunk_latency = Microseconds(2.0);
  // Scale on NCCL's per-hop NET latency constants (tuning.cc hwLat[NET]):
  // NCCL tunes them to pick algorithms, not to predict time; 1 = NCCL's.
  double net_hop_latency_scale = 1.0;
  Bytes net_chunk_bytes = Bytes(512.0 * 1024.0);
  double min_pipeline_chunks = 8.0;

  // Tree and NVLS-tree across nodes: the fraction of the paced NIC rate their
  // inter-node sends reach, on top of nic_efficiency (which the ring reaches).
  // 1 on InfiniBand (H100 IB NVLS-tree measures 0.97-1.09 of the model,
  // tests/calibrate/tree_allreduce_table_test.cc). NCCL's tuner does not know
  // it: the algorithm is chosen as if it were 1, then priced with it.
  double tree_net_efficiency = 1.0;

  // LL128 needs 128-byte stores to arrive whole and in order: NCCL enables it
  // across nodes on InfiniBand/RoCE; the AWS EFA plugin leaves it off.
  bool network_ll128 = true;

  // Fabric presets for the measured sweeps (the defaults are an IB fabric).
  static CollectiveModelParams InfiniBand() { return {}; }
  static CollectiveModelParams AwsEfa();
};

}  // namespace parasim
