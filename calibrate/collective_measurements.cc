#include "calibrate/collective_measurements.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

// nccl-tests binary name -> the op; false for ops parasim does not model.
bool OpOfTest(const std::string& name, CollectiveOp* op) {
  static const std::pair<const char*, CollectiveOp> kOps[] = {
      {"all_reduce", CollectiveOp::kAllReduce},         {"all_gather", CollectiveOp::kAllGather},
      {"reduce_scatter", CollectiveOp::kReduceScatter}, {"alltoall", CollectiveOp::kAllToAll},
      {"broadcast", CollectiveOp::kBroadcast},          {"reduce", CollectiveOp::kReduce},
      {"sendrecv", CollectiveOp::kSendRecv}};
  for (const auto& [n, o] : kOps)
    if (name == n) {
      *op = o;
      return true;
    }
  return false;
}

// Ranks implied by the bus factor busbw/algbw (0 for ops whose factor is 1).
int RanksFromBusFactor(CollectiveOp op, double f) {
  if (!(f > 0)) return 0;
  if (op == CollectiveOp::kAllReduce && f < 2.0) return static_cast<int>(std::lround(2.0 / (2.0 - f)));
  if ((op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllToAll) &&
      f < 1.0)
    return static_cast<int>(std::lround(1.0 / (1.0 - f)));
  return 0;
}

struct TableLayout {
  int ranks = 0, nodes = 0, gpn = 0;
};

TableLayout LayoutOf(const NcclTestsTable& t, CollectiveOp op, const ImportLayout& over, const std::string& src) {
  TableLayout l;
  l.ranks = std::max(t.ranks, t.max_rank + 1);
  // Excerpted device lists: the bus factor tells a much larger group.
  const int from_bus = RanksFromBusFactor(op, t.BusFactor());
  if (from_bus > l.ranks * 1.05) l.ranks = from_bus;
  if (t.LayoutComplete() && !t.hosts.empty() && t.ranks % static_cast<int>(t.hosts.size()) == 0) {
    l.nodes = static_cast<int>(t.hosts.size());
    l.gpn = t.ranks / l.nodes;
  } else if (t.max_device >= 0) {
    l.gpn = t.max_device + 1;
  }
  if (over.gpus_per_node > 0) l.gpn = over.gpus_per_node;
  if (over.nodes > 0) l.nodes = over.nodes;
  if (l.nodes == 0 && l.gpn > 0 && l.ranks % l.gpn == 0) l.nodes = l.ranks / l.gpn;
  if (l.gpn == 0 && l.nodes > 0 && l.ranks % l.nodes == 0) l.gpn = l.ranks / l.nodes;
  if (l.ranks < 1 || l.nodes < 1 || l.gpn < 1 || l.nodes * l.gpn != l.ranks)
    throw InvalidInput(src, StrCat("table ", t.rows.empty() ? 0 : t.rows.front().line),
                       StrCat("cannot tell the rank-to-node layout (", l.ranks, " ranks, ", l.nodes, " nodes, ", l.gpn,
                              " per node) from the device lines; give --nodes and --gpus-per-node"));
  return l;
}

}  // namespace

CollectiveMeasurementSet ImportNcclTests(const std::vector<NcclTestsTable>& tables, const std::string& source,
                                         const ImportLayout& layout) {
  CollectiveMeasurementSet set;
  for (size_t i = 0; i < tables.size(); ++i) {
    const NcclTestsTable& t = tables[i];
    CollectiveOp op;
    if (!OpOfTest(t.collective, &op)) continue;
    const TableLayout l = LayoutOf(t, op, layout, source);
    for (const NcclTestsRow& r : t.rows) {
      if (r.size.si() <= 0) continue;
      for (int place = 0; place < (layout.in_place ? 2 : 1); ++place) {
        const NcclTestsResult& res = place ? r.in_place : r.out_of_place;
        if (!(res.time.si() > 0)) continue;
        CollectiveMeasurement m;
        m.source = source;
        m.run = static_cast<int>(i);
        m.op = op;
        m.ranks = l.ranks;
        m.nodes = l.nodes;
        m.gpus_per_node = l.gpn;
        m.nccl_version = t.NcclVersionCode();
        m.algo = t.nccl_algo;
        m.proto = t.nccl_proto;
        m.in_place = place == 1;
        m.dtype = r.type;
        m.size = r.size;
        m.time = res.time;
        m.algbw = res.algbw;
        m.busbw = res.busbw;
        set.rows.push_back(std::move(m));
      }
    }
  }
  return set;
}

CollectiveMeasurementSet ImportNcclTestsFile(const std::string& path, const ImportLayout& layout) {
  const std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  return ImportNcclTests(LoadNcclTestsLog(path), base, layout);
}

std::string CollectiveMeasurementsToJson(const CollectiveMeasurementSet& set) {
  nlohmann::ordered_json j;
  j["kind"] = kCollectiveMeasurementKind;
  j["schema_version"] = 1;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& m : set.rows) {
    j["rows"].push_back({{"source", m.source},
                         {"run", m.run},
                         {"op", ToString(m.op)},
                         {"ranks", m.ranks},
                         {"nodes", m.nodes},
                         {"gpus_per_node", m.gpus_per_node},
                         {"nccl_version", m.nccl_version},
                         {"nccl_algo", m.algo},
                         {"nccl_proto", m.proto},
                         {"in_place", m.in_place},
                         {"dtype", m.dtype},
                         {"size_bytes", m.size.si()},
                         {"time_s", m.time.si()},
                         {"algbw_bytes_per_s", m.algbw.si()},
                         {"busbw_bytes_per_s", m.busbw.si()}});
  }
  return j.dump(1) + "\n";
}

CollectiveMeasurementSet ParseCollectiveMeasurementsJson(const std::string& text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(file, "", StrCat("not JSON: ", e.what()));
  }
  if (!j.is_object() || j.value("kind", "") != kCollectiveMeasurementKind)
    throw InvalidInput(file, "kind", StrCat("expected \"", kCollectiveMeasurementKind, "\""));
  if (j.value("schema_version", 0) != 1) throw InvalidInput(file, "schema_version", "expected 1");
  if (!j.contains("rows") || !j["rows"].is_array()) throw InvalidInput(file, "rows", "expected an array");
  CollectiveMeasurementSet set;
  IssueList issues;
  for (size_t i = 0; i < j["rows"].size(); ++i) {
    const auto& r = j["rows"][i];
    const std::string at = StrCat("rows[", i, "]");
    try {
      CollectiveMeasurement m;
      m.source = r.value("source", "");
      m.run = r.value("run", 0);
      m.op = ParseCollectiveOp(r.at("op").get<std::string>(), at + ".op");
      m.ranks = r.at("ranks").get<int>();
      m.nodes = r.at("nodes").get<int>();
      m.gpus_per_node = r.at("gpus_per_node").get<int>();
      m.nccl_version = r.value("nccl_version", 0);
      m.algo = r.value("nccl_algo", "");
      m.proto = r.value("nccl_proto", "");
      m.in_place = r.value("in_place", false);
      m.dtype = r.value("dtype", "");
      m.size = Bytes(r.at("size_bytes").get<double>());
      m.time = Seconds(r.at("time_s").get<double>());
      m.algbw = BytesPerSecond(r.value("algbw_bytes_per_s", m.size.si() / m.time.si()));
      m.busbw = BytesPerSecond(r.value("busbw_bytes_per_s", m.algbw.si() * BusBandwidthFactor(m.op, m.ranks)));
      if (m.ranks < 1 || m.nodes < 1 || m.gpus_per_node < 1 || m.nodes * m.gpus_per_node != m.ranks)
        issues.Add(Issue{file, at, 0, 0, "ranks must equal nodes x gpus_per_node (all >= 1)"});
      else if (!(m.size.si() > 0) || !(m.time.si() > 0) || !std::isfinite(m.time.si()))
        issues.Add(Issue{file, at, 0, 0, "size_bytes and time_s must be > 0"});
      else
        set.rows.push_back(std::move(m));
    } catch (const nlohmann::json::exception& e) {
      issues.Add(Issue{file, at, 0, 0, StrCat("missing or mistyped field: ", e.what())});
    } catch (const InvalidInput& e) {
      issues.Add(Issue{file, at + ".op", 0, 0, e.what()});
    }
  }
  issues.ThrowIfAny();
  return set;
}

namespace {
std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InvalidInput(path, "", "cannot read the file");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

CollectiveMeasurementSet ReadCollectiveMeasurementsFile(const std::string& path) {
  return ParseCollectiveMeasurementsJson(ReadText(path), path);
}

std::string MeasurementKindOf(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(ReadText(path), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string()) return "";
  return j["kind"].get<std::string>();
}

}  // namespace parasim::calibrate
