#include "core/input_file.h"
#include "calibrate/nccl_tests_log.h"

#include <cerrno>
#include <cmath>
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

}  // namespace

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
  std::optional<Layout> layout;  // set by a table header; rows follow
  bool in_table = false;
  bool table_since_ranks = false;

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
        }
        ++ranks;
      }
      // The header line of the table: "#  size  count  type  redop  [root]  time ...".
      if (htok.size() >= 6 && htok[0] == "size" && htok[1] == "count") {
        Layout l;
        l.has_root = false;
        for (const auto& h : htok)
          if (h == "root") l.has_root = true;
        layout = l;
        in_table = true;
        NcclTestsTable t;
        t.file = file;
        t.collective = pending_collective.empty() ? CollectiveFromFileName(file) : pending_collective;
        t.ranks = ranks;
        t.nccl_version = version;
        tables.push_back(std::move(t));
        table_since_ranks = true;
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
      layout = l;
      in_table = true;
      NcclTestsTable t;
      t.file = file;
      t.collective = pending_collective.empty() ? CollectiveFromFileName(file) : pending_collective;
      t.ranks = ranks;
      t.nccl_version = version;
      tables.push_back(std::move(t));
      table_since_ranks = true;
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
