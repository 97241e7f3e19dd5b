// Importer for nccl-tests stdout (all_reduce_perf, all_gather_perf, ...): the
// standard results table
//   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
// (out-of-place, then in-place; times in µs, bandwidths in GB/s = 1e9 B/s),
// older logs without the `root` column, #wrong as a count, "N/A" (-c 0) or an
// error value. Every other line (NCCL INFO, warnings, banners) is skipped; a
// line in a table that starts like a row but does not parse is an error
// naming the file and line. A log may hold several tables (several runs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace parasim::calibrate {

struct NcclTestsResult {
  Seconds time;
  BytesPerSecond algbw;
  BytesPerSecond busbw;
  int64_t wrong = -1;  // -1: not checked (N/A)
};

struct NcclTestsRow {
  Bytes size;
  int64_t count = 0;
  std::string type, redop;
  int64_t root = -1;
  NcclTestsResult out_of_place, in_place;
  int line = 0;  // 1-based line in the log
};

struct NcclTestsTable {
  std::string file;
  std::string collective;  // all_reduce, all_gather, reduce_scatter, alltoall, ... or "unknown"
  int ranks = 0;           // "#  Rank ..." device lines seen before the table (0 = unknown)
  std::string nccl_version;  // as printed ("nccl-library=22602", "2.26.2"), "" if absent
  // Rank-to-node layout from the "#  Rank r ... on HOST device d" lines of the
  // run: the hosts in order of first appearance, the highest rank and device
  // index seen (excerpted logs keep only some device lines).
  std::vector<std::string> hosts;
  int max_rank = -1;
  int max_device = -1;
  // NCCL_ALGO / NCCL_PROTO as the log's command or environment lines set
  // them ("" when not shown: NCCL's own choice).
  std::string nccl_algo, nccl_proto;
  std::vector<NcclTestsRow> rows;

  // busbw / algbw of the table's rows (nccl-tests' bus factor: 2(n-1)/n for
  // AllReduce, (n-1)/n for AllGather/ReduceScatter), from the row with the
  // largest algbw; 0 when no row has algbw.
  double BusFactor() const;
  // NCCL version as major*10000 + minor*100 + patch (0 when not printed).
  int NcclVersionCode() const;
  // True when the device lines list every rank 0..ranks-1 once.
  bool LayoutComplete() const { return ranks > 0 && max_rank + 1 == ranks; }
};

// Parses a whole log; `file` names it in errors. Throws parasim::Error with
// every malformed row (file, "line N", what was expected).
std::vector<NcclTestsTable> ParseNcclTestsLog(std::string_view text, const std::string& file);

// Reads and parses a log file (parasim::Error if it cannot be read).
std::vector<NcclTestsTable> LoadNcclTestsLog(const std::string& path);

}  // namespace parasim::calibrate
