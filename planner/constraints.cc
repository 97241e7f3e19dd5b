#include "planner/constraints.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.h"
#include "core/parallel_config.h"

namespace parasim::planner {
namespace {

struct KeyName {
  const char* name;
  ConstraintKey key;
};
// Spellings accepted for each key; the first of a key is its canonical name.
constexpr KeyName kKeyNames[] = {
    {"dp", ConstraintKey::kDp},           {"tp", ConstraintKey::kTp},
    {"pp", ConstraintKey::kPp},           {"cp", ConstraintKey::kCp},
    {"ep", ConstraintKey::kEp},           {"mbs", ConstraintKey::kMbs},
    {"micro_batch", ConstraintKey::kMbs}, {"vpp", ConstraintKey::kVpp},
    {"prefetch", ConstraintKey::kPrefetch}, {"hsdp_group", ConstraintKey::kHsdpGroup},
    {"sharding", ConstraintKey::kSharding}, {"recompute", ConstraintKey::kRecompute},
    {"sp", ConstraintKey::kSp},           {"sequence_parallel", ConstraintKey::kSp},
    {"schedule", ConstraintKey::kSchedule}, {"order", ConstraintKey::kOrder},
    {"cp_comm", ConstraintKey::kCpComm},
};

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string ValidKeys() {
  std::string out;
  for (const auto& k : kKeyNames) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

std::vector<std::string> ShardingWords() {
  std::vector<std::string> w;
  for (ShardingMode m : {ShardingMode::kDdp, ShardingMode::kZero1, ShardingMode::kZero2Replicated,
                         ShardingMode::kZero2, ShardingMode::kZero3}) {
    w.push_back(parasim::ToString(m));
  }
  w.push_back("hsdp");   // any group size; "hsdp:G" fixes G
  return w;
}
std::vector<std::string> RecomputeWords() {
  return {parasim::ToString(RecomputeMode::kNone), parasim::ToString(RecomputeMode::kSelective),
          parasim::ToString(RecomputeMode::kFull)};
}
std::vector<std::string> ScheduleWords() {
  return {parasim::ToString(PipelineSchedule::kGpipe), parasim::ToString(PipelineSchedule::k1F1B),
          parasim::ToString(PipelineSchedule::kInterleaved), parasim::ToString(PipelineSchedule::kZeroBubble)};
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// A placement order: a permutation of the five dimension names joined by '-'.
bool IsValidOrder(const std::string& order) {
  std::vector<std::string> parts = Split(order, '-');
  std::vector<std::string> dims = {"cp", "dp", "ep", "pp", "tp"};
  std::sort(parts.begin(), parts.end());
  return parts == dims;
}

// Canonical spelling of one word operand, or throws naming the key.
std::string CanonicalWord(ConstraintKey key, const std::string& raw, const std::string& where) {
  const std::string v = Lower(raw);
  const char* name = ToString(key);
  auto check_in = [&](const std::vector<std::string>& valid) {
    if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
      throw InvalidInput("", StrCat(where, ": ", name), StrCat("unknown value '", raw, "' (valid: ", Join(valid, ", "), ")"));
    }
    return v;
  };
  switch (key) {
    case ConstraintKey::kSharding:
      if (v.rfind("hsdp:", 0) == 0) {
        const std::string g = v.substr(5);
        if (g.empty() || !std::all_of(g.begin(), g.end(), IsDigit) || std::stoll(g) < 1) {
          throw InvalidInput("", StrCat(where, ": ", name), StrCat("bad hsdp group in '", raw, "' (expected hsdp:G with G >= 1)"));
        }
        return StrCat("hsdp:", std::stoll(g));
      }
      return check_in(ShardingWords());
    case ConstraintKey::kRecompute:
      return check_in(RecomputeWords());
    case ConstraintKey::kSchedule:
      return check_in(ScheduleWords());
    case ConstraintKey::kSp:
      if (v == "on" || v == "true" || v == "1") return "on";
      if (v == "off" || v == "false" || v == "0") return "off";
      throw InvalidInput("", StrCat(where, ": ", name), StrCat("unknown value '", raw, "' (valid: on, off)"));
    case ConstraintKey::kCpComm:
      return check_in({"p2p", "a2a", "allgather", "a2a+p2p"});
    case ConstraintKey::kOrder:
      if (v == "any") return v;
      if (!IsValidOrder(v)) {
        throw InvalidInput("", StrCat(where, ": ", name),
                    StrCat("bad placement order '", raw, "' (a permutation of tp-cp-ep-dp-pp, or 'any')"));
      }
      return v;
    default:
      throw InvalidInput("", StrCat(where, ": ", name), "not a word key");
  }
}

long long ParseNumber(ConstraintKey key, const std::string& raw, const std::string& where) {
  const std::string v = Trim(raw);
  if (v.empty() || !std::all_of(v.begin(), v.end(), IsDigit) || v.size() > 12) {
    throw InvalidInput("", StrCat(where, ": ", ToString(key)), StrCat("expected a positive integer, got '", raw, "'"));
  }
  return std::stoll(v);
}

bool WordMatches(const std::string& term_word, const std::string& value) {
  if (term_word == value) return true;
  return term_word == "hsdp" && value.rfind("hsdp:", 0) == 0;   // "hsdp" matches any group size
}

}  // namespace

const char* ToString(ConstraintKey key) {
  for (const auto& k : kKeyNames) {
    if (k.key == key) return k.name;
  }
  return "?";
}

bool IsNumericKey(ConstraintKey key) {
  switch (key) {
    case ConstraintKey::kSharding:
    case ConstraintKey::kRecompute:
    case ConstraintKey::kSp:
    case ConstraintKey::kSchedule:
    case ConstraintKey::kOrder:
    case ConstraintKey::kCpComm:
      return false;
    default:
      return true;
  }
}

ConstraintSet ConstraintSet::Parse(const std::string& text, const std::string& where) {
  ConstraintSet set;
  if (Trim(text).empty()) return set;
  for (const std::string& raw_term : Split(text, ',')) {
    const std::string term = Trim(raw_term);
    if (term.empty()) throw InvalidInput("", where, StrCat("empty term in '", text, "'"));
    // Find the operator: " in " first, then two-character, then one-character ones.
    std::string key_text, op_text, value_text;
    const std::string lower = Lower(term);
    if (const size_t in_pos = lower.find(" in "); in_pos != std::string::npos) {
      key_text = term.substr(0, in_pos);
      op_text = "in";
      value_text = term.substr(in_pos + 4);
    } else {
      size_t pos = std::string::npos;
      for (const char* op : {"<=", ">=", "!=", "<", ">", "="}) {
        pos = term.find(op);
        if (pos != std::string::npos) {
          op_text = op;
          break;
        }
      }
      if (pos == std::string::npos) {
        throw InvalidInput("", where, StrCat("term '", term, "' has no operator (use =, !=, <=, >=, <, > or 'in')"));
      }
      key_text = term.substr(0, pos);
      value_text = term.substr(pos + op_text.size());
    }
    key_text = Lower(Trim(key_text));
    value_text = Trim(value_text);

    const KeyName* found = nullptr;
    for (const auto& k : kKeyNames) {
      if (key_text == k.name) found = &k;
    }
    if (found == nullptr) {
      throw InvalidInput("", StrCat(where, ": ", key_text.empty() ? term : key_text),
                  StrCat("unknown key '", key_text, "' (valid keys: ", ValidKeys(), ")"));
    }
    Constraint c;
    c.key = found->key;
    c.text = term;
    if (op_text == "=") c.op = ConstraintOp::kEq;
    else if (op_text == "!=") c.op = ConstraintOp::kNe;
    else if (op_text == "<=") c.op = ConstraintOp::kLe;
    else if (op_text == ">=") c.op = ConstraintOp::kGe;
    else if (op_text == "<") c.op = ConstraintOp::kLt;
    else if (op_text == ">") c.op = ConstraintOp::kGt;
    else c.op = ConstraintOp::kIn;

    std::vector<std::string> operands = Split(value_text, '|');
    if (operands.size() > 1 && c.op == ConstraintOp::kEq) c.op = ConstraintOp::kIn;  // "tp=1|2|4"
    if (operands.size() > 1 && c.op != ConstraintOp::kIn) {
      throw InvalidInput("", StrCat(where, ": ", found->name), StrCat("a set of values needs '=' or 'in', got '", term, "'"));
    }
    const bool numeric = IsNumericKey(c.key);
    const bool ordering_op = c.op == ConstraintOp::kLe || c.op == ConstraintOp::kGe ||
                             c.op == ConstraintOp::kLt || c.op == ConstraintOp::kGt;
    if (!numeric && ordering_op) {
      throw InvalidInput("", StrCat(where, ": ", found->name), StrCat("'", op_text, "' needs a numeric key; use = or 'in'"));
    }
    for (const std::string& operand : operands) {
      const std::string v = Trim(operand);
      if (v.empty()) throw InvalidInput("", StrCat(where, ": ", found->name), StrCat("missing value in '", term, "'"));
      if (numeric) {
        c.numbers.push_back(ParseNumber(c.key, v, where));
      } else {
        c.words.push_back(CanonicalWord(c.key, v, where));
      }
    }
    set.terms_.push_back(std::move(c));
  }
  return set;
}

void ConstraintSet::Merge(const ConstraintSet& other) {
  terms_.insert(terms_.end(), other.terms_.begin(), other.terms_.end());
}

bool ConstraintSet::Allows(ConstraintKey key, long long value) const {
  for (const Constraint& c : terms_) {
    if (c.key != key) continue;
    bool ok = false;
    switch (c.op) {
      case ConstraintOp::kEq:
      case ConstraintOp::kIn:
        ok = std::find(c.numbers.begin(), c.numbers.end(), value) != c.numbers.end();
        break;
      case ConstraintOp::kNe: ok = value != c.numbers[0]; break;
      case ConstraintOp::kLe: ok = value <= c.numbers[0]; break;
      case ConstraintOp::kGe: ok = value >= c.numbers[0]; break;
      case ConstraintOp::kLt: ok = value < c.numbers[0]; break;
      case ConstraintOp::kGt: ok = value > c.numbers[0]; break;
    }
    if (!ok) return false;
  }
  return true;
}

bool ConstraintSet::Allows(ConstraintKey key, const std::string& value) const {
  for (const Constraint& c : terms_) {
    if (c.key != key) continue;
    bool any = false;
    for (const std::string& w : c.words) any = any || w == "any" || WordMatches(w, value);
    const bool ok = c.op == ConstraintOp::kNe ? !any : any;
    if (!ok) return false;
  }
  return true;
}

bool ConstraintSet::Mentions(ConstraintKey key) const {
  return std::any_of(terms_.begin(), terms_.end(), [key](const Constraint& c) { return c.key == key; });
}

std::vector<std::string> ConstraintSet::ListedWords(ConstraintKey key) const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Constraint& c : terms_) {
    if (c.key != key || (c.op != ConstraintOp::kEq && c.op != ConstraintOp::kIn)) continue;
    for (const std::string& w : c.words) {
      if (seen.insert(w).second) out.push_back(w);
    }
  }
  return out;
}

std::string ConstraintSet::ToString() const {
  std::string out;
  for (const Constraint& c : terms_) {
    if (!out.empty()) out += ",";
    out += c.text;
  }
  return out;
}

}  // namespace parasim::planner
