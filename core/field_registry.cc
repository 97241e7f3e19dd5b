#include "core/field_registry.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/unit_parse.h"

namespace parasim {
namespace {

// Accessors: one double in and out, whatever the member's type.
template <class Tag>
double ToDouble(Quantity<Tag> q) { return q.si(); }
inline double ToDouble(double v) { return v; }
inline double ToDouble(int v) { return v; }
inline double ToDouble(int64_t v) { return static_cast<double>(v); }
inline double ToDouble(bool v) { return v ? 1.0 : 0.0; }
template <class Tag>
void FromDouble(Quantity<Tag>& q, double v) { q = Quantity<Tag>(v); }
inline void FromDouble(double& m, double v) { m = v; }
// Integer members are set only after a range check (ranges keep them in range).
inline void FromDouble(int& m, double v) { m = static_cast<int>(std::llround(v)); }
inline void FromDouble(int64_t& m, double v) { m = std::llround(v); }
inline void FromDouble(bool& m, double v) { m = v != 0; }

#define PARASIM_ACCESS(Spec, member) \
  [](const Spec& s) { return ToDouble(s.member); }, [](Spec& s, double v) { FromDouble(s.member, v); }

constexpr double kBig = 1e18;  // above any quantity of one device or link, below double overflow in products

FieldRange Positive(double max) { return FieldRange{0, max, true, false, false}; }
FieldRange NonNegative(double max) { return FieldRange{0, max, false, false, false}; }
FieldRange Closed(double min, double max) { return FieldRange{min, max, false, false, false}; }
FieldRange Count(double min, double max) { return FieldRange{min, max, false, false, true}; }
FieldRange Flag() { return FieldRange{0, 1, false, false, true}; }

std::string Number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Strict decimal number: the whole text, finite.
bool ParseReal(const std::string& text, double& out) {
  const char* begin = text.c_str();
  while (*begin == ' ' || *begin == '\t') ++begin;
  if (*begin == '\0') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(begin, &end);
  while (*end == ' ' || *end == '\t') ++end;
  return *end == '\0' && std::isfinite(out) && errno != ERANGE;
}

}  // namespace

const char* UnitName(FieldUnit unit) {
  switch (unit) {
    case FieldUnit::kBytes: return "B";
    case FieldUnit::kBytesPerSecond: return "B/s";
    case FieldUnit::kFlopsPerSecond: return "FLOP/s";
    case FieldUnit::kSeconds: return "s";
    case FieldUnit::kWatts: return "W";
    default: return "";
  }
}

bool FieldRange::Contains(double v) const {
  if (!std::isfinite(v)) return false;
  if (min_open ? !(v > min) : !(v >= min)) return false;
  if (max_open ? !(v < max) : !(v <= max)) return false;
  return !integer || v == std::floor(v);
}

std::string FieldRange::Describe(FieldUnit unit) const {
  if (unit == FieldUnit::kFlag) return "true or false";
  const std::string u = UnitName(unit);
  const std::string suffix = u.empty() ? "" : " " + u;
  if (max >= kNoMax) return StrCat(min_open ? "> " : ">= ", Number(min), suffix);
  return StrCat("in ", min_open ? "(" : "[", Number(min), ", ", Number(max), max_open ? ")" : "]", suffix);
}

double ParseFieldValue(FieldUnit unit, const std::string& text, const std::string& where) {
  switch (unit) {
    case FieldUnit::kBytes: return ParseBytes(text, where).si();
    case FieldUnit::kBytesPerSecond: return ParseBandwidth(text, where).si();
    case FieldUnit::kFlopsPerSecond: return ParseFlopRate(text, where).si();
    case FieldUnit::kSeconds: return ParseDuration(text, where).si();
    case FieldUnit::kWatts: return ParsePower(text, where).si();
    case FieldUnit::kFlag:
      if (text == "true" || text == "yes" || text == "on") return 1;
      if (text == "false" || text == "no" || text == "off") return 0;
      throw InvalidInput("", where, StrCat("'", text, "' is not a boolean; write true or false"));
    case FieldUnit::kCount: {
      double v = 0;
      if (!ParseReal(text, v) || v != std::floor(v)) {
        throw InvalidInput("", where, StrCat("'", text, "' is not an integer"));
      }
      return v;
    }
    case FieldUnit::kRatio: {
      double v = 0;
      if (!ParseReal(text, v)) throw InvalidInput("", where, StrCat("'", text, "' is not a number"));
      return v;
    }
  }
  throw InvalidInput("", where, "unknown field unit");
}

std::string FormatFieldValue(FieldUnit unit, double value) {
  if (unit == FieldUnit::kFlag) return value != 0 ? "true" : "false";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", value);  // round-trips every double
  const std::string u = UnitName(unit);
  return u.empty() ? std::string(buf) : StrCat(buf, " ", u);
}

std::optional<std::string> RangeProblem(const FieldRange& range, FieldUnit unit, double value) {
  if (range.Contains(value)) return std::nullopt;
  const std::string u = UnitName(unit);
  const std::string got = unit == FieldUnit::kFlag ? Number(value) : StrCat(Number(value), u.empty() ? "" : " ", u);
  return StrCat("must be ", range.Describe(unit), ", got ", got);
}

std::string FieldSource(const std::map<std::string, std::string>& sources, const std::string& key) {
  std::string k = key;
  while (true) {
    if (auto it = sources.find(k); it != sources.end()) return it->second;
    const size_t dot = k.rfind('.');
    if (dot == std::string::npos) return "";
    k.resize(dot);
  }
}

// --- The tables -------------------------------------------------------------
// Limits are plausibility bounds (hw_profiles/SCHEMA.md "Ranges"): far above
// every device and fabric shipped, so a real profile never meets them, while
// zero, negative and absurd values (a typo's 1e9 GPUs per node) fail early.

const std::vector<GpuField>& GpuProfileFields() {
  using G = GpuProfile;
  using U = FieldUnit;
  static const std::vector<GpuField> fields = {
      {"compute_capability", "", U::kCount, Count(10, 1000), true, "CUDA compute capability x10 (90 = 9.0)",
       std::nullopt, PARASIM_ACCESS(G, compute_capability)},
      {"sm_count", "", U::kCount, Count(1, 100000), true, "streaming multiprocessors", std::nullopt,
       PARASIM_ACCESS(G, sm_count)},
      {"peak.bf16", "bf16_dense", U::kFlopsPerSecond, Positive(kBig), true, "dense BF16 tensor peak", std::nullopt,
       PARASIM_ACCESS(G, bf16_dense)},
      {"peak.fp16", "fp16_dense", U::kFlopsPerSecond, NonNegative(kBig), false, "dense FP16 tensor peak (0 = none)",
       std::nullopt, PARASIM_ACCESS(G, fp16_dense)},
      {"peak.fp8", "fp8_dense", U::kFlopsPerSecond, NonNegative(kBig), false, "dense FP8 tensor peak (0 = none)",
       std::nullopt, PARASIM_ACCESS(G, fp8_dense)},
      {"peak.fp4", "fp4_dense", U::kFlopsPerSecond, NonNegative(kBig), false,
       "dense NVFP4/MXFP4 tensor peak (0 = none)", std::nullopt, PARASIM_ACCESS(G, fp4_dense)},
      {"peak.tf32", "tf32_dense", U::kFlopsPerSecond, NonNegative(kBig), false, "dense TF32 tensor peak (0 = none)",
       std::nullopt, PARASIM_ACCESS(G, tf32_dense)},
      {"peak.fp32", "fp32", U::kFlopsPerSecond, Positive(kBig), true, "FP32 non-tensor peak", std::nullopt,
       PARASIM_ACCESS(G, fp32)},
      {"memory.capacity", "hbm_capacity", U::kBytes, Positive(1e15), true, "HBM capacity", std::nullopt,
       PARASIM_ACCESS(G, hbm_capacity)},
      {"memory.bandwidth", "hbm_bandwidth", U::kBytesPerSecond, Positive(1e15), true, "HBM bandwidth", std::nullopt,
       PARASIM_ACCESS(G, hbm_bandwidth)},
      {"memory.l2_cache", "l2_cache", U::kBytes, NonNegative(1e12), false, "L2 cache", std::nullopt,
       PARASIM_ACCESS(G, l2_cache)},
      {"nvlink.bandwidth", "nvlink_bandwidth", U::kBytesPerSecond, NonNegative(1e15), false,
       "NVLink per direction, all links (0 = none)", std::nullopt, PARASIM_ACCESS(G, nvlink_bandwidth)},
      {"nvlink.links", "nvlink_links", U::kCount, Count(0, 1000), false, "NVLink links", std::nullopt,
       PARASIM_ACCESS(G, nvlink_links)},
      {"nvlink.nvls", "nvls", U::kFlag, Flag(), false, "NVLink SHARP in the switch", std::nullopt,
       PARASIM_ACCESS(G, nvls)},
      {"pcie_bandwidth", "", U::kBytesPerSecond, Positive(1e15), true, "PCIe per direction", std::nullopt,
       PARASIM_ACCESS(G, pcie_bandwidth)},
      {"power.tdp", "tdp", U::kWatts, Positive(1e5), true, "board power limit", std::nullopt, PARASIM_ACCESS(G, tdp)},
      {"power.idle", "idle_power", U::kWatts, NonNegative(1e5), true, "idle power", std::nullopt,
       PARASIM_ACCESS(G, idle_power)},
      {"power.matmul_fraction", "power_matmul_fraction", U::kRatio, Closed(0, 1), false,
       "power of tensor-core bound kernels / tdp", std::nullopt, PARASIM_ACCESS(G, power_matmul_fraction)},
      {"power.memory_fraction", "power_memory_fraction", U::kRatio, Closed(0, 1), false,
       "power of memory-bound kernels / tdp", std::nullopt, PARASIM_ACCESS(G, power_memory_fraction)},
      {"power.comm_fraction", "power_comm_fraction", U::kRatio, Closed(0, 1), false,
       "power of NCCL kernels alone / tdp", std::nullopt, PARASIM_ACCESS(G, power_comm_fraction)},
      // 4.7%: rms time error of the H100 GEMM fit (49 Llama-2 shapes after 10 s
      // of load; hw_profiles/gpus/h100-sxm.yaml efficiency.gemm_max), the only fit.
      {"efficiency.gemm_max", "gemm_max_efficiency", U::kRatio, Closed(0.01, 1), false,
       "best-shape GEMM / peak, sustained", 0.047, PARASIM_ACCESS(G, gemm_max_efficiency)},
      {"efficiency.gemm_max_fp8", "gemm_max_fp8_efficiency", U::kRatio, Closed(0, 1), false,
       "best-shape FP8 GEMM / FP8 peak, sustained (0 = efficiency.gemm_max)", std::nullopt,
       PARASIM_ACCESS(G, gemm_max_fp8_efficiency)},
      {"efficiency.gemm_fp8_split_accum", "gemm_fp8_split_accum_rate", U::kRatio, Closed(0, 1), false,
       "FP8 GEMM rate with the split accumulator / with fast accumulation (0 = 1)", std::nullopt,
       PARASIM_ACCESS(G, gemm_fp8_split_accum_rate)},
      {"efficiency.attention_forward_scale", "attention_forward_scale", U::kRatio, Closed(0, 4), false,
       "fused attention forward efficiency / the stack's figure for the architecture (0 = 1)", std::nullopt,
       PARASIM_ACCESS(G, attention_forward_scale)},
      {"efficiency.attention_backward_scale", "attention_backward_scale", U::kRatio, Closed(0, 4), false,
       "fused attention backward efficiency / the stack's figure for the architecture (0 = 1)", std::nullopt,
       PARASIM_ACCESS(G, attention_backward_scale)},
      {"efficiency.sustained", "sustained_fraction", U::kRatio, Closed(0.01, 1), false,
       "sustained / burst tensor throughput", std::nullopt, PARASIM_ACCESS(G, sustained_fraction)},
      {"efficiency.gemm_k0", "gemm_k0", U::kRatio, Closed(0, 1e6), false, "GEMM shape model: K half point (0 = none)",
       std::nullopt, PARASIM_ACCESS(G, gemm_k0)},
      {"efficiency.gemm_half_outputs", "gemm_half_outputs", U::kRatio, Closed(0, 1e12), false,
       "GEMM shape model: outputs at half occupancy (0 = none)", std::nullopt, PARASIM_ACCESS(G, gemm_half_outputs)},
      {"efficiency.memory", "memory_efficiency", U::kRatio, Closed(0.01, 1), false,
       "achievable / peak HBM bandwidth", std::nullopt, PARASIM_ACCESS(G, memory_efficiency)},
      {"efficiency.nvlink", "nvlink_efficiency", U::kRatio, Closed(0.01, 1), false,
       "achievable / spec NVLink bandwidth", std::nullopt, PARASIM_ACCESS(G, nvlink_efficiency)},
  };
  return fields;
}

const std::vector<ClusterField>& ClusterFields() {
  using C = ClusterSpec;
  using U = FieldUnit;
  static const std::vector<ClusterField> fields = {
      {"gpus_per_node", "", U::kCount, Count(1, kMaxTotalGpus), true, "GPUs per node", std::nullopt,
       PARASIM_ACCESS(C, gpus_per_node)},
      {"nodes", "", U::kCount, Count(1, kMaxTotalGpus), false, "nodes", std::nullopt, PARASIM_ACCESS(C, nodes)},
      {"intra_node.nvlink_domain_size", "", U::kCount, Count(1, kMaxTotalGpus), false, "GPUs in one NVLink domain",
       std::nullopt, PARASIM_ACCESS(C, intra_node.nvlink_domain_size)},
      {"intra_node.nvlink_domain_usable", "", U::kCount, Count(0, kMaxTotalGpus), false,
       "GPUs of each NVLink domain a job may use (0 or absent: all)", std::nullopt,
       PARASIM_ACCESS(C, intra_node.nvlink_domain_usable)},
      {"intra_node.nvlink_latency", "", U::kSeconds, NonNegative(1), false, "per NVLink hop", std::nullopt,
       PARASIM_ACCESS(C, intra_node.nvlink_latency)},
      {"inter_node.tiers", "", U::kCount, Count(1, 3), false, "switch tiers (files may say auto)", std::nullopt,
       PARASIM_ACCESS(C, inter_node.tiers)},
      {"inter_node.rail_optimized", "", U::kFlag, Flag(), false, "rail-optimized leaves", std::nullopt,
       PARASIM_ACCESS(C, inter_node.rail_optimized)},
      {"inter_node.scalable_unit_nodes", "", U::kCount, Count(1, kMaxTotalGpus), false, "nodes per scalable unit",
       std::nullopt, PARASIM_ACCESS(C, inter_node.scalable_unit_nodes)},
      {"inter_node.nics_per_node", "", U::kCount, Count(1, 1024), false, "NICs per node", std::nullopt,
       PARASIM_ACCESS(C, inter_node.nics_per_node)},
      // 12.5% = 1.4826 x 8.4%, the median |error| of collective times >= 64 MiB
      // fitted with each cluster left out (docs/accuracy.md "Collectives"): a
      // normal spread whose median absolute deviation is that error.
      {"inter_node.nic_bandwidth", "", U::kBytesPerSecond, Positive(1e15), false, "per NIC, per direction",
       0.125, PARASIM_ACCESS(C, inter_node.nic_bandwidth)},
      {"inter_node.oversubscription", "", U::kRatio, Closed(1, 64), false, "down:up ratio at each leaf",
       std::nullopt, PARASIM_ACCESS(C, inter_node.oversubscription)},
      {"inter_node.switch_radix", "", U::kCount, Count(4, 1e5), false, "ports per switch", std::nullopt,
       PARASIM_ACCESS(C, inter_node.switch_radix)},
      // 29%: QM9700 port-to-port latency is quoted 130-400 ns by different
      // sources (hw_profiles cluster files); a uniform range's sd over its middle.
      {"inter_node.switch_latency", "", U::kSeconds, NonNegative(1), false, "per switch traversal", 0.29,
       PARASIM_ACCESS(C, inter_node.switch_latency)},
      // 28% = 1.4826 x 19.1%, the left-out median |error| of 1-64 MiB collective
      // times (latency-dominated; docs/accuracy.md "Collectives").
      {"inter_node.nic_latency", "", U::kSeconds, NonNegative(1), false, "NIC + PCIe + proxy per message",
       0.28, PARASIM_ACCESS(C, inter_node.nic_latency)},
      {"inter_node.sharp", "", U::kFlag, Flag(), false, "IB SHARP available", std::nullopt,
       PARASIM_ACCESS(C, inter_node.sharp)},
      {"power.node_overhead", "", U::kWatts, NonNegative(1e6), false, "CPUs, NICs, fans per node", std::nullopt,
       PARASIM_ACCESS(C, node_overhead_power)},
      {"power.per_switch", "", U::kWatts, NonNegative(1e6), false, "per network switch", std::nullopt,
       PARASIM_ACCESS(C, network_power_per_switch)},
  };
  return fields;
}

const std::vector<JobField>& JobFields() {
  using J = JobSpec;
  using U = FieldUnit;
  // 1e8 x 1e8 tokens per step stays exact in int64 (and in a double).
  static const std::vector<JobField> fields = {
      {"global_batch", "", U::kCount, Count(1, 1e8), false, "sequences per optimizer step", std::nullopt,
       PARASIM_ACCESS(J, global_batch)},
      {"seq_len", "", U::kCount, Count(1, 1e8), false, "tokens per sequence", std::nullopt, PARASIM_ACCESS(J, seq_len)},
  };
  return fields;
}

#undef PARASIM_ACCESS

// --- Validate ---------------------------------------------------------------

namespace {

template <class Spec>
void CheckRanges(const std::vector<FieldEntry<Spec>>& fields, const Spec& spec, const std::string& file,
                 const std::string& prefix, std::vector<Issue>& out) {
  for (const auto& f : fields) {
    if (auto problem = RangeProblem(f.range, f.unit, f.get(spec))) {
      out.push_back(Issue{file, prefix + f.key, 0, 0, *problem});
    }
  }
}

}  // namespace

std::vector<Issue> ValidateGpuProfile(const GpuProfile& g, const std::string& file) {
  std::vector<Issue> out;
  CheckRanges(GpuProfileFields(), g, file, "", out);
  if (g.idle_power > g.tdp) out.push_back(Issue{file, "power.idle", 0, 0, "idle power exceeds tdp"});
  if ((g.gemm_k0 > 0) != (g.gemm_half_outputs > 0)) {
    out.push_back(Issue{file, "efficiency.gemm_k0", 0, 0,
                        "gemm_k0 and gemm_half_outputs go together (both measured, or both absent)"});
  }
  static const char* const kArchitectures[] = {"volta", "ampere", "hopper", "blackwell"};
  bool known = false;
  for (const char* a : kArchitectures) known = known || g.architecture == a;
  if (!known) {
    out.push_back(Issue{file, "architecture", 0, 0,
                        StrCat("'", g.architecture, "' is not one of: volta, ampere, hopper, blackwell")});
  }
  return out;
}

std::vector<Issue> ValidateCluster(const ClusterSpec& c, const std::string& file) {
  std::vector<Issue> out = ValidateGpuProfile(c.gpu, c.gpu.file.empty() ? file : c.gpu.file);
  CheckRanges(ClusterFields(), c, file, "", out);
  const double total = static_cast<double>(c.gpus_per_node) * c.nodes;
  if (total > kMaxTotalGpus) {
    out.push_back(Issue{file, "nodes", 0, 0,
                        StrCat(c.nodes, " nodes x ", c.gpus_per_node, " GPUs = ", Number(total),
                               " GPUs exceed the limit of ", Number(kMaxTotalGpus))});
  }
  const int d = c.intra_node.nvlink_domain_size;
  if (d >= 1 && c.gpus_per_node >= 1 && c.gpus_per_node % d != 0 && d % c.gpus_per_node != 0) {
    out.push_back(Issue{file, "intra_node.nvlink_domain_size", 0, 0,
                        StrCat(d, " and gpus_per_node ", c.gpus_per_node, " must divide one another")});
  }
  return out;
}

std::vector<Issue> ValidateJob(const JobSpec& job, const std::string& file) {
  std::vector<Issue> out;
  CheckRanges(JobFields(), job, file, "", out);
  return out;
}

}  // namespace parasim
