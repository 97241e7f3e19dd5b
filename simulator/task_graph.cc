#include "simulator/task_graph.h"

#include <algorithm>

#include "core/check.h"

namespace parasim::simulator {

const char* ToString(StreamKind kind) {
  switch (kind) {
    case StreamKind::kCompute: return "compute";
    case StreamKind::kTp: return "tp";
    case StreamKind::kCp: return "cp";
    case StreamKind::kEp: return "ep";
    case StreamKind::kDp: return "dp";
    case StreamKind::kPp: return "pp";
  }
  return "?";
}

const char* ToString(WorkKind kind) {
  switch (kind) {
    case WorkKind::kMatmul: return "matmul";
    case WorkKind::kMemory: return "memory";
    case WorkKind::kComm: return "comm";
    case WorkKind::kHost: return "host";
  }
  return "?";
}

TaskGraph::TaskGraph() { names_.emplace_back(); }

void TaskGraph::Clear() {
  finalized_ = false;
  rank_names_.clear();
  rank_compute_stream_.clear();
  stream_rank_.clear();
  stream_kind_.clear();
  stream_last_op_.clear();
  stream_first_op_.clear();
  names_.resize(1);
  activities_.clear();
  cores_.clear();
  ops_.clear();
  op_stream_.clear();
  edges_.clear();
  succ_.clear();
  initial_unmet_.clear();
  flow_links_.clear();
  flow_offset_.assign(1, 0);
  flow_nominal_rate_Bps_.clear();
}

void TaskGraph::Reserve(int64_t activities, int64_t ops, int64_t dependencies) {
  activities_.reserve(activities);
  cores_.reserve(activities);
  ops_.reserve(ops + 1);
  op_stream_.reserve(ops);
  edges_.reserve(dependencies);
}

int TaskGraph::AddRank(std::string name) {
  PARASIM_CHECK(!finalized_);
  rank_names_.push_back(std::move(name));
  rank_compute_stream_.push_back(-1);
  return static_cast<int>(rank_names_.size()) - 1;
}

int TaskGraph::AddStream(int rank, StreamKind kind) {
  PARASIM_CHECK(!finalized_);
  PARASIM_CHECK(rank >= 0 && rank < num_ranks(), "rank ", rank);
  int id = static_cast<int>(stream_rank_.size());
  if (kind == StreamKind::kCompute) {
    // Interference and the power state assume one compute stream per rank.
    PARASIM_CHECK(rank_compute_stream_[rank] < 0, "second compute stream on rank ", rank);
    rank_compute_stream_[rank] = id;
  }
  stream_rank_.push_back(rank);
  stream_kind_.push_back(kind);
  stream_last_op_.push_back(-1);
  stream_first_op_.push_back(-1);
  return id;
}

int32_t TaskGraph::InternName(std::string_view name) {
  // Linear search is fine: builders intern a few dozen names, once each.
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int32_t>(i);
  }
  names_.emplace_back(name);
  return static_cast<int32_t>(names_.size()) - 1;
}

int32_t TaskGraph::AppendOp(int stream, int32_t activity) {
  PARASIM_CHECK(stream >= 0 && stream < num_streams(), "stream ", stream);
  int32_t op = num_ops();
  ops_.push_back(OpCore{activity, stream_rank_[stream], -1, 0});
  op_stream_.push_back(stream);
  int32_t prev = stream_last_op_[stream];
  if (prev >= 0) ops_[prev].stream_next = op;
  else stream_first_op_[stream] = op;
  stream_last_op_[stream] = op;
  return op;
}

int32_t TaskGraph::AddOp(int stream, const ActivitySpec& spec) {
  const int32_t one[] = {stream};
  return AddGroupOp(one, spec);
}

int32_t TaskGraph::AddGroupOp(std::span<const int32_t> streams, const ActivitySpec& spec) {
  PARASIM_CHECK(!finalized_);
  PARASIM_CHECK(!streams.empty());
  PARASIM_CHECK(spec.duration_s >= 0 && spec.network_s >= 0, "negative duration");
  PARASIM_CHECK(spec.network_s == 0 || (spec.flow_set >= 0 && spec.flow_classes >= 1 &&
                                         spec.flow_set + spec.flow_classes <= num_flow_sets()),
                "network time without a flow set");
  PARASIM_CHECK(spec.steps >= 1 && spec.flow_classes >= 1 && spec.flow_classes < 128, "bad step schedule");
  if (spec.kind != WorkKind::kComm) {
    PARASIM_CHECK(streams.size() == 1 && stream_kind_[streams[0]] == StreamKind::kCompute,
                  "compute activities run on one compute stream");
  }
  int32_t act = static_cast<int32_t>(activities_.size());
  activities_.push_back(spec);
  int32_t first = num_ops();
  cores_.push_back(ActivityCore{spec.duration_s, spec.network_s, first, static_cast<int32_t>(streams.size()),
                                spec.flow_set, spec.steps, static_cast<int16_t>(spec.flow_classes), spec.kind});
  for (int32_t s : streams) AppendOp(s, act);
  return first;
}

void TaskGraph::AddDependency(int32_t before, int32_t after) {
  PARASIM_CHECK(!finalized_);
  PARASIM_CHECK(before >= 0 && before < num_ops() && after >= 0 && after < num_ops() && before != after,
                "bad dependency ", before, " -> ", after);
  edges_.emplace_back(before, after);
}

int32_t TaskGraph::AddFlowSet(std::span<const LinkUse> links, double nominal_rate_Bps) {
  PARASIM_CHECK(!finalized_);
  PARASIM_CHECK(nominal_rate_Bps > 0, "nominal rate must be positive");
  // Each link once, its coefficients summed (a link two hops cross carries both).
  const size_t begin = flow_links_.size();
  for (const LinkUse& use : links) {
    PARASIM_CHECK(use.link >= 0 && use.coefficient > 0, "bad link use");
    flow_links_.push_back(use);
  }
  std::sort(flow_links_.begin() + begin, flow_links_.end(),
            [](const LinkUse& a, const LinkUse& b) { return a.link < b.link; });
  size_t out = begin;
  for (size_t i = begin; i < flow_links_.size(); ++i) {
    if (out > begin && flow_links_[out - 1].link == flow_links_[i].link) {
      flow_links_[out - 1].coefficient += flow_links_[i].coefficient;
    } else {
      flow_links_[out++] = flow_links_[i];
    }
  }
  flow_links_.resize(out);
  flow_offset_.push_back(static_cast<int32_t>(flow_links_.size()));
  flow_nominal_rate_Bps_.push_back(nominal_rate_Bps);
  return static_cast<int32_t>(flow_nominal_rate_Bps_.size()) - 1;
}

void TaskGraph::Finalize() {
  PARASIM_CHECK(!finalized_);
  const int32_t n = num_ops();
  // Counting sort by source keeps each op's successors in insertion order.
  std::vector<int32_t> offset(n + 1, 0);
  for (const auto& e : edges_) ++offset[e.first + 1];
  for (int32_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
  succ_.assign(edges_.size(), 0);
  std::vector<int32_t> fill(offset.begin(), offset.end() - 1);
  initial_unmet_.assign(n, 0);
  for (const auto& e : edges_) {
    succ_[fill[e.first]++] = e.second;
    ++initial_unmet_[e.second];
  }
  for (int32_t op = 0; op < n; ++op) {
    ops_[op].succ_begin = offset[op];
    if (ops_[op].stream_next >= 0) ++initial_unmet_[ops_[op].stream_next];
  }
  ops_.push_back(OpCore{-1, -1, -1, offset[n]});  // sentinel: end of the last op's successors
  edges_.clear();   // capacity kept for the next build
  finalized_ = true;
}

}  // namespace parasim::simulator
