// User constraints on the search space: `--constrain "tp=8,pp<=4,sharding=zero2"`.
// Each term fixes or bounds one key of the parallel config. Numeric keys take
// =, !=, <=, >=, <, > and sets ("tp in 1|2|4" or "tp=1|2|4"); word keys
// (sharding, recompute, sp, schedule, order) take = / != and sets.
#pragma once

#include <string>
#include <vector>

namespace parasim::planner {

// The keys a constraint may name (the parallel-config keys a plan chooses).
enum class ConstraintKey {
  kDp, kTp, kPp, kCp, kEp, kMbs, kVpp, kPrefetch, kHsdpGroup,   // numeric
  kSharding, kRecompute, kSp, kSchedule, kOrder, kCpComm,        // words
};
enum class ConstraintOp { kEq, kNe, kLe, kGe, kLt, kGt, kIn };

struct Constraint {
  ConstraintKey key;
  ConstraintOp op;
  std::vector<long long> numbers;     // numeric keys: the operand(s)
  std::vector<std::string> words;     // word keys: the operand(s), canonical spelling
  std::string text;                   // the term as the user wrote it
};

class ConstraintSet {
 public:
  ConstraintSet() = default;
  // Parses a comma-separated list of terms. Throws parasim::Error naming the
  // offending key (or term) and listing the valid keys/values.
  static ConstraintSet Parse(const std::string& text, const std::string& where = "--constrain");

  // Adds the terms of `other` (both must hold).
  void Merge(const ConstraintSet& other);
  void Add(Constraint c) { terms_.push_back(std::move(c)); }

  // True when every term on `key` accepts the value.
  bool Allows(ConstraintKey key, long long value) const;
  bool Allows(ConstraintKey key, const std::string& value) const;
  // True when some term names `key`.
  bool Mentions(ConstraintKey key) const;
  // The word values listed by `=`/`in` terms on a word key (for keys whose
  // domain is open, like `order`); empty when no such term.
  std::vector<std::string> ListedWords(ConstraintKey key) const;

  const std::vector<Constraint>& terms() const { return terms_; }
  bool empty() const { return terms_.empty(); }
  std::string ToString() const;   // the terms joined by ","

 private:
  std::vector<Constraint> terms_;
};

const char* ToString(ConstraintKey key);
bool IsNumericKey(ConstraintKey key);

}  // namespace parasim::planner
