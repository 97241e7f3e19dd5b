#include "simulator/trace.h"

#include <cmath>
#include <cstdio>

#include "core/check.h"

namespace parasim::simulator {

namespace {

void AppendEscaped(std::string& out, const std::string& s) {
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
}

void AppendNumber(std::string& out, double v) {
  PARASIM_CHECK(std::isfinite(v), "non-finite number in trace");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  out += buf;
}

void AppendMetadata(std::string& out, const char* what, int pid, int tid, const std::string& name) {
  out += "{\"ph\":\"M\",\"name\":\"";
  out += what;
  out += "\",\"ts\":0,\"dur\":0,\"pid\":";
  out += std::to_string(pid);
  out += ",\"tid\":";
  out += std::to_string(tid);
  out += ",\"args\":{\"name\":\"";
  AppendEscaped(out, name);
  out += "\"}},\n";
}

}  // namespace

std::string WriteChromeTrace(const TaskGraph& graph, const Timeline& timeline, const PowerModel& power,
                             const std::vector<char>* keep) {
  PARASIM_CHECK(keep == nullptr || keep->size() == static_cast<size_t>(graph.num_ranks()), "trace rank selection size");
  const auto kept = [keep](int rank) { return keep == nullptr || (*keep)[static_cast<size_t>(rank)] != 0; };
  int64_t kept_ops = 0;
  for (int32_t op = 0; op < graph.num_ops(); ++op) kept_ops += kept(graph.op_rank(op)) ? 1 : 0;
  std::string out;
  out.reserve(static_cast<size_t>(kept_ops) * 160 + 4096);
  out += "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  // Processes = ranks, threads = streams (tid = stream index + 1; tid 0 holds
  // the power counter).
  for (int r = 0; r < graph.num_ranks(); ++r) {
    if (kept(r)) AppendMetadata(out, "process_name", r, 0, graph.rank_name(r));
  }
  for (int s = 0; s < graph.num_streams(); ++s) {
    if (!kept(graph.stream_rank(s))) continue;
    AppendMetadata(out, "thread_name", graph.stream_rank(s), s + 1, ToString(graph.stream_kind(s)));
  }
  for (int32_t op = 0; op < graph.num_ops(); ++op) {
    if (!kept(graph.op_rank(op))) continue;
    const int32_t act = graph.op_activity(op);
    const ActivitySpec& spec = graph.activity(act);
    // Start and end on the printed ns grid, duration their difference: ops
    // that run back to back stay back to back (no sub-ns gaps for readers
    // that compute idle time, such as calibrate import-trace).
    const double start_us = std::round(timeline.start_s[act] * 1e9) / 1e3;
    const double dur_us = std::round(timeline.end_s[act] * 1e9) / 1e3 - start_us;
    out += "{\"ph\":\"X\",\"name\":\"";
    AppendEscaped(out, graph.name(spec.name));
    if (spec.layer >= 0) out += " L" + std::to_string(spec.layer);
    if (spec.chunk > 0) out += " c" + std::to_string(spec.chunk);
    if (spec.micro_batch >= 0) out += " mb" + std::to_string(spec.micro_batch);
    out += "\",\"cat\":\"";
    out += ToString(spec.kind);
    out += "\",\"ts\":";
    AppendNumber(out, start_us);
    out += ",\"dur\":";
    AppendNumber(out, dur_us);
    out += ",\"pid\":";
    out += std::to_string(graph.op_rank(op));
    out += ",\"tid\":";
    out += std::to_string(graph.op_stream(op) + 1);
    out += ",\"args\":{\"layer\":";
    out += std::to_string(spec.layer);
    out += ",\"micro_batch\":";
    out += std::to_string(spec.micro_batch);
    out += ",\"chunk\":";
    out += std::to_string(spec.chunk);
    if (spec.kind == WorkKind::kComm) {
      out += ",\"bytes\":";
      AppendNumber(out, spec.bytes);
      out += ",\"ranks\":";
      out += std::to_string(graph.activity_num_ops(act));
    }
    out += "}},\n";
  }
  std::vector<std::vector<PowerStep>> steps;
  SummarizeRanks(graph, timeline, power, timeline.makespan_s, &steps);
  for (int r = 0; r < graph.num_ranks(); ++r) {
    if (!kept(r)) continue;
    for (const PowerStep& step : steps[r]) {
      out += "{\"ph\":\"C\",\"name\":\"power\",\"ts\":";
      AppendNumber(out, step.start_s * 1e6);
      out += ",\"dur\":0,\"pid\":";
      out += std::to_string(r);
      out += ",\"tid\":0,\"args\":{\"watts\":";
      AppendNumber(out, step.watts);
      out += "}},\n";
    }
    // Close the track at the step's end so the last level has a width.
    out += "{\"ph\":\"C\",\"name\":\"power\",\"ts\":";
    AppendNumber(out, timeline.makespan_s * 1e6);
    out += ",\"dur\":0,\"pid\":";
    out += std::to_string(r);
    out += ",\"tid\":0,\"args\":{\"watts\":";
    AppendNumber(out, steps[r].back().watts);
    out += "}},\n";
  }
  // Drop the last separator.
  if (out.size() >= 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
  out += "]}\n";
  return out;
}

}  // namespace parasim::simulator
