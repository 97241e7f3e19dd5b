// A report as values, not text: null, bool, integer, number, string, array
// and object (members in insertion order). The facade builds one per report;
// the CLI's writers (cli/output/) render it as JSON, YAML, CSV or a table.
// Not installed: the CLI's own exchange type.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace parasim {

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kNumber, kString, kArray, kObject };

  Value() = default;   // null
  Value(bool b) : kind_(Kind::kBool), bool_(b) {}
  Value(int i) : kind_(Kind::kInt), int_(i) {}
  Value(long i) : kind_(Kind::kInt), int_(i) {}
  Value(long long i) : kind_(Kind::kInt), int_(i) {}
  Value(unsigned i) : kind_(Kind::kInt), int_(i) {}
  Value(unsigned long i) : kind_(Kind::kInt), int_(static_cast<int64_t>(i)) {}
  Value(unsigned long long i) : kind_(Kind::kInt), int_(static_cast<int64_t>(i)) {}
  Value(double d) : kind_(Kind::kNumber), number_(d) {}
  Value(const char* s) : kind_(Kind::kString), string_(s) {}
  Value(std::string s) : kind_(Kind::kString), string_(std::move(s)) {}
  static Value Array() { return Value(Kind::kArray); }
  static Value Object() { return Value(Kind::kObject); }
  // An object of `fields` in their order: a report's row, described once
  // by its field names and values.
  static Value Record(std::initializer_list<std::pair<std::string, Value>> fields);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool as_bool() const { return bool_; }
  int64_t as_int() const { return int_; }
  double as_number() const { return kind_ == Kind::kInt ? static_cast<double>(int_) : number_; }
  const std::string& as_string() const { return string_; }

  // Object: sets `key` (replacing it in place when present, else appending).
  Value& Set(const std::string& key, Value value);
  // Array: appends.
  Value& Push(Value value);
  // Object: the member `key`, or nullptr.
  const Value* Find(const std::string& key) const;
  // Object: a comment on the member `key` (what the number means), which the
  // YAML writer puts after it; JSON has no comments and leaves it out.
  Value& Comment(const std::string& key, std::string text);
  // The member's comment, or nullptr.
  const std::string* CommentOf(const std::string& key) const;

  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }

 private:
  explicit Value(Kind kind) : kind_(kind) {}
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double number_ = 0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
  std::vector<std::pair<std::string, std::string>> comments_;   // member key -> comment
};

// An array of `to_value(row)` for each of `rows`: a report's table as values.
template <class Rows, class ToValue>
Value ArrayOf(const Rows& rows, ToValue&& to_value) {
  Value out = Value::Array();
  for (const auto& row : rows) out.Push(to_value(row));
  return out;
}

}  // namespace parasim
