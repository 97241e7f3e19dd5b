// The measurements of calibrate/cuda/nccl_bench.cu (`parasim calibrate
// nccl`), read from its JSON into the same tables as an nccl-tests log
// (nccl_tests_log.h), so that `calibrate import-nccl-tests` fits α-β to
// either. One table per (collective, group) the program measured; the
// group kind ("all", "node", "rail") and the NCCL_ALGO / NCCL_PROTO the run
// forced are kept beside it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibrate/nccl_tests_log.h"

namespace parasim::calibrate {

struct NcclBenchTable {
  NcclTestsTable table;  // collective named as nccl-tests does ("all_reduce", "alltoall", "sendrecv")
  std::string group;     // all, node, rail
  int group_color = 0;   // which node / rail
  std::string algo, proto;  // NCCL_ALGO / NCCL_PROTO seen at communicator init ("" = NCCL's choice)
};

struct NcclBenchRun {
  std::string file, device, nccl_version, bootstrap;
  int ranks = 0, nodes = 0, ranks_per_node = 0;
  std::vector<std::string> hostnames;  // per rank
  std::vector<NcclBenchTable> tables;
};

// Parses the program's JSON; `file` names it in errors. Bad input (not JSON,
// kind not "nccl_bench", a missing or negative field) throws parasim::Error
// naming the file, the key path and the problem.
NcclBenchRun ParseNcclBenchJson(std::string_view text, const std::string& file);
NcclBenchRun LoadNcclBenchJson(const std::string& path);

// True when the file starts (after white space) with '{': nccl_bench JSON
// rather than an nccl-tests log.
bool LooksLikeJson(const std::string& path);

// The tables of a measurement file of either kind: nccl_bench JSON or an
// nccl-tests log.
std::vector<NcclTestsTable> LoadCollectiveMeasurements(const std::string& path);

}  // namespace parasim::calibrate
