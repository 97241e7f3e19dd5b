// Shared by the collective tests: hand-built GroupPaths for DGX-style nodes
// and a reader for the measured CSVs in tests/data/ (copied from the
// project's published-measurements folder; every row names its source).
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cost_model/collective_cost.h"

namespace parasim::testing {

// `nodes` DGX-style nodes of 8 GPUs, the group over all GPUs (tp=1 dp
// placement): NVLink per rank and all 8 NICs of each node to the ring.
inline GroupPath DgxGroup(int nodes, double nvlink_GBps = 450, double nics_GBps = 400, int gpus_per_node = 8) {
  GroupPath p;
  p.nodes = nodes;
  p.ranks_per_node = gpus_per_node;
  p.ranks = gpus_per_node * nodes;
  p.crosses_nodes = nodes > 1;
  p.intra_bandwidth = GBps(nvlink_GBps);
  p.inter_bandwidth = GBps(nics_GBps);
  p.ring_bandwidth = nodes > 1 ? GBps(std::min(nvlink_GBps, nics_GBps)) : GBps(nvlink_GBps);
  // As topology's ResolveGroupPath builds it from the dgx-h100 preset: NVLink
  // hop 0.6 µs; NIC 1 µs + 200 ns per switch; spine beyond one 32-node SU.
  p.intra_hop_latency = Microseconds(0.6);
  p.max_switch_hops = nodes <= 1 ? 0 : (nodes <= 32 ? 1 : 3);
  p.inter_hop_latency = Microseconds(1.0 + 0.2 * p.max_switch_hops);
  p.nvls_capable = nodes == 1;
  p.bottleneck_class = nodes > 1 ? LinkClass::kNic : LinkClass::kNvLink;
  return p;
}

// One rank per node on the same rail (pp-style): one NIC's share.
inline GroupPath RailGroup(int nodes, double nic_GBps = 50) {
  GroupPath p = DgxGroup(nodes, 450, nic_GBps, 1);
  p.single_rail = true;
  p.groups_sharing_node = 8;
  p.ring_bandwidth = GBps(nic_GBps);
  p.nvls_capable = false;
  return p;
}

inline NcclFeatures HopperRingTree() {
  NcclFeatures f;
  f.compute_capability = 90;
  return f;
}

// Minimal CSV reader (RFC 4180 quotes), rows as column -> text.
inline std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  std::string line, record;
  auto split = [](const std::string& rec) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < rec.size(); ++i) {
      char c = rec[i];
      if (quoted) {
        if (c == '"' && i + 1 < rec.size() && rec[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          cur.push_back(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    out.push_back(cur);
    return out;
  };
  while (std::getline(in, line)) {
    if (record.empty() && !line.empty() && line[0] == '#') continue;   // a comment line (sources)
    record += line;
    if (std::count(record.begin(), record.end(), '"') % 2 == 1) {  // newline inside quotes
      record += '\n';
      continue;
    }
    std::vector<std::string> fields = split(record);
    record.clear();
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

inline std::string DataPath(const std::string& file) { return std::string(PARASIM_SOURCE_DIR) + "/tests/data/" + file; }

}  // namespace parasim::testing
