// `parasim collective`: predicted time, algbw and busbw of one collective (or
// a size sweep), nccl-tests style, with the algorithm and protocol NCCL's
// choice lands on — to hold against a user's nccl-tests output.
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "core/loaders.h"
#include "core/unit_parse.h"
#include "calibrate/collective_fit.h"
#include "calibrate/collective_profile.h"
#include "cost_model/collective_cost.h"
#include "topology/group_path.h"

namespace parasim::cli {
namespace {

// nccl-tests sizes: a plain count of bytes, or K/M/G/T binary suffixes
// ("256M" = 256 MiB, as -b/-e take them); "256 MB" style goes to ParseBytes.
Bytes ParseSize(const std::string& text, const std::string& where) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t.push_back(c);
  if (!t.empty()) {
    char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
    double mult = last == 'K' ? 1024.0 : last == 'M' ? 1048576.0 : last == 'G' ? 1073741824.0
                  : last == 'T' ? 1099511627776.0 : 1.0;
    std::string digits = mult > 1.0 ? t.substr(0, t.size() - 1) : t;
    if (!digits.empty() && digits.find_first_not_of("0123456789.") == std::string::npos) {
      double v = std::stod(digits) * mult;
      if (v < 0 || !std::isfinite(v)) throw InvalidInput("", where, StrCat("'", text, "' is not a size"));
      return Bytes(std::floor(v));
    }
  }
  return ParseBytes(text, where);
}

struct Options {
  std::string cluster = "dgx-h100";
  int nodes = 0;
  int ranks = 0;
  std::string op = "allreduce";
  std::string size = "256M";
  std::string sweep;           // "MIN:MAX[:FACTOR]"
  bool per_node = false;
  std::string nccl = "current";
  std::string fabric;   // "" = the cluster's inter_node.transport
  std::string algo;            // force, as NCCL_ALGO
  std::string proto;           // force, as NCCL_PROTO
  int gpus_per_thread = 1;     // nccl-tests -g
  int gpus_per_node = 0;       // ranks per node (0: the cluster's)
  std::string hw_profile;      // fitted collective profile
};

std::vector<double> Sizes(const Options& o) {
  if (o.sweep.empty()) return {ParseSize(o.size, "--size").si()};
  std::vector<std::string> parts;
  std::stringstream ss(o.sweep);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.size() < 2 || parts.size() > 3) throw InvalidInput("", "--sweep", "expected MIN:MAX or MIN:MAX:FACTOR");
  double lo = ParseSize(parts[0], "--sweep").si();
  double hi = ParseSize(parts[1], "--sweep").si();
  double factor = parts.size() == 3 ? std::stod(parts[2]) : 2.0;
  if (lo <= 0 || hi < lo) throw InvalidInput("", "--sweep", StrCat("'", o.sweep, "': need 0 < MIN <= MAX"));
  if (!(factor > 1.0)) throw InvalidInput("", "--sweep", "the factor must be > 1");
  std::vector<double> v;
  for (double s = lo; s <= hi * (1 + 1e-12) && v.size() < 4096; s *= factor) v.push_back(std::floor(s));
  return v;
}

CollectiveAlgo ParseAlgo(const std::string& s) {
  for (int a = 0; a < kNumCollectiveAlgos; ++a)
    if (s == ToString(static_cast<CollectiveAlgo>(a))) return static_cast<CollectiveAlgo>(a);
  throw InvalidInput("", "--algo", StrCat("unknown algorithm '", s, "' (ring, tree, nvls, nvlstree, collnet, pat, direct)"));
}

Protocol ParseProto(const std::string& s) {
  std::string u;
  for (char c : s) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (u == "LL") return Protocol::kLL;
  if (u == "LL128") return Protocol::kLL128;
  if (u == "SIMPLE") return Protocol::kSimple;
  throw InvalidInput("", "--proto", StrCat("unknown protocol '", s, "' (LL, LL128, Simple)"));
}

std::string Fixed(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// The group: --ranks with --gpus-per-node (default the cluster's; 1 with
// --per-node), on a cluster of the nodes it needs (--nodes must agree).
GroupPath PlaceGroup(const Options& o, const std::string& cluster_name, ClusterSpec* cluster) {
  const ClusterSpec base = LoadCluster(cluster_name);
  if (o.nodes < 0) throw InvalidInput("", "--nodes", StrCat(o.nodes, " is not a node count"));
  if (o.per_node && o.gpus_per_node > 1)
    throw InvalidInput("", "--gpus-per-node", StrCat("--per-node means 1 GPU per node, not ", o.gpus_per_node));
  const int gpn = o.per_node ? 1 : (o.gpus_per_node > 0 ? o.gpus_per_node : base.gpus_per_node);
  if (o.gpus_per_node < 0 || gpn > base.gpus_per_node || base.gpus_per_node % gpn != 0)
    throw InvalidInput("", "--gpus-per-node",
                       StrCat(gpn, " does not divide the ", base.gpus_per_node, " GPUs per node of ", base.name));
  int ranks = o.ranks;
  if (ranks == 0) ranks = o.nodes > 0 ? o.nodes * gpn : (gpn == 1 ? base.nodes : gpn);
  if (ranks < 1) throw InvalidInput("", "--ranks", StrCat(ranks, " is not a rank count"));
  if (ranks > gpn && ranks % gpn != 0)
    throw InvalidInput("", "--ranks", StrCat(ranks, " ranks are not whole nodes of ", gpn, " (--gpus-per-node)"));
  const int nodes = std::max(1, ranks / gpn);
  if (o.nodes > 0 && o.nodes != nodes)
    throw InvalidInput("", "--nodes", StrCat(ranks, " ranks at ", gpn, " per node are ", nodes, " nodes, not ", o.nodes));
  *cluster = LoadCluster(cluster_name, nodes);
  return calibrate::MeasuredGroupPath(*cluster, ranks, gpn);
}

void Run(const Options& o, const OutputOptions& out) {
  const CollectiveOp op = ParseCollectiveOp(o.op, "--op");
  if (o.gpus_per_thread < 1) throw InvalidInput("", "--gpus-per-thread", "must be >= 1");
  ClusterSpec cluster;
  const GroupPath path = PlaceGroup(o, o.cluster, &cluster);

  const NcclFeatures f = NcclFeaturesFor(cluster, ParseNcclVersion(o.nccl, "--nccl"));
  // A fitted profile (--hw-profile, else the cluster's) replaces the fabric
  // presets; otherwise the cluster's own transport unless --fabric overrides it.
  const std::string profile = !o.hw_profile.empty() ? o.hw_profile : cluster.hw_profile;
  if (!profile.empty() && !o.fabric.empty())
    throw InvalidInput("", "--fabric", "give --fabric or a fitted profile (--hw-profile / hw_profile:), not both");
  const std::string fabric = !profile.empty() ? "profile"
                             : !o.fabric.empty() ? o.fabric
                             : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa" : "ib";
  CollectiveModelParams params;
  if (!profile.empty()) params = calibrate::ReadCollectiveProfile(profile).params;
  else if (fabric == "efa") params = CollectiveModelParams::AwsEfa();
  else if (fabric != "ib") throw InvalidInput("", "--fabric", StrCat("unknown fabric '", fabric, "' (ib, efa)"));
  params.gpus_per_launch_thread = o.gpus_per_thread;

  nlohmann::ordered_json j;
  j["op"] = ToString(op);
  j["cluster"] = cluster.name;
  j["ranks"] = path.ranks;
  j["nodes"] = path.nodes;
  j["ranks_per_node"] = path.ranks_per_node;
  j["single_rail"] = path.single_rail;
  j["ring_bandwidth_Bps"] = path.ring_bandwidth.si();
  j["nccl"] = o.nccl;
  j["fabric"] = fabric;
  if (!profile.empty()) j["hw_profile"] = profile;
  j["rows"] = nlohmann::ordered_json::array();
  for (double s : Sizes(o)) {
    CollectiveCost c;
    if (!o.algo.empty() || !o.proto.empty()) {
      CollectiveAlgo a = o.algo.empty() ? EstimateCollective(op, Bytes(s), path, f, params).algo : ParseAlgo(o.algo);
      std::optional<CollectiveCost> best;
      for (int p = 0; p < kNumProtocols; ++p) {
        Protocol pr = static_cast<Protocol>(p);
        if (!o.proto.empty() && pr != ParseProto(o.proto)) continue;
        auto r = EstimateCollectiveWith(op, Bytes(s), path, f, params, a, pr);
        if (r && (!best || r->time < best->time)) best = r;
      }
      if (!best)
        throw InvalidInput("", "--algo", StrCat(ToString(a), (o.proto.empty() ? "" : "/" + o.proto),
                                         " is not available for ", ToString(op), " on this group"));
      c = *best;
    } else {
      c = EstimateCollective(op, Bytes(s), path, f, params);
    }
    // JSON in SI units (s, B/s); the table and CSV print µs and GB/s as nccl-tests does.
    j["rows"].push_back({{"size_bytes", s},
                         {"time_s", c.time.si()},
                         {"latency_s", c.latency.si()},
                         {"algbw_bytes_per_s", c.algbw.si()},
                         {"busbw_bytes_per_s", c.busbw.si()},
                         {"algo", ToString(c.algo)},
                         {"protocol", ToString(c.protocol)}});
  }

  std::ostringstream os;
  switch (out.Parsed()) {
    case Format::kJson: os << j.dump(2) << "\n"; break;
    case Format::kCsv:
      os << "size_bytes,time_us,algbw_GBps,busbw_GBps,algo,protocol\n";
      for (const auto& r : j["rows"])
        os << Fixed(r["size_bytes"].get<double>(), 0) << "," << Fixed(r["time_s"].get<double>() * 1e6, 3) << ","
           << Fixed(r["algbw_bytes_per_s"].get<double>() / 1e9, 3) << "," << Fixed(r["busbw_bytes_per_s"].get<double>() / 1e9, 3) << ","
           << r["algo"].get<std::string>() << "," << r["protocol"].get<std::string>() << "\n";
      break;
    case Format::kTable:
      os << "# parasim collective: " << ToString(op) << ", " << path.ranks << " ranks on " << path.nodes << " node"
         << (path.nodes == 1 ? "" : "s") << " x " << path.ranks_per_node << " of " << cluster.name
         << (path.single_rail ? " (one rank per node, same rail)" : "") << "; NCCL " << o.nccl << ", fabric "
         << fabric << "\n";
      os << "# bottleneck ring bandwidth " << Fixed(path.ring_bandwidth.si() / 1e9, 1) << " GB/s per direction\n";
      os << "#" << std::setw(15) << "size(B)" << std::setw(14) << "time(us)" << std::setw(13) << "algbw(GB/s)"
         << std::setw(13) << "busbw(GB/s)" << std::setw(10) << "algo" << std::setw(8) << "proto" << "\n";
      for (const auto& r : j["rows"])
        os << std::setw(16) << Fixed(r["size_bytes"].get<double>(), 0) << std::setw(14)
           << Fixed(r["time_s"].get<double>() * 1e6, 2) << std::setw(13) << Fixed(r["algbw_bytes_per_s"].get<double>() / 1e9, 2)
           << std::setw(13) << Fixed(r["busbw_bytes_per_s"].get<double>() / 1e9, 2) << std::setw(10)
           << r["algo"].get<std::string>() << std::setw(8) << r["protocol"].get<std::string>() << "\n";
      break;
  }
  WriteOutput(out, os.str());
}

const CommandRegistration kCollective{
    "collective", "Predict one NCCL collective (time, algbw, busbw, algorithm, protocol), nccl-tests style",
    [](CLI::App& cmd) {
      auto o = std::make_shared<Options>();
      auto out = std::make_shared<OutputOptions>();
      cmd.add_option("--cluster", o->cluster, "Cluster preset or YAML file")->capture_default_str();
      cmd.add_option("--nodes", o->nodes, "Nodes (default: as many as the ranks need)");
      cmd.add_option("--op", o->op, "allreduce | allgather | reducescatter | broadcast | reduce | alltoall | sendrecv")
          ->capture_default_str();
      cmd.add_option("--ranks", o->ranks, "Ranks in the group (default: every GPU of --nodes)");
      cmd.add_option("--size", o->size, "Size as nccl-tests counts it: 256M = 256 MiB, or '256 MB'")
          ->capture_default_str();
      cmd.add_option("--sweep", o->sweep, "MIN:MAX[:FACTOR] size sweep, e.g. 8:8G (factor 2)");
      cmd.add_flag("--per-node", o->per_node, "One rank per node, all on the same rail (= --gpus-per-node 1)");
      cmd.add_option("--gpus-per-node", o->gpus_per_node,
                     "Ranks per node (default: the cluster's GPUs per node; 1 for one-GPU-per-node runs)");
      cmd.add_option("--hw-profile", o->hw_profile,
                     "Fitted collective profile (parasim calibrate fit); default: the cluster file's hw_profile");
      cmd.add_option("--nccl", o->nccl, "NCCL release: its algorithm set where the hardware has it (current = "
                                        "2.30.7; paper = 2.20.5, PyTorch 2.3: no PAT; or 2.MINOR[.PATCH])")
          ->capture_default_str();
      cmd.add_option("--fabric", o->fabric, "ib | efa: the fitted fabric parameters (default: the cluster's transport)");
      cmd.add_option("--algo", o->algo, "Force an algorithm, as NCCL_ALGO (ring, tree, nvls, nvlstree, collnet, pat)");
      cmd.add_option("--proto", o->proto, "Force a protocol, as NCCL_PROTO (LL, LL128, Simple)");
      cmd.add_option("--gpus-per-thread", o->gpus_per_thread, "GPUs one thread launches (nccl-tests -g)")
          ->capture_default_str();
      AddOutputOptions(cmd, *out, /*csv_allowed=*/true);
      return std::function<void()>([o, out] { Run(*o, *out); });
    }};

}  // namespace
}  // namespace parasim::cli
