// The ops of one simulated training step: streams (a rank's compute stream
// and its communication streams), activities (a kernel, or a collective that
// several ranks' streams take part in), and dependencies between ops. Ops on
// one stream run in the order they were added, as CUDA streams do; an
// activity with several participant ops (a collective) starts when the last
// participant is ready, so a late rank delays its whole group.
//
//   TaskGraph g;
//   int rank = g.AddRank("stage 0");
//   int compute = g.AddStream(rank, StreamKind::kCompute);
//   int tp = g.AddStream(rank, StreamKind::kTp);
//   int32_t fwd = g.AddOp(compute, {.kind = WorkKind::kMatmul, .duration_s = 1e-3});
//   int32_t ar = g.AddOp(tp, {.kind = WorkKind::kComm, .duration_s = 2e-4});
//   g.AddDependency(fwd, ar);
//   g.Finalize();
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::simulator {

enum class StreamKind : uint8_t {
  kCompute,    // kernels: GEMMs, attention, elementwise, optimizer
  kTp,         // tensor-parallel (and SP) collectives
  kCp,         // context-parallel ring steps
  kEp,         // expert-parallel all-to-all
  kDp,         // data-parallel / sharding collectives: gathers and reductions share it, as NCCL serializes one communicator
  kPp,         // pipeline activations and gradients to the neighbour stage
};
const char* ToString(StreamKind kind);
inline bool IsCommStream(StreamKind kind) { return kind != StreamKind::kCompute; }

// What an activity does: sets its power state and whether comm kernels
// overlapping it slow it down.
enum class WorkKind : uint8_t {
  kMatmul,   // tensor-core bound compute
  kMemory,   // memory-bound compute (norms, elementwise, optimizer)
  kComm,     // a collective or point-to-point transfer
  kHost,     // host (CPU) work the compute stream waits for; the GPU idles (never slowed)
};
const char* ToString(WorkKind kind);

// One activity. Times are nominal: what it takes alone on an unloaded rank.
struct ActivitySpec {
  WorkKind kind = WorkKind::kMatmul;
  double duration_s = 0;   // whole time; for a network activity (tier C) the latency part
  double network_s = 0;    // tier C: bandwidth part, shared on links (needs flow_set >= 0)
  int32_t flow_set = -1;   // tier C: AddFlowSet id of the links it loads (the first of flow_classes)
  // Tier C step schedule: the activity runs `steps` lock-step steps, each its
  // share of the latency part (duration_s / steps), then its share of the
  // bandwidth part on the flow sets flow_set .. flow_set + flow_classes − 1 at
  // once (one per link class: NVLink hops, network hops); a step ends when
  // its slowest class has delivered.
  int32_t steps = 1;
  int32_t flow_classes = 1;
  int32_t name = 0;        // InternName id (0 = "")
  int32_t layer = -1;      // transformer layer, -1 = none
  int32_t micro_batch = -1;
  int32_t chunk = -1;      // virtual pipeline chunk, -1 = none
  double bytes = 0;        // collective size (nccl-tests convention), for the trace
  int8_t dim = -1;         // parallel dimension of a collective (ParallelDim), -1 = none
};

// A link a flow set crosses, with how many of the set's flows cross it: a ring
// collective is one pipelined flow per hop whose rates move together, so it is
// one max-min variable whose coefficient on a link is the number of its hops
// on that link (SimGrid's lmm element weight).
struct LinkUse {
  int32_t link = 0;
  double coefficient = 1;
};

// What the engine reads per activity and per op, packed so that one event
// touches few cache lines (the full ActivitySpec stays in a cold array).
struct ActivityCore {
  double duration_s;
  double network_s;
  int32_t first_op;
  int32_t num_ops;
  int32_t flow_set;
  int32_t steps;
  int16_t flow_classes;
  WorkKind kind;
};
struct OpCore {
  int32_t activity;
  int32_t rank;
  int32_t stream_next;   // next op on the same stream, -1 = none
  int32_t succ_begin;    // explicit successors: succ_[succ_begin, next op's succ_begin)
};

class TaskGraph {
 public:
  TaskGraph();

  // Empties the graph but keeps its buffers, so the next step built into it
  // allocates (and page-faults) nothing new.
  void Clear();
  // Capacity up front, so building a large step does not re-copy its arrays.
  void Reserve(int64_t activities, int64_t ops, int64_t dependencies);

  int AddRank(std::string name);
  int AddStream(int rank, StreamKind kind);
  int32_t InternName(std::string_view name);

  // An activity with one participant op on `stream`; returns the op id.
  int32_t AddOp(int stream, const ActivitySpec& spec);
  // An activity with one participant op on each of `streams` (consecutive op
  // ids, returned: the first). All participants start and end together.
  int32_t AddGroupOp(std::span<const int32_t> streams, const ActivitySpec& spec);
  // `after` cannot start before `before` ends.
  void AddDependency(int32_t before, int32_t after);
  // Tier C: the links a network activity loads (a link listed twice: its
  // coefficients summed) and its bandwidth alone on the fabric with its
  // symmetric peers (the nominal rate its network_s assumes).
  int32_t AddFlowSet(std::span<const LinkUse> links, double nominal_rate_Bps);

  // Builds the successor lists; no ops may be added afterwards.
  void Finalize();
  bool finalized() const { return finalized_; }

  int num_ranks() const { return static_cast<int>(rank_names_.size()); }
  int num_streams() const { return static_cast<int>(stream_rank_.size()); }
  int32_t num_ops() const { return static_cast<int32_t>(op_stream_.size()); }
  int32_t num_activities() const { return static_cast<int32_t>(activities_.size()); }

  const std::string& rank_name(int rank) const { return rank_names_[rank]; }
  int stream_rank(int stream) const { return stream_rank_[stream]; }
  StreamKind stream_kind(int stream) const { return stream_kind_[stream]; }
  int compute_stream(int rank) const { return rank_compute_stream_[rank]; }
  // First op on a stream (-1: none); follow stream_next() for the rest.
  int32_t stream_first_op(int stream) const { return stream_first_op_[stream]; }
  const std::string& name(int32_t id) const { return names_[id]; }

  int32_t op_activity(int32_t op) const { return ops_[op].activity; }
  int32_t op_stream(int32_t op) const { return op_stream_[op]; }
  int32_t op_rank(int32_t op) const { return ops_[op].rank; }
  const ActivitySpec& activity(int32_t act) const { return activities_[act]; }
  const ActivityCore& core(int32_t act) const { return cores_[act]; }
  int32_t activity_first_op(int32_t act) const { return cores_[act].first_op; }
  int32_t activity_num_ops(int32_t act) const { return cores_[act].num_ops; }

  // After Finalize: the op that follows `op` on its stream (-1: none), the
  // explicit successors, and the count of what `op` waits for.
  const OpCore& op(int32_t op) const { return ops_[op]; }
  int32_t stream_next(int32_t op) const { return ops_[op].stream_next; }
  std::span<const int32_t> successors(int32_t op) const {
    return {succ_.data() + ops_[op].succ_begin, succ_.data() + ops_[op + 1].succ_begin};
  }
  const std::vector<int32_t>& initial_unmet() const { return initial_unmet_; }
  int32_t initial_unmet(int32_t op) const { return initial_unmet_[op]; }

  std::span<const LinkUse> flow_links(int32_t flow_set) const {
    return {flow_links_.data() + flow_offset_[flow_set], flow_links_.data() + flow_offset_[flow_set + 1]};
  }
  double flow_nominal_rate_Bps(int32_t flow_set) const { return flow_nominal_rate_Bps_[flow_set]; }
  int32_t num_flow_sets() const { return static_cast<int32_t>(flow_nominal_rate_Bps_.size()); }

 private:
  int32_t AppendOp(int stream, int32_t activity);

  bool finalized_ = false;
  std::vector<std::string> rank_names_;
  std::vector<int> rank_compute_stream_;
  std::vector<int> stream_rank_;
  std::vector<StreamKind> stream_kind_;
  std::vector<int32_t> stream_last_op_;
  std::vector<int32_t> stream_first_op_;
  std::vector<std::string> names_;

  std::vector<ActivitySpec> activities_;   // cold: labels for the trace
  std::vector<ActivityCore> cores_;        // hot
  std::vector<OpCore> ops_;                // hot; one extra sentinel after Finalize
  std::vector<int32_t> op_stream_;
  std::vector<std::pair<int32_t, int32_t>> edges_;
  std::vector<int32_t> succ_;
  std::vector<int32_t> initial_unmet_;

  std::vector<LinkUse> flow_links_;
  std::vector<int32_t> flow_offset_{0};
  std::vector<double> flow_nominal_rate_Bps_;
};

}  // namespace parasim::simulator
