// Importer for measured training steps: a PyTorch profiler (Kineto) trace,
// the Chrome Trace Event JSON that torch.profiler's export_chrome_trace
// writes, or parasim's own simulated timeline (`simulate --trace`). Per step
// and GPU it measures what parasim predicts: busy time by kernel class,
// communication, exposed communication (NCCL time with no compute kernel
// beside it, the seed paper's definition), overlapped communication and idle
// time, then the mean over the selected steps.
//
//   TraceReadOptions opt;
//   opt.skip_steps = 10;          // warm-up, as the paper uses iterations 11-60
//   StepTraceSummary s = ReadKinetoTrace("rank0.json", opt);
//   s.mean.devices[0].exposed_comm;
//
// What is read: complete events ("ph":"X") with ts and dur in µs. GPU work is
// cat "kernel" (classified by name, KernelNamePatterns()), "gpu_memcpy",
// "gpu_memset", and parasim's "matmul" / "memory" / "comm"; the device is
// args.device (else pid), the stream args.stream (else tid). Steps come from
// "ProfilerStep#N" CPU annotations tied to GPU work through the correlation
// id of the CUDA runtime/driver call that launched it, else from
// "gpu_user_annotation" ProfilerStep#N ranges, else the whole trace is one
// step. Other events are skipped.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.h"

namespace parasim::calibrate {

// ---- Kernel classes --------------------------------------------------------

enum class KernelClass : uint8_t {
  kNccl,
  kGemm,
  kAttention,
  kOptimizer,
  kMemcpy,
  kMemset,
  kElementwiseOther,
};
inline constexpr int kNumKernelClasses = 7;
const char* ToString(KernelClass c);  // "nccl", "gemm", ..., "elementwise_other"

// Compute = what the paper counts as compute kernels: every kernel that is
// neither NCCL nor a copy engine memcpy/memset.
constexpr bool IsCompute(KernelClass c) {
  return c != KernelClass::kNccl && c != KernelClass::kMemcpy && c != KernelClass::kMemset;
}

enum class CollectiveKind : uint8_t {
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kSendRecv,
  kBroadcast,
  kReduce,
  kAllToAll,
  kOther,
};
inline constexpr int kNumCollectiveKinds = 8;
const char* ToString(CollectiveKind k);  // "all_gather", ..., "other"

struct KernelNamePattern {
  const char* needle;  // lowercase; matched against the lowercased kernel name
  KernelClass cls;
};
// The name table, in match order (first hit wins).
std::span<const KernelNamePattern> KernelNamePatterns();

// Class of a kernel (cat "kernel") from its name; kElementwiseOther when no
// pattern matches.
KernelClass ClassifyKernelName(std::string_view name);

// Collective of an NCCL kernel name ("ncclDevKernel_AllGather_RING_LL(...)"),
// of Kineto's args "Collective name" ("_allgather_base") or of a parasim comm
// op ("tp_sp_reducescatter L3 mb0"); kOther when none is named.
CollectiveKind ClassifyCollectiveName(std::string_view name);

// ---- Interval arithmetic (µs intervals [start, end]) -----------------------

using Interval = std::pair<double, double>;
// Sorted, disjoint intervals covering the same time (touching ones merged).
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);
double TotalLength(const std::vector<Interval>& merged);
// Length of `a` not covered by `b`; both as MergeIntervals returns them.
double LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b);

// ---- Reading a trace ---------------------------------------------------------

struct TraceReadOptions {
  int skip_steps = 0;          // the first steps (by step number) are warm-up and left out
  int max_steps = 0;           // steps used after the skipped ones; 0 = all
  std::optional<int> device;   // only this device (Kineto args.device; parasim traces: pid)
};

enum class TraceFormat { kKineto, kParasim };
const char* ToString(TraceFormat f);  // "kineto", "parasim"

enum class StepSource { kCpuAnnotations, kGpuAnnotations, kWholeTrace };
const char* ToString(StepSource s);  // "cpu_annotations", "gpu_annotations", "whole_trace"

// Counts are doubles because a mean over steps may be fractional.
struct ClassTime {
  double kernels = 0;
  Seconds sum;   // sum of durations
  Seconds busy;  // union of the intervals
};

struct CollectiveTime {
  double kernels = 0;
  Seconds sum;
  Seconds busy;
  Seconds exposed;  // busy with no compute kernel beside it
};

// Slowdown of compute kernels beside NCCL kernels, from kernels of one name
// seen both ways (kineto_trace.cc MeasureInterference): weighted sums, so
// that means over steps stay exact.
struct OverlapSlowdown {
  double weight = 0;    // seconds of overlapped work (alone-time) compared
  double weighted = 0;  // sum of weight x (mean beside / mean alone)
  // Mean slowdown (>= 1 when NCCL slows compute); 0 when nothing compared.
  double Factor() const { return weight > 0 ? weighted / weight : 0.0; }
};

// One device over one step (or the mean over steps).
struct DeviceStep {
  int device = 0;
  double steps = 1;        // steps this entry covers (the mean: steps the device ran in)
  double streams = 0;      // distinct streams with GPU work
  Seconds first_start;     // first GPU event, from the step's first GPU event on any device
  Seconds last_end;        // last GPU event end, same origin
  Seconds span;            // last_end - first_start
  Seconds busy;            // union of every GPU event (memcpy/memset included)
  Seconds compute;         // union of compute kernels (IsCompute)
  Seconds comm;            // union of NCCL kernels
  Seconds exposed_comm;    // comm minus compute
  Seconds overlapped_comm; // comm minus exposed_comm
  Seconds idle;            // span - busy
  OverlapSlowdown matmul_slowdown;  // GEMM and attention kernels
  OverlapSlowdown memory_slowdown;  // elementwise/other kernels
  std::array<ClassTime, kNumKernelClasses> by_class;
  std::array<CollectiveTime, kNumCollectiveKinds> by_collective;
};

// Host side of a step: CUDA runtime/driver calls inside its CPU annotation
// (the whole trace when steps are not annotated on the CPU).
struct HostStep {
  double launches = 0;      // kernel launch calls (name contains "Launch")
  Seconds launch_mean;      // mean duration of one launch call
  double runtime_calls = 0; // every runtime/driver call
  Seconds runtime_sum;
};

struct TraceStep {
  int number = -1;   // N of ProfilerStep#N; -1 for the whole trace and the mean
  Seconds window;    // first to last GPU event over all devices
  HostStep host;
  std::vector<DeviceStep> devices;  // by device id
};

struct StepTraceSummary {
  std::string file;
  TraceFormat format = TraceFormat::kKineto;
  StepSource step_source = StepSource::kWholeTrace;
  int rank = -1;         // distributedInfo.rank; -1 when absent
  int world_size = 0;    // distributedInfo.world_size; 0 when absent
  std::map<int, std::string> device_names;  // deviceProperties: id -> name
  int steps_found = 0;
  int steps_skipped = 0;
  std::vector<TraceStep> steps;          // the selected steps
  TraceStep mean;                        // mean over `steps`, per device over the steps it ran in
  int64_t gpu_events = 0;                // GPU events read
  int64_t unattributed_gpu_events = 0;   // GPU events in no step
  std::vector<std::string> notes;        // what a reader should know (fallbacks taken)
};

// Parses trace text; `file` names it in errors. Bad input (not JSON, no
// traceEvents, an event without ts or dur, a negative dur, too few steps for
// skip_steps, an absent device) throws parasim::Error naming the file, the
// event index or field, and the problem.
StepTraceSummary ParseKinetoTrace(std::string_view text, const std::string& file, const TraceReadOptions& options);

// Reads and parses a trace file, gzip-compressed (.json.gz) or not
// (calibrate/gzip_file.h).
StepTraceSummary ReadKinetoTrace(const std::string& path, const TraceReadOptions& options);

}  // namespace parasim::calibrate
