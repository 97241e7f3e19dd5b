#include "cost_model/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/report_json.h"

namespace parasim {

const char* ToString(Fidelity f) {
  switch (f) {
    case Fidelity::kAnalytical: return "analytical";
    case Fidelity::kSimulated: return "simulated";
    case Fidelity::kFull: return "full";
  }
  return "?";
}

namespace {

double Finite(double x, const char* field) {
  PARASIM_CHECK(std::isfinite(x), "non-finite report field ", field);
  return x;
}

std::string ShardingText(const ParallelConfig& c) {
  return c.sharding == ShardingMode::kHsdp ? StrCat("hsdp:", c.hsdp_group) : std::string(ToString(c.sharding));
}

nlohmann::ordered_json ToJsonObject(const Report& r) {
  nlohmann::ordered_json j;
  const ParallelConfig& c = r.config;
  j["config"] = {{"dp", c.dp},
                 {"tp", c.tp},
                 {"pp", c.pp},
                 {"cp", c.cp},
                 {"ep", c.ep},
                 {"sharding", ShardingText(c)},
                 {"micro_batch", c.micro_batch},
                 {"num_micro_batches", r.num_micro_batches},
                 {"interleave", c.vpp},
                 {"recompute", ToString(c.recompute)},
                 {"sequence_parallel", c.sequence_parallel},
                 {"schedule", ToString(c.schedule)},
                 {"prefetch", c.prefetch},
                 {"order", c.order},
                 {"text", c.ToString()}};
  j["feasible"] = r.feasible;
  if (!r.feasible) j["infeasible_reason"] = r.infeasible_reason;
  j["step_time_s"] = Finite(r.step_time.si(), "step_time_s");
  j["tokens_per_s"] = Finite(r.tokens_per_s, "tokens_per_s");
  j["tokens_per_s_per_gpu"] = Finite(r.tokens_per_s_per_gpu, "tokens_per_s_per_gpu");
  j["mfu"] = Finite(r.mfu, "mfu");
  j["hfu"] = Finite(r.hfu, "hfu");
  j["mfu_own_precision"] = Finite(r.mfu_own_precision, "mfu_own_precision");
  j["tflops_per_gpu"] = Finite(r.tflops_per_gpu, "tflops_per_gpu");
  j["hardware_tflops_per_gpu"] = Finite(r.hardware_tflops_per_gpu, "hardware_tflops_per_gpu");
  j["compute_s"] = Finite(r.compute.si(), "compute_s");
  j["comm_s"] = Finite(r.comm.si(), "comm_s");
  j["exposed_comm_s"] = Finite(r.exposed_comm.si(), "exposed_comm_s");
  j["exposed_comm_fraction"] = Finite(r.exposed_comm_fraction, "exposed_comm_fraction");
  j["bubble_s"] = Finite(r.bubble.si(), "bubble_s");
  j["memory_bytes_per_gpu"] = Finite(r.memory_per_gpu.si(), "memory_bytes_per_gpu");
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (double bytes : r.memory_bytes_per_stage) stages.push_back(Finite(bytes, "memory_bytes_per_stage"));
  j["memory_bytes_per_stage"] = stages;
  j["memory_peak_stage"] = r.memory_peak_stage;
  j["power_w_per_gpu"] = Finite(r.power_per_gpu.si(), "power_w_per_gpu");
  j["energy_j_per_step"] = Finite(r.energy_per_step.si(), "energy_j_per_step");
  j["tokens_per_joule"] = Finite(r.tokens_per_joule, "tokens_per_joule");
  j["exposed_comm_energy_j_per_token"] =
      Finite(r.exposed_comm_energy_per_token.si(), "exposed_comm_energy_j_per_token");
  j["fidelity"] = ToString(r.fidelity);
  auto entries = [](const std::vector<TimeBreakdownEntry>& v) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& e : v)
      a.push_back({{"name", e.name},
                   {"total_s", Finite(e.total.si(), "breakdown total_s")},
                   {"exposed_s", Finite(e.exposed.si(), "breakdown exposed_s")}});
    return a;
  };
  j["by_op"] = entries(r.by_op);
  j["by_dimension"] = entries(r.by_dimension);
  nlohmann::ordered_json mem = nlohmann::ordered_json::object();
  for (const auto& [name, bytes] : r.memory_breakdown_bytes) mem[name] = Finite(bytes, "memory_breakdown_bytes");
  j["memory_breakdown_bytes"] = mem;
  return j;
}

struct Column {
  const char* header;
  std::string (*cell)(const Report&);
};

std::string ShortConfig(const Report& r) {
  const ParallelConfig& c = r.config;
  std::string s = StrCat("dp=", c.dp, ",tp=", c.tp, ",pp=", c.pp);
  if (c.cp > 1) {   // the kind a plan's CP uses (a2a+p2p with its all-to-all group: "a2a+p2p:2")
    s += StrCat(",cp=", c.cp, "(", ToString(c.cp_comm),
                c.cp_comm == CpComm::kA2aP2p ? StrCat(":", c.cp_a2a_size) : std::string(), ")");
  }
  if (c.ep > 1) s += StrCat(",ep=", c.ep);
  s += StrCat(",mbs=", c.micro_batch, ",", ShardingText(c));
  if (c.recompute != RecomputeMode::kNone) s += StrCat(",rc=", ToString(c.recompute));
  if (c.recompute_layers > 0) s += StrCat(":", c.recompute_layers);   // layers per stage recomputed
  if (c.sequence_parallel) s += ",sp";
  if (c.vpp > 1) s += StrCat(",vpp=", c.vpp);
  return s;
}

const Column kColumns[] = {
    {"config", [](const Report& r) { return ShortConfig(r); }},
    {"fits", [](const Report& r) { return std::string(r.feasible ? "yes" : "no"); }},
    {"step_s", [](const Report& r) { return FormatFixed(r.step_time.si(), 4); }},
    {"tok/s/gpu", [](const Report& r) { return FormatFixed(r.tokens_per_s_per_gpu, 0); }},
    {"mfu%", [](const Report& r) { return FormatFixed(100 * r.mfu, 1); }},
    {"hfu%", [](const Report& r) { return FormatFixed(100 * r.hfu, 1); }},
    {"mfu_own%", [](const Report& r) { return FormatFixed(100 * r.mfu_own_precision, 1); }},
    {"tflops", [](const Report& r) { return FormatFixed(r.tflops_per_gpu, 1); }},
    {"comm_s", [](const Report& r) { return FormatFixed(r.comm.si(), 4); }},
    {"exposed%", [](const Report& r) { return FormatFixed(100 * r.exposed_comm_fraction, 1); }},
    {"bubble_s", [](const Report& r) { return FormatFixed(r.bubble.si(), 4); }},
    {"mem_GB", [](const Report& r) { return FormatFixed(r.memory_per_gpu.si() / 1e9, 1); }},
    {"W/gpu", [](const Report& r) { return FormatFixed(r.power_per_gpu.si(), 0); }},
    {"tok/J", [](const Report& r) { return FormatFixed(r.tokens_per_joule, 2); }},
};

}  // namespace

nlohmann::ordered_json ReportToJsonValue(const Report& report) { return ToJsonObject(report); }
std::string ReportToJson(const Report& report, int indent) { return ToJsonObject(report).dump(indent); }

std::string ReportsToTable(const std::vector<Report>& reports) {
  constexpr size_t n = sizeof(kColumns) / sizeof(kColumns[0]);
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> width(n);
  std::vector<std::string> header;
  for (size_t i = 0; i < n; ++i) {
    header.push_back(kColumns[i].header);
    width[i] = header[i].size();
  }
  for (const Report& r : reports) {
    std::vector<std::string> row;
    for (size_t i = 0; i < n; ++i) {
      row.push_back(kColumns[i].cell(r));
      width[i] = std::max(width[i], row.back().size());
    }
    rows.push_back(std::move(row));
  }
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < n; ++i) {
      const std::string& cell = cells[i];
      if (i == 0) {
        os << cell << std::string(width[i] - cell.size(), ' ');
      } else {
        os << "  " << std::string(width[i] - cell.size(), ' ') << cell;
      }
    }
    os << '\n';
  };
  line(header);
  for (const auto& row : rows) line(row);
  for (const Report& r : reports)
    if (!r.feasible) os << "infeasible " << ShortConfig(r) << ": " << r.infeasible_reason << '\n';
  return os.str();
}

std::string StageMemoryText(const Report& r) {
  std::string out = "memory per pipeline stage (per GPU, peak over the step):\n";
  for (size_t s = 0; s < r.memory_bytes_per_stage.size(); ++s) {
    std::string name = StrCat("stage ", s);
    name.resize(std::max<size_t>(name.size() + 1, 18), ' ');   // the column of the breakdown above
    out += StrCat("  ", name, FormatFixed(Finite(r.memory_bytes_per_stage[s], "memory_bytes_per_stage") / 1e9, 2),
                  " GB", static_cast<int>(s) == r.memory_peak_stage ? "  (peak)" : "", "\n");
  }
  return out;
}

std::string ReportsToCsv(const std::vector<Report>& reports) {
  static const char* kFields[] = {"config", "feasible", "infeasible_reason", "step_time_s", "tokens_per_s",
                                  "tokens_per_s_per_gpu", "mfu", "hfu", "tflops_per_gpu",
                                  "hardware_tflops_per_gpu", "compute_s", "comm_s", "exposed_comm_s",
                                  "exposed_comm_fraction", "bubble_s", "memory_bytes_per_gpu", "power_w_per_gpu",
                                  "energy_j_per_step", "tokens_per_joule", "mfu_own_precision", "fidelity"};
  std::ostringstream os;
  for (size_t i = 0; i < sizeof(kFields) / sizeof(kFields[0]); ++i) os << (i ? "," : "") << kFields[i];
  os << '\n';
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (const Report& r : reports) {
    os << quoted(r.config.ToString()) << ',' << (r.feasible ? "true" : "false") << ',' << quoted(r.infeasible_reason);
    const double values[] = {r.step_time.si(), r.tokens_per_s, r.tokens_per_s_per_gpu, r.mfu, r.hfu,
                             r.tflops_per_gpu, r.hardware_tflops_per_gpu, r.compute.si(), r.comm.si(),
                             r.exposed_comm.si(), r.exposed_comm_fraction, r.bubble.si(), r.memory_per_gpu.si(),
                             r.power_per_gpu.si(), r.energy_per_step.si(), r.tokens_per_joule,
                             r.mfu_own_precision};
    for (double x : values) os << ',' << StrCat(Finite(x, "csv field"));
    os << ',' << ToString(r.fidelity) << '\n';
  }
  return os.str();
}

}  // namespace parasim
