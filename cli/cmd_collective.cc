// `parasim collective`: predicted time, algbw and busbw of one collective (or
// a size sweep), nccl-tests style, with the algorithm and protocol NCCL's
// choice lands on — to hold against a user's nccl-tests output. The library's
// parasim::Collective times it; this file parses flags and prints.
#include <cmath>
#include <sstream>

#include "cli/command.h"
#include "cli/flag_names.h"
#include "cli/output/writers.h"
#include "facade/cli_support.h"
#include "parasim/parasim.h"

namespace parasim::cli {
namespace {

struct Options {
  std::string cluster = "dgx-h100";
  std::string size = "256M";
  std::string sweep;           // "MIN:MAX[:FACTOR]"
  CollectiveQuery query;
};

const FlagNames kFlags = {
    {"CollectiveQuery::op", "--op"},          {"CollectiveQuery::ranks", "--ranks"},
    {"CollectiveQuery::nodes", "--nodes"},    {"CollectiveQuery::gpus_per_node", "--gpus-per-node"},
    {"CollectiveQuery::nccl", "--nccl"},      {"CollectiveQuery::fabric", "--fabric"},
    {"CollectiveQuery::algo", "--algo"},      {"CollectiveQuery::proto", "--proto"},
    {"CollectiveQuery::gpus_per_thread", "--gpus-per-thread"},
};

std::vector<double> Sizes(const Options& o) {
  if (o.sweep.empty()) return {ParseSizeBytes(o.size, "--size")};
  std::vector<std::string> parts;
  std::stringstream ss(o.sweep);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.size() < 2 || parts.size() > 3) throw InvalidInput("", "--sweep", "expected MIN:MAX or MIN:MAX:FACTOR");
  const double lo = ParseSizeBytes(parts[0], "--sweep");
  const double hi = ParseSizeBytes(parts[1], "--sweep");
  const double factor = parts.size() == 3 ? std::stod(parts[2]) : 2.0;
  if (lo <= 0 || hi < lo) throw InvalidInput("", "--sweep", "'" + o.sweep + "': need 0 < MIN <= MAX");
  if (!(factor > 1.0)) throw InvalidInput("", "--sweep", "the factor must be > 1");
  std::vector<double> v;
  for (double s = lo; s <= hi * (1 + 1e-12) && v.size() < 4096; s *= factor) v.push_back(std::floor(s));
  return v;
}

// JSON in SI units (s, B/s).
Value ToValue(const CollectiveResult& r) {
  Value j = Value::Object();
  j.Set("op", r.op).Set("cluster", r.cluster).Set("ranks", r.ranks).Set("nodes", r.nodes);
  j.Set("ranks_per_node", r.ranks_per_node).Set("single_rail", r.single_rail);
  j.Set("ring_bandwidth_Bps", r.ring_bandwidth_Bps).Set("nccl", r.nccl).Set("fabric", r.fabric);
  if (!r.hw_profile.empty()) j.Set("hw_profile", r.hw_profile);
  j.Set("rows", ArrayOf(r.rows, [](const CollectiveRow& c) {
    return Value::Record({{"size_bytes", c.size_bytes},
                          {"time_s", c.time_s},
                          {"latency_s", c.latency_s},
                          {"algbw_bytes_per_s", c.algbw_Bps},
                          {"busbw_bytes_per_s", c.busbw_Bps},
                          {"algo", c.algo},
                          {"protocol", c.protocol}});
  }));
  return j;
}

// The table and CSV print µs and GB/s as nccl-tests does; `digits` of them.
Table RowsTable(const CollectiveResult& r, bool csv) {
  const int d = csv ? 3 : 2;
  Table t;
  t.comment_header = !csv;
  t.columns = csv ? std::vector<Column>{{"size_bytes", 0, false, 0}, {"time_us", 0, false, d},
                                        {"algbw_GBps", 0, false, d}, {"busbw_GBps", 0, false, d},
                                        {"algo"}, {"protocol"}}
                  : std::vector<Column>{{"size(B)", 16, false, 0},    {"time(us)", 14, false, d},
                                        {"algbw(GB/s)", 13, false, d}, {"busbw(GB/s)", 13, false, d},
                                        {"algo", 10},                 {"proto", 8}};
  for (const CollectiveRow& c : r.rows)
    t.rows.push_back({c.size_bytes, c.time_s * 1e6, c.algbw_Bps / 1e9, c.busbw_Bps / 1e9, c.algo, c.protocol});
  return t;
}

std::string TableText(const CollectiveResult& r) {
  std::ostringstream os;
  os << "# parasim collective: " << r.op << ", " << r.ranks << " ranks on " << r.nodes << " node"
     << (r.nodes == 1 ? "" : "s") << " x " << r.ranks_per_node << " of " << r.cluster
     << (r.single_rail ? " (one rank per node, same rail)" : "") << "; NCCL " << r.nccl << ", fabric " << r.fabric
     << "\n";
  os << "# bottleneck ring bandwidth " << FormatCell(r.ring_bandwidth_Bps / 1e9, 1) << " GB/s per direction\n";
  return os.str() + WriteTable(RowsTable(r, /*csv=*/false));
}

void Run(Options o, const OutputOptions& out) {
  o.query.sizes_bytes = Sizes(o);
  const CollectiveResult r = WithFlagNames(kFlags, [&] { return Collective(Cluster::Load(o.cluster), o.query); });
  switch (out.Parsed()) {
    case Format::kJson: WriteOutput(out, WriteJson(ToValue(r)) + "\n"); break;
    case Format::kCsv: WriteOutput(out, WriteCsv(RowsTable(r, /*csv=*/true))); break;
    case Format::kTable: WriteOutput(out, TableText(r)); break;
  }
}

const CommandRegistration kCollective{
    "collective", "Predict one NCCL collective (time, algbw, busbw, algorithm, protocol), nccl-tests style",
    [](CLI::App& cmd) {
      auto o = std::make_shared<Options>();
      auto out = std::make_shared<OutputOptions>();
      CollectiveQuery& q = o->query;
      cmd.add_option("--cluster", o->cluster, "Cluster preset or YAML file")->capture_default_str();
      cmd.add_option("--nodes", q.nodes, "Nodes (default: as many as the ranks need)");
      cmd.add_option("--op", q.op, "allreduce | allgather | reducescatter | broadcast | reduce | alltoall | sendrecv")
          ->capture_default_str();
      cmd.add_option("--ranks", q.ranks, "Ranks in the group (default: every GPU of --nodes)");
      cmd.add_option("--size", o->size, "Size as nccl-tests counts it: 256M = 256 MiB, or '256 MB'")
          ->capture_default_str();
      cmd.add_option("--sweep", o->sweep, "MIN:MAX[:FACTOR] size sweep, e.g. 8:8G (factor 2)");
      cmd.add_flag("--per-node", q.per_node, "One rank per node, all on the same rail (= --gpus-per-node 1)");
      cmd.add_option("--gpus-per-node", q.gpus_per_node,
                     "Ranks per node (default: the cluster's GPUs per node; 1 for one-GPU-per-node runs)");
      cmd.add_option("--hw-profile", q.hw_profile,
                     "Fitted collective profile (parasim calibrate fit); default: the cluster file's hw_profile");
      cmd.add_option("--nccl", q.nccl, "NCCL release: its algorithm set where the hardware has it (current = "
                                       "2.30.7; paper = 2.20.5, PyTorch 2.3: no PAT; or 2.MINOR[.PATCH])")
          ->capture_default_str();
      cmd.add_option("--fabric", q.fabric, "ib | efa: the fitted fabric parameters (default: the cluster's transport)");
      cmd.add_option("--algo", q.algo, "Force an algorithm, as NCCL_ALGO (ring, tree, nvls, nvlstree, collnet, pat)");
      cmd.add_option("--proto", q.proto, "Force a protocol, as NCCL_PROTO (LL, LL128, Simple)");
      cmd.add_option("--gpus-per-thread", q.gpus_per_thread, "GPUs one thread launches (nccl-tests -g)")
          ->capture_default_str();
      AddOutputOptions(cmd, *out, /*csv_allowed=*/true);
      return std::function<void()>([o, out] { Run(*o, *out); });
    }};

}  // namespace
}  // namespace parasim::cli
