#include "calibrate/nccl_bench_data.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

using Json = nlohmann::json;

// nccl_bench's collective names to nccl-tests' (nccl_tests_log.cc kCollectives).
std::string NcclTestsName(const std::string& op) {
  if (op == "all_to_all") return "alltoall";
  if (op == "send_recv") return "sendrecv";
  return op;
}

const Json& Field(const Json& j, const std::string& key, const std::string& file, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw InvalidInput(file, path + key, "missing");
  return j.at(key);
}

double NonNegative(const Json& j, const std::string& key, const std::string& file, const std::string& path) {
  const Json& v = Field(j, key, file, path);
  if (!v.is_number() || v.get<double>() < 0) throw InvalidInput(file, path + key, "expected a number >= 0");
  return v.get<double>();
}

NcclTestsResult Result(const Json& j, const std::string& file, const std::string& path) {
  NcclTestsResult r;
  r.time = Seconds(NonNegative(j, "time_us", file, path) * 1e-6);
  r.algbw = BytesPerSecond(NonNegative(j, "algbw_GBps", file, path) * 1e9);
  r.busbw = BytesPerSecond(NonNegative(j, "busbw_GBps", file, path) * 1e9);
  return r;
}

NcclBenchTable Table(const Json& t, const NcclBenchRun& run, const std::string& file, const std::string& path,
                     const std::string& algo, const std::string& proto) {
  NcclBenchTable out;
  out.group = Field(t, "group", file, path).get<std::string>();
  out.group_color = static_cast<int>(NonNegative(t, "group_color", file, path));
  out.algo = algo, out.proto = proto;
  out.table.file = file;
  out.table.collective = NcclTestsName(Field(t, "collective", file, path).get<std::string>());
  out.table.ranks = static_cast<int>(NonNegative(t, "group_ranks", file, path));
  out.table.nccl_version = run.nccl_version;
  const Json& rows = Field(t, "rows", file, path);
  if (!rows.is_array()) throw InvalidInput(file, path + "rows", "expected an array");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string rp = path + "rows[" + std::to_string(i) + "].";
    NcclTestsRow r;
    r.size = Bytes(NonNegative(rows[i], "size", file, rp));
    r.count = static_cast<int64_t>(NonNegative(rows[i], "count", file, rp));
    r.type = t.value("type", "float");
    r.redop = t.value("redop", "sum");
    r.out_of_place = Result(Field(rows[i], "out_of_place", file, rp), file, rp + "out_of_place.");
    r.in_place = Result(Field(rows[i], "in_place", file, rp), file, rp + "in_place.");
    r.line = static_cast<int>(i) + 1;
    out.table.rows.push_back(r);
  }
  return out;
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InvalidInput(path, "", "cannot read the file");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

NcclBenchRun ParseNcclBenchJson(std::string_view text, const std::string& file) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InvalidInput(file, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("kind", "") != "nccl_bench") {
    throw InvalidInput(file, "kind", "expected \"nccl_bench\" (the JSON of calibrate/cuda/nccl_bench.cu)");
  }
  try {
    NcclBenchRun run;
    run.file = file;
    run.nccl_version = Field(j, "nccl_version", file, "").get<std::string>();
    run.bootstrap = j.value("bootstrap", "");
    run.device = j.contains("device") ? j["device"].value("name", "") : "";
    run.ranks = static_cast<int>(NonNegative(j, "ranks", file, ""));
    run.nodes = static_cast<int>(NonNegative(j, "nodes", file, ""));
    run.ranks_per_node = static_cast<int>(NonNegative(j, "ranks_per_node", file, ""));
    for (const Json& h : Field(j, "hostnames", file, "")) run.hostnames.push_back(h.get<std::string>());
    const Json env = j.value("env", Json::object());
    const std::string algo = env.value("NCCL_ALGO", ""), proto = env.value("NCCL_PROTO", "");
    const Json& tables = Field(j, "tables", file, "");
    for (size_t i = 0; i < tables.size(); ++i) {
      run.tables.push_back(Table(tables[i], run, file, "tables[" + std::to_string(i) + "].", algo, proto));
    }
    return run;
  } catch (const Json::type_error& e) {
    throw InvalidInput(file, "", std::string("a field has the wrong type: ") + e.what());
  }
}

NcclBenchRun LoadNcclBenchJson(const std::string& path) { return ParseNcclBenchJson(ReadText(path), path); }

bool LooksLikeJson(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char c = 0;
  while (f.get(c)) {
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  }
  return false;
}

std::vector<NcclTestsTable> LoadCollectiveMeasurements(const std::string& path) {
  if (!LooksLikeJson(path)) return LoadNcclTestsLog(path);
  std::vector<NcclTestsTable> out;
  for (NcclBenchTable& t : LoadNcclBenchJson(path).tables) out.push_back(std::move(t.table));
  return out;
}

}  // namespace parasim::calibrate
