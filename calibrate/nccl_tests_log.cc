#include "core/input_file.h"
#include "calibrate/nccl_tests_log.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

// nccl-tests' binaries, longest first so "reduce_scatter" wins over "reduce".
constexpr const char* kCollectives[] = {"reduce_scatter", "all_reduce", "all_gather", "alltoall",
                                        "broadcast",      "sendrecv",   "hypercube",  "gather",
                                        "scatter",        "reduce"};

std::vector<std::string> Tokens(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream is{std::string(line)};
  std::string t;
  while (is >> t) out.push_back(t);
  return out;
}

std::optional<double> ParseDouble(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;   // 20 digits: not a size
  return static_cast<int64_t>(v);
}

bool StartsWithDigit(const std::string& s) { return !s.empty() && s[0] >= '0' && s[0] <= '9'; }

// "<name>_perf" anywhere in the text -> name, else "".
std::string CollectiveIn(std::string_view text) {
  for (const char* c : kCollectives) {
    const std::string needle = std::string(c) + "_perf";
    const size_t pos = text.find(needle);
    if (pos == std::string_view::npos) continue;
    // Reject a longer name ending in this one (e.g. "all_reduce_perf" for "reduce").
    if (pos > 0) {
      const char before = text[pos - 1];
      if (before == '_' || (before >= 'a' && before <= 'z')) continue;
    }
    return c;
  }
  return "";
}

std::string CollectiveFromFileName(const std::string& file) {
  const size_t slash = file.find_last_of('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  for (const char* c : kCollectives)
    if (base.find(c) != std::string::npos) return c;
  return "unknown";
}

struct Layout {
  bool has_root = true;
  size_t columns() const { return has_root ? 13 : 12; }
};

// #wrong: a count, "N/A" (validation off), or an old-style error magnitude.
std::optional<int64_t> ParseWrong(const std::string& s) {
  if (s == "N/A") return -1;
  if (auto i = ParseInt(s)) return *i;
  if (auto d = ParseDouble(s)) return *d == 0.0 ? 0 : 1;
  return std::nullopt;
}

// "NAME=VALUE" for NAME anywhere in the line (mpirun -x NAME=V, export NAME=V).
std::string EnvValue(const std::string& line, const std::string& name) {
  const size_t pos = line.find(name + "=");
  if (pos == std::string::npos) return "";
  if (pos > 0 && (std::isalnum(static_cast<unsigned char>(line[pos - 1])) || line[pos - 1] == '_')) return "";
  size_t b = pos + name.size() + 1, e = b;
  while (e < line.size() && !std::isspace(static_cast<unsigned char>(line[e])) && line[e] != '"' && line[e] != '\'')
    ++e;
  return line.substr(b, e - b);
}

// What a "#  Rank r Group g Pid p on HOST device d [bus] NAME" line says.
struct DeviceLine {
  int rank = -1, device = -1;
  std::string host;
};
std::optional<DeviceLine> ParseDeviceLine(const std::vector<std::string>& htok) {
  DeviceLine d;
  for (size_t i = 0; i + 1 < htok.size(); ++i) {
    if (htok[i] == "Rank") d.rank = static_cast<int>(ParseInt(htok[i + 1]).value_or(-1));
    if (htok[i] == "on") d.host = htok[i + 1];
    if (htok[i] == "device") d.device = static_cast<int>(ParseInt(htok[i + 1]).value_or(-1));
  }
  if (d.rank < 0 || d.host.empty()) return std::nullopt;
  return d;
}

}  // namespace

int NcclTestsTable::NcclVersionCode() const {
  const std::string& v = nccl_version;
  if (v.rfind("nccl-library=", 0) == 0) return static_cast<int>(std::atoi(v.c_str() + 13));
  int a = 0, b = 0, c = 0;
  if (std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c) >= 2 && a == 2) return a * 10000 + b * 100 + c;
  return 0;
}

double NcclTestsTable::BusFactor() const {
  // The row with the largest algbw: the printed 2-decimal GB/s lose least there.
  const NcclTestsRow* best = nullptr;
  for (const auto& r : rows)
    if (r.out_of_place.algbw.si() > 0 && r.out_of_place.busbw.si() > 0 &&
        (!best || r.out_of_place.algbw > best->out_of_place.algbw))
      best = &r;
  return best ? best->out_of_place.busbw.si() / best->out_of_place.algbw.si() : 0.0;
}

std::vector<NcclTestsTable> ParseNcclTestsLog(std::string_view text, const std::string& file) {
  std::vector<NcclTestsTable> tables;
  IssueList issues;
  std::string pending_collective;  // from "# Collective test starting: x_perf" or a command line
  std::string version;
  int ranks = 0;
  std::vector<std::string> hosts;
  int max_rank = -1, max_device = -1;
  std::string algo, proto;
  std::optional<Layout> layout;  // set by a table header; rows follow
  bool in_table = false;
  bool table_since_ranks = false;
  // A new table takes what the log has said so far (ranks, version, hosts, NCCL_ALGO/PROTO).
  auto open_table = [&](const Layout& l) {
    layout = l;
    in_table = true;
    NcclTestsTable t;
    t.file = file;
    t.collective = pending_collective.empty() ? CollectiveFromFileName(file) : pending_collective;
    t.ranks = ranks;
    t.nccl_version = version;
    t.hosts = hosts;
    t.max_rank = max_rank;
    t.max_device = max_device;
    t.nccl_algo = algo;
    t.nccl_proto = proto;
    tables.push_back(std::move(t));
    table_since_ranks = true;
  };

  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> tok = Tokens(line);
    if (tok.empty()) continue;
    if (!StartsWithDigit(tok[0]))
      if (const std::string c = CollectiveIn(line); !c.empty()) pending_collective = c;
    if (const std::string a = EnvValue(line, "NCCL_ALGO"); !a.empty()) algo = a;
    if (const std::string p = EnvValue(line, "NCCL_PROTO"); !p.empty()) proto = p;
    if (tok.size() >= 3 && tok[0] == "NCCL" && tok[1] == "version") version = tok[2].substr(0, tok[2].find('+'));
    if (tok[0][0] == '#') {
      const std::string rest = line.substr(line.find('#') + 1);
      const std::vector<std::string> htok = Tokens(rest);
      if (line.find("nccl-library=") != std::string::npos) {
        version = line.substr(line.find("nccl-library="));
        version = Tokens(version)[0];
      }
      if (htok.size() >= 2 && htok[0] == "Rank" && line.find("device") != std::string::npos) {
        if (table_since_ranks) {  // a new run's banner: ranks restart
          in_table = false;
          table_since_ranks = false;
          ranks = 0;
          hosts.clear();
          max_rank = max_device = -1;
        }
        ++ranks;
        if (const auto d = ParseDeviceLine(htok)) {
          if (std::find(hosts.begin(), hosts.end(), d->host) == hosts.end()) hosts.push_back(d->host);
          max_rank = std::max(max_rank, d->rank);
          max_device = std::max(max_device, d->device);
        }
      }
      // The header line of the table: "#  size  count  type  redop  [root]  time ...".
      if (htok.size() >= 6 && htok[0] == "size" && htok[1] == "count") {
        Layout l;
        l.has_root = false;
        for (const auto& h : htok)
          if (h == "root") l.has_root = true;
        open_table(l);
      }
      if (line.find("Out of bounds values") != std::string::npos ||
          line.find("Avg bus bandwidth") != std::string::npos) {
        in_table = false;
      }
      continue;
    }
    if (!StartsWithDigit(tok[0])) continue;  // NCCL INFO, warnings, host-prefixed lines
    if (!in_table) {
      // A row before any header: accept the standard layouts by column count.
      if (tok.size() != 13 && tok.size() != 12) continue;
      Layout l;
      l.has_root = tok.size() == 13;
      open_table(l);
    }
    const Layout l = *layout;
    auto bad = [&](const std::string& why) {
      issues.Add(Issue{file, StrCat("line ", line_no), line_no, 0, why});
    };
    if (tok.size() != l.columns()) {
      bad(StrCat("expected ", l.columns(), " columns (size count type redop", l.has_root ? " root" : "",
                 " time algbw busbw #wrong time algbw busbw #wrong), got ", tok.size(), ": '", line, "'"));
      continue;
    }
    NcclTestsRow row;
    row.line = line_no;
    const auto size = ParseInt(tok[0]);
    const auto count = ParseInt(tok[1]);
    if (!size || *size < 0 || !count || *count < 0) {
      bad(StrCat("size and count must be non-negative integers: '", line, "'"));
      continue;
    }
    row.size = Bytes(static_cast<double>(*size));
    row.count = *count;
    row.type = tok[2];
    row.redop = tok[3];
    size_t c = 4;
    if (l.has_root) {
      const auto root = ParseInt(tok[c++]);
      if (!root) {
        bad(StrCat("root '", tok[4], "' is not an integer"));
        continue;
      }
      row.root = *root;
    }
    bool ok = true;
    for (NcclTestsResult* r : {&row.out_of_place, &row.in_place}) {
      const auto t_us = ParseDouble(tok[c]), alg = ParseDouble(tok[c + 1]), bus = ParseDouble(tok[c + 2]);
      const auto wrong = ParseWrong(tok[c + 3]);
      if (!t_us || !alg || !bus || !wrong || *t_us < 0 || *alg < 0 || *bus < 0) {
        bad(StrCat("columns ", c + 1, "-", c + 4, " ('", tok[c], " ", tok[c + 1], " ", tok[c + 2], " ",
                   tok[c + 3], "') are not time(us) algbw(GB/s) busbw(GB/s) #wrong"));
        ok = false;
        break;
      }
      r->time = Microseconds(*t_us);
      r->algbw = GBps(*alg);
      r->busbw = GBps(*bus);
      r->wrong = *wrong;
      c += 4;
    }
    if (ok) tables.back().rows.push_back(std::move(row));
  }
  issues.ThrowIfAny();
  // Tables whose header was printed but which hold no rows say nothing.
  std::vector<NcclTestsTable> out;
  for (auto& t : tables)
    if (!t.rows.empty()) out.push_back(std::move(t));
  if (out.empty()) throw InvalidInput(file, "", "no nccl-tests results table found (expected rows of 'size count type redop root time algbw busbw #wrong ...')");
  return out;
}

std::vector<NcclTestsTable> LoadNcclTestsLog(const std::string& path) {
  return ParseNcclTestsLog(ReadInputFile(path), path);
}

}  // namespace parasim::calibrate
