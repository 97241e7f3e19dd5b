// JSON as nlohmann::json::dump(2) writes it, so reports keep their bytes.
#include <cstdio>

#include "core/number_format.h"
#include "facade/value_writers.h"

namespace parasim {
namespace {

void AppendString(const std::string& s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void Append(const Value& v, int indent, std::string* out) {
  const std::string inner(static_cast<size_t>(indent + 2), ' ');
  switch (v.kind()) {
    case Value::Kind::kNull: *out += "null"; return;
    case Value::Kind::kBool: *out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: *out += std::to_string(v.as_int()); return;
    case Value::Kind::kNumber: *out += FormatShortest(v.as_number()); return;
    case Value::Kind::kString: AppendString(v.as_string(), out); return;
    case Value::Kind::kArray:
      if (v.items().empty()) {
        *out += "[]";
        return;
      }
      *out += "[\n";
      for (size_t i = 0; i < v.items().size(); ++i) {
        *out += inner;
        Append(v.items()[i], indent + 2, out);
        *out += i + 1 < v.items().size() ? ",\n" : "\n";
      }
      *out += std::string(static_cast<size_t>(indent), ' ') + "]";
      return;
    case Value::Kind::kObject:
      if (v.members().empty()) {
        *out += "{}";
        return;
      }
      *out += "{\n";
      for (size_t i = 0; i < v.members().size(); ++i) {
        *out += inner;
        AppendString(v.members()[i].first, out);
        *out += ": ";
        Append(v.members()[i].second, indent + 2, out);
        *out += i + 1 < v.members().size() ? ",\n" : "\n";
      }
      *out += std::string(static_cast<size_t>(indent), ' ') + "}";
      return;
  }
}

}  // namespace

std::string WriteJson(const Value& value) {
  std::string out;
  Append(value, 0, &out);
  return out;
}

}  // namespace parasim
