#include "core/input_file.h"
#include "calibrate/microbench_data.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

using nlohmann::json;

json ReadJson(const std::string& path) {
  const std::string text = ReadInputFile(path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {   // syntax (with its byte offset), a number out of range, ...
    throw InvalidInput(path, "", StrCat("not valid JSON: ", e.what()));
  }
}

// Typed access that names the file and the key path on failure.
class Reader {
 public:
  Reader(std::string file, std::string benchmark) : file_(std::move(file)), benchmark_(std::move(benchmark)) {}

  const json& Get(const json& obj, const std::string& key, const std::string& path) const {
    if (!obj.is_object() || !obj.contains(key)) throw InvalidInput(file_, Join(path, key), "missing");
    return obj.at(key);
  }
  double Number(const json& obj, const std::string& key, const std::string& path, bool positive = false) const {
    const json& v = Get(obj, key, path);
    if (!v.is_number()) throw InvalidInput(file_, Join(path, key), "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || (positive && d == 0))
      throw InvalidInput(file_, Join(path, key), StrCat("'", d, "' must be ", positive ? "positive" : "non-negative"));
    return d;
  }
  std::string String(const json& obj, const std::string& key, const std::string& path) const {
    const json& v = Get(obj, key, path);
    if (!v.is_string()) throw InvalidInput(file_, Join(path, key), "must be a string");
    return v.get<std::string>();
  }
  const json& Array(const json& obj, const std::string& key) const {
    const json& v = Get(obj, key, "");
    if (!v.is_array()) throw InvalidInput(file_, key, "must be an array");
    return v;
  }
  void CheckBenchmark(const json& doc) const {
    const std::string b = String(doc, "benchmark", "");
    if (b != benchmark_) throw InvalidInput(file_, "benchmark", StrCat("'", b, "' is not '", benchmark_, "'"));
  }
  std::string Device(const json& doc) const { return String(Get(doc, "device", ""), "name", "device"); }
  const std::string& file() const { return file_; }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string file_, benchmark_;
};

}  // namespace

const PowerState* PowerStates::Find(const std::string& state) const {
  for (const auto& s : states)
    if (s.state == state) return &s;
  return nullptr;
}

GemmSweep LoadGemmSweep(const std::string& path) {
  const json doc = ReadJson(path);
  Reader r(path, "gemm_sweep");
  r.CheckBenchmark(doc);
  GemmSweep out;
  out.file = path;
  out.device = r.Device(doc);
  out.timestamp = r.String(doc, "timestamp_utc", "");
  if (doc.contains("preheat_s")) out.preheat_s = r.Number(doc, "preheat_s", "");
  auto dtype_of = [&](const json& obj, const std::string& at, const std::string& fallback) {
    if (!obj.contains("dtype")) return fallback;
    const std::string d = r.String(obj, "dtype", at);
    if (d != "bf16" && d != "fp8")
      throw InvalidInput(path, Reader::Join(at, "dtype"), StrCat("'", d, "' is neither bf16 nor fp8"));
    return d;
  };
  out.dtype = dtype_of(doc, "", "bf16");
  const json& rows = r.Array(doc, "results");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string at = StrCat("results[", i, "]");
    const json& row = rows[i];
    GemmSample s;
    s.model = r.String(row, "model", at);
    s.layer = r.String(row, "layer", at);
    s.pass = r.String(row, "pass", at);
    s.dtype = dtype_of(row, at, out.dtype);
    s.tokens = static_cast<int>(r.Number(row, "tokens", at));
    s.tp = static_cast<int>(r.Number(row, "tp", at, true));
    s.m = static_cast<int64_t>(r.Number(row, "m", at, true));
    s.n = static_cast<int64_t>(r.Number(row, "n", at, true));
    s.k = static_cast<int64_t>(r.Number(row, "k", at, true));
    s.time = Seconds(r.Number(row, "time_s", at, true));
    if (row.contains("fast_accumulate")) {
      const json& f = row.at("fast_accumulate");
      if (!f.is_boolean()) throw InvalidInput(path, Reader::Join(at, "fast_accumulate"), "must be true or false");
      s.fast_accumulate = f.get<bool>();
    }
    out.samples.push_back(std::move(s));
  }
  if (out.samples.empty()) throw InvalidInput(path, "results", "no GEMM rows");
  return out;
}

BandwidthSweep LoadBandwidthSweep(const std::string& path) {
  const json doc = ReadJson(path);
  Reader r(path, "hbm_bandwidth");
  r.CheckBenchmark(doc);
  BandwidthSweep out;
  out.file = path;
  out.device = r.Device(doc);
  out.timestamp = r.String(doc, "timestamp_utc", "");
  const json& rows = r.Array(doc, "results");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string at = StrCat("results[", i, "]");
    BandwidthSample s;
    s.op = r.String(rows[i], "op", at);
    s.array = Bytes(r.Number(rows[i], "array_bytes", at, true));
    s.moved = Bytes(r.Number(rows[i], "bytes_moved", at, true));
    s.time = Seconds(r.Number(rows[i], "time_s", at, true));
    out.samples.push_back(std::move(s));
  }
  if (out.samples.empty()) throw InvalidInput(path, "results", "no bandwidth rows");
  return out;
}

LaunchOverhead LoadLaunchOverhead(const std::string& path) {
  const json doc = ReadJson(path);
  Reader r(path, "launch_overhead");
  r.CheckBenchmark(doc);
  LaunchOverhead out;
  out.file = path;
  out.device = r.Device(doc);
  out.host_enqueue = Seconds(r.Number(doc, "host_enqueue_s", "", true));
  out.queued = Seconds(r.Number(doc, "queued_s", "", true));
  out.graph = Seconds(r.Number(doc, "graph_s", "", true));
  out.round_trip = Seconds(r.Number(doc, "round_trip_s", "", true));
  return out;
}

PowerStates LoadPowerStates(const std::string& path) {
  const json doc = ReadJson(path);
  Reader r(path, "power_states");
  r.CheckBenchmark(doc);
  PowerStates out;
  out.file = path;
  out.device = r.Device(doc);
  out.driver = doc.contains("driver_version") ? r.String(doc, "driver_version", "") : "";
  out.limit = Watts(r.Number(doc, "power_limit_w", "", true));
  const json& rows = r.Array(doc, "states");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string at = StrCat("states[", i, "]");
    PowerState s;
    s.state = r.String(rows[i], "state", at);
    s.duration = Seconds(r.Number(rows[i], "duration_s", at, true));
    s.sampled = Watts(r.Number(rows[i], "mean_power_w", at, true));
    // The programs write -1 (and JSON null for non-finite) when the counter is missing.
    const json& e = r.Get(rows[i], "energy_counter_power_w", at);
    s.from_energy = Watts(e.is_number() && e.get<double>() > 0 ? e.get<double>() : 0.0);
    s.sm_clock_mhz = r.Number(rows[i], "mean_sm_clock_mhz", at);
    s.throttle_mask = static_cast<uint64_t>(r.Number(rows[i], "throttle_reasons_mask", at));
    out.states.push_back(std::move(s));
  }
  return out;
}

MicrobenchData LoadMicrobenchDir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw InvalidInput(dir, "--measurements", "not a directory");
  MicrobenchData d;
  auto file = [&](const char* name) -> std::optional<std::string> {
    const fs::path p = fs::path(dir) / name;
    if (fs::exists(p)) return p.string();
    return std::nullopt;
  };
  auto note = [&](const std::string& device, const std::string& timestamp) {
    if (d.device.empty()) d.device = device;
    if (d.date.empty() && timestamp.size() >= 10) d.date = timestamp.substr(0, 10);
  };
  if (auto p = file("gemm_sweep.json")) {
    d.gemm = LoadGemmSweep(*p);
    note(d.gemm->device, d.gemm->timestamp);
  }
  if (auto p = file("gemm_sweep_sustained.json")) {
    d.gemm_sustained = LoadGemmSweep(*p);
    note(d.gemm_sustained->device, d.gemm_sustained->timestamp);
  }
  if (auto p = file("gemm_sweep_fp8_sustained.json")) {
    d.gemm_fp8_sustained = LoadGemmSweep(*p);
    note(d.gemm_fp8_sustained->device, d.gemm_fp8_sustained->timestamp);
  }
  if (auto p = file("hbm_bandwidth.json")) {
    d.hbm = LoadBandwidthSweep(*p);
    note(d.hbm->device, d.hbm->timestamp);
  }
  if (auto p = file("launch_overhead.json")) {
    d.launch = LoadLaunchOverhead(*p);
    note(d.launch->device, "");
  }
  if (auto p = file("power_states.json")) {
    d.power = LoadPowerStates(*p);
    note(d.power->device, "");
  }
  if (!d.gemm && !d.gemm_sustained && !d.gemm_fp8_sustained && !d.hbm && !d.launch && !d.power)
    throw InvalidInput(dir, "--measurements",
                "holds none of gemm_sweep.json, gemm_sweep_sustained.json, gemm_sweep_fp8_sustained.json, "
                "hbm_bandwidth.json, launch_overhead.json, power_states.json");
  return d;
}

std::vector<GemmSample> SamplesOfDtype(const std::vector<GemmSample>& samples, const std::string& dtype) {
  std::vector<GemmSample> out;
  for (const auto& s : samples)
    if (s.dtype == dtype) out.push_back(s);
  return out;
}

std::vector<GemmSample> SamplesWithFastAccumulate(const std::vector<GemmSample>& samples, bool fast) {
  std::vector<GemmSample> out;
  for (const auto& s : samples)
    if (s.fast_accumulate == fast) out.push_back(s);
  return out;
}

}  // namespace parasim::calibrate
