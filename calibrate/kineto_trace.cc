#include "core/input_file.h"
#include "calibrate/kineto_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "calibrate/gzip_file.h"
#include "core/error.h"

namespace parasim::calibrate {
namespace {

using Json = nlohmann::json;

// Kernel names by class, first hit wins. Sources: kernel names in public
// torch.profiler traces and the libraries' own naming schemes.
constexpr KernelNamePattern kPatterns[] = {
    // NCCL/RCCL: ncclKernel_* (NCCL <= 2.18), ncclDevKernel_* (2.19+).
    {"nccl", KernelClass::kNccl},
    // Attention before GEMM: FlashAttention-3 and xformers kernels also say
    // "cutlass", cuDNN's fused SDPA also says "wgmma".
    {"flash", KernelClass::kAttention},      // flash_fwd_kernel, FlashAttnFwdSm90, cudnn *_flash_fprop_*
    {"fmha", KernelClass::kAttention},       // fmha_cutlassF_* (xformers, SDPA memory-efficient)
    {"attention", KernelClass::kAttention},  // Inductor flex_attention, paged_attention
    {"attn", KernelClass::kAttention},       // attn_fwd (Triton), fused_attn
    {"sdpa", KernelClass::kAttention},       // cudnn_generated_fort_native_sdpa_*
    // GEMM: cuBLAS (ampere_bf16_s16816gemm_*, sm90_xmma_gemm_*, gemv2T_kernel),
    // cuBLASLt on Hopper (nvjet_tst_*), CUTLASS (cutlass::Kernel2<...>,
    // cutlass3x_sm90_tensorop_*), cuBLASLt's split-K reduction of a GEMM.
    {"gemm", KernelClass::kGemm},
    {"gemv", KernelClass::kGemm},
    {"xmma", KernelClass::kGemm},
    {"nvjet", KernelClass::kGemm},
    {"cutlass", KernelClass::kGemm},
    {"cublas", KernelClass::kGemm},
    {"splitkreduce", KernelClass::kGemm},
    {"s16816", KernelClass::kGemm},
    {"s1688", KernelClass::kGemm},
    {"wgmma", KernelClass::kGemm},
    {"triton_tem_", KernelClass::kGemm},  // Inductor mm/addmm/bmm templates (flex attention caught above)
    // Optimizer: PyTorch's foreach/fused optimizers (multi_tensor_apply_kernel
    // <...FusedAdamMathFunctor...>), Apex/DeepSpeed fused Adam.
    {"multi_tensor_apply", KernelClass::kOptimizer},
    {"adam", KernelClass::kOptimizer},
};

struct CollectivePattern {
  const char* needle;  // matched against the name lowercased without '_', '-', ' '
  CollectiveKind kind;
};
// Longest first where one contains another ("allreduce" before "reduce").
constexpr CollectivePattern kCollectivePatterns[] = {
    {"reducescatter", CollectiveKind::kReduceScatter}, {"allgather", CollectiveKind::kAllGather},
    {"allreduce", CollectiveKind::kAllReduce},         {"alltoall", CollectiveKind::kAllToAll},
    {"sendrecv", CollectiveKind::kSendRecv},           {"broadcast", CollectiveKind::kBroadcast},
    {"send", CollectiveKind::kSendRecv},               {"recv", CollectiveKind::kSendRecv},
    {"reduce", CollectiveKind::kReduce},
};

std::string Lower(std::string_view s, bool drop_separators = false) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (drop_separators && (c == '_' || c == '-' || c == ' ')) continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// ---- Events as read ---------------------------------------------------------

struct GpuEvent {
  double start = 0, end = 0;  // µs
  int device = 0;
  int64_t stream = 0;
  int64_t correlation = -1;   // -1: none
  KernelClass cls = KernelClass::kElementwiseOther;
  CollectiveKind coll = CollectiveKind::kOther;
  uint32_t name_id = 0;       // interned name: same-name kernels compare (interference)
};

struct RuntimeCall {
  double start = 0, dur = 0;  // µs
  int64_t correlation = -1;
  bool launch = false;
};

struct StepMarker {
  int number = 0;
  double start = 0, end = 0;  // µs
  int device = -1;            // -1: a CPU annotation
};

struct RawTrace {
  std::vector<GpuEvent> gpu;
  std::unordered_map<std::string, uint32_t> names;  // kernel name -> name_id
  std::vector<RuntimeCall> runtime;
  std::vector<StepMarker> cpu_steps, gpu_steps;
  bool parasim = false;
};

enum class Role { kSkip, kKernel, kMemcpy, kMemset, kParasim, kRuntime, kCpuAnnotation, kGpuAnnotation };

// Categories: Kineto's current names, the capitalised ones of PyTorch <= 1.9
// traces (lowercased here), and parasim's work kinds.
Role RoleOf(const std::string& cat) {
  if (cat == "kernel") return Role::kKernel;
  if (cat == "gpu_memcpy" || cat == "memcpy") return Role::kMemcpy;
  if (cat == "gpu_memset" || cat == "memset") return Role::kMemset;
  if (cat == "matmul" || cat == "memory" || cat == "comm") return Role::kParasim;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") return Role::kRuntime;
  if (cat == "user_annotation" || cat == "cpu_op" || cat == "operator") return Role::kCpuAnnotation;
  if (cat == "gpu_user_annotation") return Role::kGpuAnnotation;
  return Role::kSkip;
}

std::optional<double> Number(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<int64_t> Integer(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) {
    const double v = it->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

const Json* Args(const Json& e) {
  auto it = e.find("args");
  return it != e.end() && it->is_object() ? &*it : nullptr;
}

// "ProfilerStep#12" -> 12; nullopt for other names.
std::optional<int> StepNumber(const std::string& name) {
  static constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  const std::string digits = name.substr(kPrefix.size());
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

// Turns one traceEvents element into the records above, collecting problems.
class EventReader {
 public:
  EventReader(const std::string& file, RawTrace& out) : file_(file), out_(out) {}

  void Read(const Json& e, int64_t index) {
    if (!e.is_object()) return Problem(index, "", "not a JSON object");
    auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string()) return Problem(index, "", "no \"ph\" (event phase)");
    if (*ph != "X") return;  // metadata, counters, flows, instants: not work
    auto name_it = e.find("name");
    const std::string name = name_it != e.end() && name_it->is_string() ? name_it->get<std::string>() : "";
    // Every complete event needs a start and a duration (Chrome trace format).
    const std::optional<double> ts = Number(e, "ts"), dur = Number(e, "dur");
    if (!ts) return Problem(index, name, "complete event (ph X) without a numeric \"ts\"");
    if (!dur) return Problem(index, name, "complete event (ph X) without a numeric \"dur\"");
    if (!std::isfinite(*ts) || !std::isfinite(*dur)) return Problem(index, name, "non-finite \"ts\" or \"dur\"");
    if (*dur < 0) return Problem(index, name, StrCat("negative \"dur\" ", *dur, " us"));
    auto cat_it = e.find("cat");
    if (cat_it == e.end() || !cat_it->is_string()) return;
    const std::string cat = Lower(cat_it->get<std::string>());
    const Role role = RoleOf(cat);
    const Json* args = Args(e);
    switch (role) {
      case Role::kSkip: return;
      case Role::kKernel:
      case Role::kMemcpy:
      case Role::kMemset:
      case Role::kParasim: {
        if (name.empty()) return Problem(index, name, StrCat("GPU event (cat ", cat, ") without a \"name\""));
        GpuEvent g;
        g.start = *ts;
        g.end = *ts + *dur;
        std::optional<int64_t> device = args ? Integer(*args, "device") : std::nullopt;
        if (!device) device = Integer(e, "pid");
        if (!device || *device < 0 || *device > std::numeric_limits<int>::max()) {
          return Problem(index, name, "GPU event without a device (args.device or a numeric pid)");
        }
        g.device = static_cast<int>(*device);
        std::optional<int64_t> stream = args ? Integer(*args, "stream") : std::nullopt;
        if (!stream) stream = Integer(e, "tid");
        g.stream = stream.value_or(0);
        if (args) g.correlation = Integer(*args, "correlation").value_or(-1);
        g.cls = ClassOf(role, cat, name);
        g.name_id = out_.names.try_emplace(name, static_cast<uint32_t>(out_.names.size())).first->second;
        if (g.cls == KernelClass::kNccl) g.coll = CollectiveOf(name, args);
        if (role == Role::kParasim) out_.parasim = true;
        out_.gpu.push_back(g);
        return;
      }
      case Role::kRuntime: {
        RuntimeCall r;
        r.start = *ts;
        r.dur = *dur;
        if (args) r.correlation = Integer(*args, "correlation").value_or(-1);
        r.launch = name.find("Launch") != std::string::npos;
        out_.runtime.push_back(r);
        return;
      }
      case Role::kCpuAnnotation:
      case Role::kGpuAnnotation: {
        if (name.compare(0, 13, "ProfilerStep#") != 0) return;
        const std::optional<int> number = StepNumber(name);
        if (!number) return Problem(index, name, "a ProfilerStep name without a step number");
        StepMarker m{*number, *ts, *ts + *dur, -1};
        if (role == Role::kCpuAnnotation) {
          out_.cpu_steps.push_back(m);
          return;
        }
        std::optional<int64_t> device = args ? Integer(*args, "device") : std::nullopt;
        if (!device) device = Integer(e, "pid");
        if (!device || *device < 0 || *device > std::numeric_limits<int>::max()) {
          return Problem(index, name, "GPU annotation without a device (args.device or a numeric pid)");
        }
        m.device = static_cast<int>(*device);
        out_.gpu_steps.push_back(m);
        return;
      }
    }
  }

  // Throws every problem seen (the first kMaxShown, then a count).
  void ThrowIfAny() const {
    if (issues_.empty()) return;
    std::vector<Issue> shown = issues_;
    if (problems_ > static_cast<int64_t>(issues_.size())) {
      shown.push_back(Issue{file_, "traceEvents", 0, 0,
                            StrCat(problems_ - static_cast<int64_t>(issues_.size()), " more problems not shown")});
    }
    throw InvalidInput(shown);
  }

 private:
  static constexpr size_t kMaxShown = 20;

  void Problem(int64_t index, const std::string& name, const std::string& message) {
    ++problems_;
    if (issues_.size() >= kMaxShown) return;
    const std::string what = name.empty() ? message : StrCat("\"", name.substr(0, 80), "\": ", message);
    issues_.push_back(Issue{file_, StrCat("traceEvents[", index, "]"), 0, 0, what});
  }

  static KernelClass ClassOf(Role role, const std::string& cat, const std::string& name) {
    switch (role) {
      case Role::kMemcpy: return KernelClass::kMemcpy;
      case Role::kMemset: return KernelClass::kMemset;
      case Role::kParasim:
        // parasim's work kinds: matmul is GEMM (or attention by name), memory
        // is memory-bound elementwise work, comm is a collective.
        if (cat == "comm") return KernelClass::kNccl;
        if (cat == "memory") return KernelClass::kElementwiseOther;
        return ClassifyKernelName(name) == KernelClass::kAttention ? KernelClass::kAttention : KernelClass::kGemm;
      default: return ClassifyKernelName(name);
    }
  }

  // The PyTorch op behind an NCCL kernel (args "Collective name") says more
  // than the kernel: all_to_all runs as SendRecv kernels, and NCCL >= 2.23
  // may name a kernel "ncclDevKernel_Generic".
  static CollectiveKind CollectiveOf(const std::string& name, const Json* args) {
    if (args) {
      auto it = args->find("Collective name");
      if (it != args->end() && it->is_string()) {
        const CollectiveKind k = ClassifyCollectiveName(it->get<std::string>());
        if (k != CollectiveKind::kOther) return k;
      }
    }
    return ClassifyCollectiveName(name);
  }

  const std::string& file_;
  RawTrace& out_;
  std::vector<Issue> issues_;
  int64_t problems_ = 0;
};

// Parses the JSON, handing each traceEvents element to `reader` as soon as it
// is complete and dropping it from the tree, so memory stays at one event.
Json ParseStreaming(std::string_view text, const std::string& file, EventReader& reader) {
  int64_t index = 0;
  bool in_events = false;
  std::string top_key;
  try {
    return Json::parse(text, [&](int depth, Json::parse_event_t event, Json& parsed) -> bool {
      using E = Json::parse_event_t;
      if (depth == 1) {
        if (event == E::key) top_key = parsed.get<std::string>();
        else if (event == E::array_start) in_events = top_key == "traceEvents";
        else if (event == E::array_end) in_events = false;
        return true;
      }
      if (depth == 2 && in_events && (event == E::object_end || event == E::value || event == E::array_end)) {
        reader.Read(parsed, index++);
        return false;
      }
      return true;
    });
  } catch (const Json::exception& e) {   // syntax (with its byte offset), a number out of range, ...
    std::string what = e.what();
    const size_t cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    throw InvalidInput(file, "", StrCat("not valid JSON: ", what));
  }
}

// ---- Per-step statistics -----------------------------------------------------

// Interference as the trace shows it: kernels of one name that ran both with
// an NCCL kernel beside them (at least half their duration covered) and
// alone (not covered at all); the ratio of their mean durations is the
// slowdown, weighted by the overlapped kernels' alone-time. Matmul = GEMM and
// attention; memory-bound = elementwise/other.
void MeasureInterference(const std::vector<const GpuEvent*>& events, const std::vector<Interval>& comm_u,
                         DeviceStep& d) {
  if (comm_u.empty()) return;
  struct Side {
    double n = 0, sum = 0;
  };
  std::map<std::pair<int, uint32_t>, std::pair<Side, Side>> by_name;  // (class, name) -> (alone, beside)
  for (const GpuEvent* e : events) {
    const bool matmul = e->cls == KernelClass::kGemm || e->cls == KernelClass::kAttention;
    if (!matmul && e->cls != KernelClass::kElementwiseOther) continue;
    const double dur = e->end - e->start;
    if (dur <= 0) continue;
    const double alone = LengthNotCovered({{e->start, e->end}}, comm_u);
    std::pair<Side, Side>& sides = by_name[{matmul ? 0 : 1, e->name_id}];
    Side* side = alone >= dur ? &sides.first : alone <= 0.5 * dur ? &sides.second : nullptr;
    if (side == nullptr) continue;
    side->n += 1;
    side->sum += dur;
  }
  for (const auto& [key, sides] : by_name) {
    const auto& [alone, beside] = sides;
    if (alone.n == 0 || beside.n == 0) continue;
    const double mean_alone = alone.sum / alone.n;
    const double weight = beside.n * mean_alone * 1e-6;  // seconds
    OverlapSlowdown& o = key.first == 0 ? d.matmul_slowdown : d.memory_slowdown;
    o.weight += weight;
    o.weighted += weight * (beside.sum / beside.n) / mean_alone;
  }
}

DeviceStep SummarizeDevice(int device, const std::vector<const GpuEvent*>& events, double origin_us) {
  DeviceStep d;
  d.device = device;
  std::array<std::vector<Interval>, kNumKernelClasses> by_class;
  std::array<std::vector<Interval>, kNumCollectiveKinds> by_coll;
  std::vector<Interval> all, compute;
  std::set<int64_t> streams;
  double first = events.front()->start, last = events.front()->end;
  for (const GpuEvent* e : events) {
    first = std::min(first, e->start);
    last = std::max(last, e->end);
    streams.insert(e->stream);
    const int c = static_cast<int>(e->cls);
    by_class[c].emplace_back(e->start, e->end);
    d.by_class[c].kernels += 1;
    d.by_class[c].sum += Microseconds(e->end - e->start);
    all.emplace_back(e->start, e->end);
    if (IsCompute(e->cls)) compute.emplace_back(e->start, e->end);
    if (e->cls == KernelClass::kNccl) {
      const int k = static_cast<int>(e->coll);
      by_coll[k].emplace_back(e->start, e->end);
      d.by_collective[k].kernels += 1;
      d.by_collective[k].sum += Microseconds(e->end - e->start);
    }
  }
  const std::vector<Interval> compute_u = MergeIntervals(std::move(compute));
  std::vector<Interval> comm_u;
  for (int c = 0; c < kNumKernelClasses; ++c) {
    std::vector<Interval> u = MergeIntervals(std::move(by_class[c]));
    d.by_class[c].busy = Microseconds(TotalLength(u));
    if (static_cast<KernelClass>(c) == KernelClass::kNccl) comm_u = std::move(u);
  }
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    const std::vector<Interval> u = MergeIntervals(std::move(by_coll[k]));
    d.by_collective[k].busy = Microseconds(TotalLength(u));
    d.by_collective[k].exposed = Microseconds(LengthNotCovered(u, compute_u));
  }
  MeasureInterference(events, comm_u, d);
  d.streams = static_cast<double>(streams.size());
  d.first_start = Microseconds(first - origin_us);
  d.last_end = Microseconds(last - origin_us);
  d.span = Microseconds(last - first);
  d.busy = Microseconds(TotalLength(MergeIntervals(std::move(all))));
  d.compute = Microseconds(TotalLength(compute_u));
  d.comm = Microseconds(TotalLength(comm_u));
  const double exposed = LengthNotCovered(comm_u, compute_u);
  d.exposed_comm = Microseconds(exposed);
  d.overlapped_comm = Microseconds(TotalLength(comm_u) - exposed);
  d.idle = d.span - d.busy;
  return d;
}

// into += k * x, field by field (device and steps left alone).
void AddScaled(DeviceStep& into, const DeviceStep& x, double k) {
  into.streams += k * x.streams;
  for (Seconds DeviceStep::*f : {&DeviceStep::first_start, &DeviceStep::last_end, &DeviceStep::span,
                                 &DeviceStep::busy, &DeviceStep::compute, &DeviceStep::comm,
                                 &DeviceStep::exposed_comm, &DeviceStep::overlapped_comm, &DeviceStep::idle}) {
    into.*f += k * (x.*f);
  }
  for (OverlapSlowdown DeviceStep::*f : {&DeviceStep::matmul_slowdown, &DeviceStep::memory_slowdown}) {
    (into.*f).weight += k * (x.*f).weight;
    (into.*f).weighted += k * (x.*f).weighted;
  }
  for (int c = 0; c < kNumKernelClasses; ++c) {
    into.by_class[c].kernels += k * x.by_class[c].kernels;
    into.by_class[c].sum += k * x.by_class[c].sum;
    into.by_class[c].busy += k * x.by_class[c].busy;
  }
  for (int c = 0; c < kNumCollectiveKinds; ++c) {
    into.by_collective[c].kernels += k * x.by_collective[c].kernels;
    into.by_collective[c].sum += k * x.by_collective[c].sum;
    into.by_collective[c].busy += k * x.by_collective[c].busy;
    into.by_collective[c].exposed += k * x.by_collective[c].exposed;
  }
}

TraceStep MeanOf(const std::vector<TraceStep>& steps) {
  TraceStep mean;
  if (steps.empty()) return mean;
  const double n = static_cast<double>(steps.size());
  double launch_total_s = 0;
  std::map<int, std::pair<DeviceStep, double>> devices;  // device -> (sum, steps)
  for (const TraceStep& s : steps) {
    mean.window += s.window / n;
    mean.host.launches += s.host.launches / n;
    mean.host.runtime_calls += s.host.runtime_calls / n;
    mean.host.runtime_sum += s.host.runtime_sum / n;
    launch_total_s += s.host.launch_mean.si() * s.host.launches;
    for (const DeviceStep& d : s.devices) {
      auto& [sum, count] = devices[d.device];
      sum.device = d.device;
      AddScaled(sum, d, 1.0);
      count += 1;
    }
  }
  if (mean.host.launches > 0) mean.host.launch_mean = Seconds(launch_total_s / (mean.host.launches * n));
  for (auto& [device, entry] : devices) {
    DeviceStep d;
    d.device = device;
    d.steps = entry.second;
    AddScaled(d, entry.first, 1.0 / entry.second);
    mean.devices.push_back(d);
  }
  return mean;
}

// Runtime calls with start in [from, to] (calls sorted by start).
HostStep HostIn(const std::vector<RuntimeCall>& calls, double from, double to) {
  HostStep h;
  auto lo = std::lower_bound(calls.begin(), calls.end(), from,
                             [](const RuntimeCall& c, double t) { return c.start < t; });
  double launch_us = 0;
  for (auto it = lo; it != calls.end() && it->start <= to; ++it) {
    h.runtime_calls += 1;
    h.runtime_sum += Microseconds(it->dur);
    if (it->launch) {
      h.launches += 1;
      launch_us += it->dur;
    }
  }
  if (h.launches > 0) h.launch_mean = Microseconds(launch_us / h.launches);
  return h;
}

// Merged [start, end] windows per step number (a step annotated twice, by two
// threads, spans both).
std::map<int, Interval> WindowsByNumber(const std::vector<StepMarker>& markers) {
  std::map<int, Interval> out;
  for (const StepMarker& m : markers) {
    auto [it, fresh] = out.try_emplace(m.number, m.start, m.end);
    if (!fresh) it->second = {std::min(it->second.first, m.start), std::max(it->second.second, m.end)};
  }
  return out;
}

// Index of the window (sorted by start, disjoint) holding t, or -1.
int WindowHolding(const std::vector<std::pair<Interval, int>>& windows, double t) {
  auto it = std::upper_bound(windows.begin(), windows.end(), t,
                             [](double v, const std::pair<Interval, int>& w) { return v < w.first.first; });
  if (it == windows.begin()) return -1;
  --it;
  return t <= it->first.second ? it->second : -1;
}

// Which step each GPU event belongs to.
struct StepAssignment {
  StepSource source = StepSource::kWholeTrace;
  std::vector<int> numbers;  // step numbers in order; {-1} for the whole trace
  std::vector<int> step_of;  // per GPU event: index into numbers, -1 for none
  int64_t attributed = 0;    // GPU events with a step
};

// A GPU event belongs to the step whose CPU range holds the runtime call that
// launched it (same correlation id).
StepAssignment StepsFromCpuAnnotations(const RawTrace& raw, const std::map<int, Interval>& cpu_windows) {
  StepAssignment a;
  a.source = StepSource::kCpuAnnotations;
  a.step_of.assign(raw.gpu.size(), -1);
  std::vector<std::pair<Interval, int>> windows;
  for (const auto& [number, w] : cpu_windows) {
    windows.push_back({w, static_cast<int>(a.numbers.size())});
    a.numbers.push_back(number);
  }
  std::sort(windows.begin(), windows.end());
  std::unordered_map<int64_t, int> step_of_correlation;
  for (const RuntimeCall& r : raw.runtime) {
    if (r.correlation < 0) continue;
    const int w = WindowHolding(windows, r.start);
    if (w >= 0) step_of_correlation[r.correlation] = w;
  }
  for (size_t i = 0; i < raw.gpu.size(); ++i) {
    if (raw.gpu[i].correlation < 0) continue;
    auto it = step_of_correlation.find(raw.gpu[i].correlation);
    if (it == step_of_correlation.end()) continue;
    a.step_of[i] = it->second;
    ++a.attributed;
  }
  return a;
}

// A GPU event belongs to the step whose GPU range on its device holds its start.
StepAssignment StepsFromGpuAnnotations(const RawTrace& raw) {
  StepAssignment a;
  a.source = StepSource::kGpuAnnotations;
  a.step_of.assign(raw.gpu.size(), -1);
  std::map<int, int> index_of;
  for (const StepMarker& m : raw.gpu_steps) index_of.emplace(m.number, 0);
  for (auto& [number, index] : index_of) {
    index = static_cast<int>(a.numbers.size());
    a.numbers.push_back(number);
  }
  std::map<int, std::vector<std::pair<Interval, int>>> windows;  // per device
  for (const StepMarker& m : raw.gpu_steps) windows[m.device].push_back({{m.start, m.end}, index_of[m.number]});
  for (auto& [device, w] : windows) std::sort(w.begin(), w.end());
  for (size_t i = 0; i < raw.gpu.size(); ++i) {
    auto it = windows.find(raw.gpu[i].device);
    if (it == windows.end()) continue;
    a.step_of[i] = WindowHolding(it->second, raw.gpu[i].start);
    if (a.step_of[i] >= 0) ++a.attributed;
  }
  return a;
}

StepAssignment WholeTrace(const RawTrace& raw) {
  StepAssignment a;
  a.numbers = {-1};
  a.step_of.assign(raw.gpu.size(), 0);
  a.attributed = static_cast<int64_t>(raw.gpu.size());
  return a;
}

void ReadTraceMetadata(const Json& root, StepTraceSummary& s) {
  if (auto info = root.find("distributedInfo"); info != root.end() && info->is_object()) {
    s.rank = static_cast<int>(Integer(*info, "rank").value_or(-1));
    s.world_size = static_cast<int>(Integer(*info, "world_size").value_or(0));
  }
  if (auto props = root.find("deviceProperties"); props != root.end() && props->is_array()) {
    for (const Json& p : *props) {
      if (!p.is_object()) continue;
      const std::optional<int64_t> id = Integer(p, "id");
      auto name = p.find("name");
      if (id && name != p.end() && name->is_string()) s.device_names[static_cast<int>(*id)] = name->get<std::string>();
    }
  }
}

void CheckDevicePresent(const RawTrace& raw, const std::string& file, int device) {
  std::set<int> devices;
  for (const GpuEvent& g : raw.gpu) devices.insert(g.device);
  if (devices.count(device)) return;
  std::string list;
  for (int d : devices) list += (list.empty() ? "" : ", ") + std::to_string(d);
  throw InvalidInput(file, "device",
              StrCat(device, " has no GPU events; the trace has ",
                     list.empty() ? std::string("no GPU events") : "devices " + list));
}

// One step from its GPU events by device; times from the step's first GPU
// event on any device (`only`, when set, keeps one device but not the origin).
TraceStep SummarizeStep(int number, const std::map<int, std::vector<const GpuEvent*>>& by_device,
                        std::optional<int> only) {
  TraceStep step;
  step.number = number;
  double origin = 0, end = 0;
  bool any = false;
  for (const auto& [device, events] : by_device) {
    for (const GpuEvent* e : events) {
      origin = any ? std::min(origin, e->start) : e->start;
      end = any ? std::max(end, e->end) : e->end;
      any = true;
    }
  }
  step.window = Microseconds(end - origin);
  for (const auto& [device, events] : by_device) {
    if (!only || device == *only) step.devices.push_back(SummarizeDevice(device, events, origin));
  }
  return step;
}

}  // namespace

// ---- Public functions --------------------------------------------------------

const char* ToString(KernelClass c) {
  switch (c) {
    case KernelClass::kNccl: return "nccl";
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kOptimizer: return "optimizer";
    case KernelClass::kMemcpy: return "memcpy";
    case KernelClass::kMemset: return "memset";
    case KernelClass::kElementwiseOther: return "elementwise_other";
  }
  return "?";
}

const char* ToString(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kSendRecv: return "send_recv";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kOther: return "other";
  }
  return "?";
}

const char* ToString(TraceFormat f) { return f == TraceFormat::kKineto ? "kineto" : "parasim"; }

const char* ToString(StepSource s) {
  switch (s) {
    case StepSource::kCpuAnnotations: return "cpu_annotations";
    case StepSource::kGpuAnnotations: return "gpu_annotations";
    case StepSource::kWholeTrace: return "whole_trace";
  }
  return "?";
}

std::span<const KernelNamePattern> KernelNamePatterns() { return kPatterns; }

KernelClass ClassifyKernelName(std::string_view name) {
  const std::string lower = Lower(name);
  for (const KernelNamePattern& p : kPatterns) {
    if (lower.find(p.needle) != std::string::npos) return p.cls;
  }
  return KernelClass::kElementwiseOther;
}

CollectiveKind ClassifyCollectiveName(std::string_view name) {
  const std::string squashed = Lower(name, /*drop_separators=*/true);
  for (const CollectivePattern& p : kCollectivePatterns) {
    if (squashed.find(p.needle) != std::string::npos) return p.kind;
  }
  return CollectiveKind::kOther;
}

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& iv : intervals) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

double TotalLength(const std::vector<Interval>& merged) {
  double total = 0;
  for (const Interval& iv : merged) total += iv.second - iv.first;
  return total;
}

double LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // Two sorted, disjoint lists: walk both once.
  double uncovered = 0;
  size_t j = 0;
  for (const Interval& iv : a) {
    double t = iv.first;
    while (j < b.size() && b[j].second <= t) ++j;
    for (size_t k = j; k < b.size() && b[k].first < iv.second; ++k) {
      if (b[k].first > t) uncovered += b[k].first - t;
      t = std::max(t, b[k].second);
      if (t >= iv.second) break;
    }
    if (t < iv.second) uncovered += iv.second - t;
  }
  return uncovered;
}

StepTraceSummary ParseKinetoTrace(std::string_view text, const std::string& file, const TraceReadOptions& options) {
  if (options.skip_steps < 0) throw InvalidInput(file, "skip_steps", StrCat(options.skip_steps, " must be >= 0"));
  if (options.max_steps < 0) throw InvalidInput(file, "max_steps", StrCat(options.max_steps, " must be >= 0"));
  RawTrace raw;
  EventReader reader(file, raw);
  const Json root = ParseStreaming(text, file, reader);
  if (!root.is_object()) throw InvalidInput(file, "", "not a trace: the top level is not a JSON object");
  auto events = root.find("traceEvents");
  if (events == root.end()) throw InvalidInput(file, "traceEvents", "missing: not a Chrome/Kineto trace");
  if (!events->is_array()) throw InvalidInput(file, "traceEvents", "not an array");
  reader.ThrowIfAny();

  StepTraceSummary s;
  s.file = file;
  s.format = raw.parasim ? TraceFormat::kParasim : TraceFormat::kKineto;
  s.gpu_events = static_cast<int64_t>(raw.gpu.size());
  ReadTraceMetadata(root, s);

  // Steps: CPU annotations, else GPU annotations, else the whole trace.
  const std::map<int, Interval> cpu_windows = WindowsByNumber(raw.cpu_steps);
  StepAssignment steps;
  if (!cpu_windows.empty()) steps = StepsFromCpuAnnotations(raw, cpu_windows);
  if (steps.attributed == 0 && !raw.gpu_steps.empty()) {
    if (!cpu_windows.empty()) {
      s.notes.push_back("ProfilerStep CPU annotations tie no GPU event (no runtime correlation ids); steps "
                        "from the GPU annotations");
    }
    steps = StepsFromGpuAnnotations(raw);
  }
  if (steps.attributed == 0) {
    if (!cpu_windows.empty() || !raw.gpu_steps.empty()) {
      s.notes.push_back("ProfilerStep annotations tie no GPU event to a step; the whole trace is one step");
    }
    steps = WholeTrace(raw);
  }
  s.step_source = steps.source;
  s.unattributed_gpu_events = static_cast<int64_t>(raw.gpu.size()) - steps.attributed;
  if (s.unattributed_gpu_events > 0) {
    s.notes.push_back(StrCat("GPU events in no step (launched outside every ProfilerStep range), left out: ",
                             s.unattributed_gpu_events));
  }

  s.steps_found = static_cast<int>(steps.numbers.size());
  if (options.skip_steps >= s.steps_found) {
    throw InvalidInput(file, "skip_steps",
                StrCat("skipping ", options.skip_steps, " warm-up steps leaves none: the trace has ", s.steps_found,
                       s.step_source == StepSource::kWholeTrace ? " step (no ProfilerStep markers)" : " steps"));
  }
  if (options.device) CheckDevicePresent(raw, file, *options.device);
  s.steps_skipped = options.skip_steps;
  const int first = options.skip_steps;
  const int last = options.max_steps > 0 ? std::min(s.steps_found, first + options.max_steps) : s.steps_found;

  std::vector<std::map<int, std::vector<const GpuEvent*>>> by_step(steps.numbers.size());  // by device
  for (size_t i = 0; i < raw.gpu.size(); ++i) {
    if (steps.step_of[i] < first || steps.step_of[i] >= last) continue;
    by_step[steps.step_of[i]][raw.gpu[i].device].push_back(&raw.gpu[i]);
  }
  std::sort(raw.runtime.begin(), raw.runtime.end(),
            [](const RuntimeCall& a, const RuntimeCall& b) { return a.start < b.start; });
  for (int k = first; k < last; ++k) {
    TraceStep step = SummarizeStep(steps.numbers[k], by_step[k], options.device);
    if (s.step_source == StepSource::kWholeTrace) {
      if (!raw.runtime.empty()) step.host = HostIn(raw.runtime, raw.runtime.front().start, raw.runtime.back().start);
    } else if (auto w = cpu_windows.find(step.number); w != cpu_windows.end()) {
      step.host = HostIn(raw.runtime, w->second.first, w->second.second);
    }
    s.steps.push_back(std::move(step));
  }
  s.mean = MeanOf(s.steps);
  return s;
}

StepTraceSummary ReadKinetoTrace(const std::string& path, const TraceReadOptions& options) {
  return ParseKinetoTrace(ReadMaybeGzipFile(path), path, options);
}

}  // namespace parasim::calibrate
