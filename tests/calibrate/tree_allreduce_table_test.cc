// Tree and NVLS-tree AllReduce across nodes: the model against every public
// multi-node measurement that ran one of them (docs/accuracy.md "Collectives:
// tree and NVLS-tree AllReduce across nodes"), and the tree / ring ratio where
// a dataset measured both. Three fabrics: H100 InfiniBand nccl-tests logs
// (tests/data/nccl_multinode), the B200 InfiniBand sweep
// (tests/data/nccl_b200_multinode_peak_busbw_together.csv) and the AWS p5 EFA
// start-up medians (tests/data/collective_nanotron_startup_h100_efa.csv).
// PARASIM_PRINT_COLLECTIVE_TABLE=1 prints the table.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "calibrate/collective_fit.h"
#include "calibrate/collective_measurements.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/cost_model/nanotron_startup_collectives.h"

namespace parasim::calibrate {
namespace {

const std::string kData = std::string(PARASIM_SOURCE_DIR) + "/tests/data";

// Bus bandwidth (B/s) of `algo` at its fastest protocol, as NCCL_ALGO=<algo>
// leaves NCCL to pick; 0 when the algorithm cannot run on the group.
double ForcedBusBw(const GroupPath& g, const NcclFeatures& f, const CollectiveModelParams& p, double bytes,
                   CollectiveAlgo algo) {
  std::optional<CollectiveCost> best;
  for (int pr = 0; pr < kNumProtocols; ++pr) {
    auto c = EstimateCollectiveWith(CollectiveOp::kAllReduce, Bytes(bytes), g, f, p, algo, static_cast<Protocol>(pr));
    if (c && (!best || c->time < best->time)) best = c;
  }
  return best ? best->busbw.si() : 0.0;
}

struct Row {
  std::string dataset;
  int nodes = 0;
  double bytes = 0;
  std::string ran;         // the algorithm the run used
  double measured = 0;     // busbw, B/s
  double model = 0;        // the model's busbw for that algorithm
  double model_ring = 0;
  double measured_ring = 0;   // 0: the dataset has no ring run at this point
  double nic = 0;          // the node's NIC line rate, B/s
};

void Print(const std::vector<Row>& rows) {
  std::printf("| dataset | nodes | size | ran | measured busbw (GB/s) | model (GB/s) | measured / model |"
              " measured / NICs | ring measured / model | (NVLS-)tree / ring, measured | (NVLS-)tree / ring, model |\n"
              "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %.0f GiB | %s | %.1f | %.1f | %.2f | %.2f |", r.dataset.c_str(), r.nodes,
                r.bytes / 1073741824.0, r.ran.c_str(), r.measured / 1e9, r.model / 1e9, r.measured / r.model,
                r.measured / r.nic);
    if (r.measured_ring > 0)
      std::printf(" %.2f | %.2f | %.2f |\n", r.measured_ring / r.model_ring, r.measured / r.measured_ring,
                  r.model / r.model_ring);
    else
      std::printf(" - | - | %.2f |\n", r.model / r.model_ring);
  }
}

// H100 IB nccl-tests logs, out-of-place busbw at 1 GiB and at the largest size.
// Algorithm per tests/data/nccl_multinode/SOURCES.md: qoofyk's runs NVLS-tree
// (maintainer's comment); gj-aion's and xxrjun's default runs do not state it:
// the model's own choice is priced.
void AddH100Ib(std::vector<Row>& rows) {
  struct Log {
    const char* file;
    const char* cluster;
    const char* ran;   // "" = not stated
    const char* ring_file;
  };
  const Log logs[] = {
      // Defaults, version and algorithm not in the log; 1.17x the NICs is
      // NVLS-tree's 2-node regime (Tree at 2 nodes: 0.84x on the B200 sweep).
      {"nccltests309-gjaion_h100_2n_all_reduce.log", "nccltests309-gjaion.yaml", "",
       "nccltests309-gjaion-ring-tuned_h100_2n_all_reduce.log"},
      {"nccltests309-qoofyk-xe9680_h100_2n_all_reduce.log", "nccltests309-xe9680.yaml", "nvlstree", nullptr},
      // VMware VMs with a custom topology file (flagged virtualized in SOURCES.md);
      // priced on the bare-metal XE9680 file: same GPUs and 8 x 400G IB.
      {"nccltests309-qoofyk-vm_h100_4n_all_reduce.log", "nccltests309-xe9680.yaml", "nvlstree", nullptr},
      {"xxrjun-cluster01_h100_10n_all_reduce.log", "xxrjun-cluster01.yaml", "", nullptr},
  };
  const CollectiveModelParams p = CollectiveModelParams::InfiniBand();
  for (const Log& log : logs) {
    const auto set = ImportNcclTestsFile(kData + "/nccl_multinode/" + log.file);
    std::vector<CollectiveMeasurement> ring;
    if (log.ring_file) ring = ImportNcclTestsFile(kData + "/nccl_multinode/" + log.ring_file).rows;
    double largest = 0;
    for (const auto& m : set.rows)
      if (m.run == 0) largest = std::max(largest, m.size.si());
    for (const auto& m : set.rows) {
      if (m.run != 0 || (m.size.si() != 1073741824.0 && m.size.si() != largest)) continue;
      const CollectiveCase c = MakeCase(kData + "/clusters/" + log.cluster, m, kNcclCurrentVersion);
      Row r;
      r.dataset = std::string(log.file).substr(0, std::string(log.file).find("_all_reduce"));
      r.nodes = m.nodes;
      r.bytes = m.size.si();
      r.measured = m.busbw.si();
      r.nic = c.path.inter_bandwidth.si();
      std::string ran = log.ran;
      if (ran.empty()) ran = ToString(PredictCase(c, p).algo) + std::string(" (model's choice)");
      const CollectiveAlgo algo = ran.rfind("nvlstree", 0) == 0 ? CollectiveAlgo::kNvlsTree
                                  : ran.rfind("tree", 0) == 0  ? CollectiveAlgo::kTree
                                                               : CollectiveAlgo::kRing;
      r.ran = ran;
      r.model = ForcedBusBw(c.path, c.features, p, r.bytes, algo);
      r.model_ring = ForcedBusBw(c.path, c.features, p, r.bytes, CollectiveAlgo::kRing);
      for (const auto& q : ring)
        if (q.run == 0 && q.size.si() == r.bytes) r.measured_ring = q.busbw.si();
      REQUIRE(r.model > 0);
      rows.push_back(r);
    }
  }
}

// B200 IB sweep (use3a-ss, NCCL 2.29.7, 16 GB): Tree and NVLSTree rows with
// the ring row at the same node count; group as collective_data_test.cc builds it.
void AddB200Ib(std::vector<Row>& rows) {
  NcclFeatures f;
  f.compute_capability = 100;
  f.nvls = f.nvls_tree = f.collnet = true;
  const CollectiveModelParams p;
  const auto csv = testing::ReadCsv(kData + "/nccl_b200_multinode_peak_busbw_together.csv");
  for (const auto& r : csv) {
    const std::string algo = r.at("nccl_algo_config");
    const int nodes = std::stoi(r.at("num_nodes"));
    if (r.at("collective") != "all_reduce" || nodes < 2 || (algo != "Tree" && algo != "NVLSTree")) continue;
    GroupPath g = testing::DgxGroup(nodes, 900, 400);
    g.sharp_capable = true;
    g.nvls_capable = true;
    Row row;
    row.dataset = "b200-ib use3a-ss";
    row.nodes = nodes;
    row.bytes = std::stod(r.at("message_size_bytes"));
    row.ran = algo == "Tree" ? "tree" : "nvlstree";
    row.measured = std::stod(r.at("peak_busbw_GBps")) * 1e9;
    row.nic = g.inter_bandwidth.si();
    row.model = ForcedBusBw(g, f, p, row.bytes, algo == "Tree" ? CollectiveAlgo::kTree : CollectiveAlgo::kNvlsTree);
    row.model_ring = ForcedBusBw(g, f, p, row.bytes, CollectiveAlgo::kRing);
    for (const auto& q : csv)
      if (q.at("collective") == "all_reduce" && q.at("nccl_algo_config") == "Ring" &&
          std::stoi(q.at("num_nodes")) == nodes)
        row.measured_ring = std::stod(q.at("peak_busbw_GBps")) * 1e9;
    rows.push_back(row);
  }
}

// AWS p5 EFA: median world AllReduce of the healthy start-up runs, 1 GiB
// (NCCL's choice in the model: NVLS-tree; the runs' algorithm was not logged).
void AddEfa(std::vector<Row>& rows) {
  const CollectiveModelParams p = CollectiveModelParams::AwsEfa();
  for (const auto& med : testing::HealthyWorldMedians(CollectiveOp::kAllReduce)) {
    if (med.nodes < 2) continue;
    const testing::StartupGroup g = testing::AwsP5Group(med.nodes);
    CollectiveCost chosen;
    Row row;
    row.dataset = "aws-p5 efa start-up (healthy median)";
    row.nodes = med.nodes;
    row.bytes = testing::NanotronStartupMessage().si();
    row.model = testing::PredictedStartupBusBw(g, CollectiveOp::kAllReduce, p, &chosen) * 1e9;
    row.ran = ToString(chosen.algo) + std::string(" (model's choice)");
    row.measured = med.busbw_GBps * 1e9;
    row.nic = g.path.inter_bandwidth.si();
    row.model_ring = ForcedBusBw(g.path, g.features, p, row.bytes, CollectiveAlgo::kRing);
    rows.push_back(row);
  }
}

TEST_CASE("tree and NVLS-tree AllReduce across nodes against three fabrics", "[collective][accuracy]") {
  std::vector<Row> rows;
  AddH100Ib(rows);
  AddB200Ib(rows);
  AddEfa(rows);
  if (std::getenv("PARASIM_PRINT_COLLECTIVE_TABLE")) Print(rows);
  REQUIRE(rows.size() == 8 + 12 + 6);
  for (const Row& r : rows) {
    INFO(r.dataset << " nodes " << r.nodes << " " << r.ran);
    // The double binary tree moves 2S per node and direction beyond 2 nodes
    // (interior in one tree: 3 · S/2, leaf in the other: S/2), as a ring
    // does: bus bandwidth cannot exceed the NICs' line rate. At 2 nodes each
    // node's NICs carry S (bound: twice the NICs).
    CHECK(r.model <= (r.nodes <= 2 ? 2.0 : 1.0) * r.nic * (1 + 1e-9));
    // Recorded bands (docs/accuracy.md): InfiniBand measures 0.80-1.15 of the
    // model; EFA's healthy runs 0.92-1.05 of it, in sample: the EFA tree rate
    // (tree_net_efficiency) is fitted to these rows (collective_fit_test.cc).
    const bool efa = r.dataset.rfind("aws-p5", 0) == 0;
    CHECK(r.measured / r.model >= (efa ? 0.92 : 0.80));
    CHECK(r.measured / r.model <= (efa ? 1.05 : 1.15));
  }
}

}  // namespace
}  // namespace parasim::calibrate
