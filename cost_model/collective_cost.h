// Time of one NCCL-style collective on a placed group: ring, double-binary
// tree, NVLS, PAT, CollNet, hierarchical, point-to-point and all-to-all, with
// the LL / LL128 / Simple protocols, and NCCL's choice of the fastest allowed
// (algorithm, protocol) pair. Per-step latency grows with the ring as DESIGN.md
// §4 says (named, documented parts); bandwidth is the group's bottleneck as
// placed (topology/group_path.h). Bus bandwidth follows nccl-tests.
#pragma once

#include <string>

#include "core/units.h"
#include "topology/group_path.h"

namespace parasim {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
enum class CollectiveAlgo { kRing, kTree, kNvls, kNvlsTree, kCollNet, kPat, kDirect };
enum class Protocol { kLL, kLL128, kSimple };
const char* ToString(CollectiveOp op);
const char* ToString(CollectiveAlgo algo);
const char* ToString(Protocol proto);
// Parse "allreduce" | "allgather" | "reducescatter" | "broadcast" | "reduce" |
// "alltoall" | "sendrecv"; throws parasim::Error naming `where`.
CollectiveOp ParseCollectiveOp(const std::string& text, const std::string& where);

// Which algorithms the stack's NCCL version may use (DESIGN.md §4: the
// paper's NCCL has AllGather/ReduceScatter ring-only; newer adds PAT, NVLS).
struct NcclFeatures {
  bool tree_allreduce = true;
  bool nvls = false;            // NVLink SHARP inside an NVSwitch domain (when the hardware has it)
  bool nvls_tree = false;       // NVLS inside nodes + tree across
  bool pat = false;             // PAT AllGather/ReduceScatter, one GPU per node
  bool collnet = false;         // IB SHARP (when the fabric has it)
  bool ll128 = true;
};

struct CollectiveCost {
  Seconds time;                 // whole collective, on every rank
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  Protocol protocol = Protocol::kSimple;
  Seconds latency;              // the latency part of `time`
  BytesPerSecond algbw;         // size / time (nccl-tests algbw)
  BytesPerSecond busbw;         // nccl-tests bus bandwidth
};

// `size` follows nccl-tests: AllReduce/Broadcast/Reduce the per-rank buffer;
// AllGather/ReduceScatter the whole gathered array (per-rank chunk × n);
// AllToAll a rank's whole send buffer; SendRecv the message.
// A group of one rank costs zero. Pure and thread-safe.
CollectiveCost EstimateCollective(CollectiveOp op, Bytes size, const GroupPath& path,
                                  const NcclFeatures& features);

}  // namespace parasim
