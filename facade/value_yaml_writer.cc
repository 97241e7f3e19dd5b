// Block-style YAML of a Value tree: mappings "key: value", sequences "- item",
// a member's comment after it at column 40. String values are always
// double-quoted (as JSON escapes them): a name such as "1e3", "no" or a
// version "2.21" stays a string whatever a YAML reader would make of it bare.
#include <algorithm>
#include <cctype>

#include "core/number_format.h"
#include "facade/value_writers.h"

namespace parasim {
namespace {

// Where a member's comment starts (the column software-stack files have used).
constexpr size_t kCommentColumn = 40;

// A plain scalar YAML would read back as this same string (not a number,
// bool, null, or something with YAML syntax in it).
bool PlainIsSafe(const std::string& s) {
  if (s.empty() || s == "null" || s == "~" || s == "true" || s == "false" || s == "yes" || s == "no" ||
      s == "on" || s == "off" || s == "Null" || s == "True" || s == "False" || s == "NULL")
    return false;
  if (std::isspace(static_cast<unsigned char>(s.front())) || std::isspace(static_cast<unsigned char>(s.back())))
    return false;
  if (std::string("-?:,[]{}#&*!|>'\"%@`.+0123456789").find(s.front()) != std::string::npos) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == '#' || c == ':') return false;
  return true;
}

std::string Key(const std::string& key) { return PlainIsSafe(key) ? key : WriteJson(Value(key)); }

// Ends the line `line` (from the line's start in `out`), with the comment.
void EndLine(const std::string* comment, size_t line_start, std::string* out) {
  if (comment != nullptr) {
    const size_t used = out->size() - line_start;
    out->append(used + 1 > kCommentColumn ? 1 : kCommentColumn - used, ' ');
    *out += "# ";
    *out += *comment;
  }
  *out += '\n';
}

std::string Scalar(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return v.as_bool() ? "true" : "false";
    case Value::Kind::kInt: return std::to_string(v.as_int());
    case Value::Kind::kNumber: return FormatShortest(v.as_number());
    case Value::Kind::kString: return WriteJson(v);
    case Value::Kind::kArray: return "[]";
    case Value::Kind::kObject: return "{}";
  }
  return "null";
}

bool IsBlock(const Value& v) {
  return (v.kind() == Value::Kind::kArray && !v.items().empty()) ||
         (v.kind() == Value::Kind::kObject && !v.members().empty());
}

void Append(const Value& v, int indent, std::string* out);

// The entries of a block value; the first line's indent is already written
// when `first_inline` (a sequence item "- ").
void AppendBlock(const Value& v, int indent, bool first_inline, std::string* out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  bool first = true;
  auto lead = [&] {
    if (!(first && first_inline)) *out += pad;
    first = false;
  };
  if (v.kind() == Value::Kind::kObject) {
    for (const auto& [key, member] : v.members()) {
      const size_t line_start = out->rfind('\n') == std::string::npos ? 0 : out->rfind('\n') + 1;
      lead();
      *out += Key(key);
      *out += ':';
      if (IsBlock(member)) {
        EndLine(v.CommentOf(key), line_start, out);
        Append(member, indent + 2, out);
      } else {
        *out += ' ';
        *out += Scalar(member);
        EndLine(v.CommentOf(key), line_start, out);
      }
    }
    return;
  }
  for (const Value& item : v.items()) {
    lead();
    *out += "- ";
    if (IsBlock(item)) {
      AppendBlock(item, indent + 2, /*first_inline=*/true, out);
    } else {
      *out += Scalar(item);
      *out += '\n';
    }
  }
}

void Append(const Value& v, int indent, std::string* out) {
  if (IsBlock(v)) {
    AppendBlock(v, indent, /*first_inline=*/false, out);
  } else {
    *out += std::string(static_cast<size_t>(indent), ' ');
    *out += Scalar(v);
    *out += '\n';
  }
}

}  // namespace

std::string WriteYaml(const Value& value, const std::string& comment) {
  std::string out;
  size_t begin = 0;
  while (begin < comment.size()) {
    const size_t end = std::min(comment.find('\n', begin), comment.size());
    out += "# " + comment.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  Append(value, 0, &out);
  return out;
}

}  // namespace parasim
