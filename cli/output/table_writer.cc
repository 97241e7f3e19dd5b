// Aligned text tables, CSV and key/value listings from Value cells.
#include "cli/output/writers.h"

#include <algorithm>

#include "core/number_format.h"

namespace parasim::cli {
namespace {

std::string Pad(const std::string& text, int width, bool left) {
  if (static_cast<int>(text.size()) >= width) return text;
  const std::string fill(static_cast<size_t>(width) - text.size(), ' ');
  return left ? text + fill : fill + text;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::string FormatCell(const Value& cell, int digits) {
  switch (cell.kind()) {
    case Value::Kind::kNull: return "";
    case Value::Kind::kBool: return cell.as_bool() ? "true" : "false";
    case Value::Kind::kInt: return std::to_string(cell.as_int());
    case Value::Kind::kNumber: return FormatFixed(cell.as_number(), digits);
    case Value::Kind::kString: return cell.as_string();
    default: return WriteJson(cell);
  }
}

std::string WriteCsv(const Table& table) {
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c) out += ',';
    out += CsvField(table.columns[c].header);
  }
  out += "\n";
  for (const std::vector<Value>& row : table.rows) {
    for (size_t c = 0; c < row.size() && c < table.columns.size(); ++c) {
      if (c) out += ',';
      out += CsvField(FormatCell(row[c], table.columns[c].digits));
    }
    out += "\n";
  }
  return out;
}

std::string WriteTable(const Table& table) {
  std::string out;
  for (size_t c = 0; c < table.columns.size() && table.header; ++c) {
    const Column& col = table.columns[c];
    if (c == 0 && table.comment_header) {
      out += '#';
      out += Pad(col.header, col.width - 1, col.left);
    } else {
      out += Pad(col.header, col.width, col.left);
    }
  }
  if (table.header) out += "\n";
  for (const std::vector<Value>& row : table.rows) {
    for (size_t c = 0; c < row.size() && c < table.columns.size(); ++c) {
      const Column& col = table.columns[c];
      out += Pad(FormatCell(row[c], col.digits), col.width, col.left);
    }
    out += "\n";
  }
  return out;
}

std::string WriteRecords(const Value& records, int significant, int indent) {
  if (records.items().empty()) return "";
  std::vector<std::string> keys;
  for (const auto& [key, value] : records.items().front().members()) keys.push_back(key);
  std::vector<std::vector<std::string>> cells(records.items().size() + 1);
  std::vector<size_t> width(keys.size(), 0);
  std::vector<bool> left(keys.size(), false);
  cells[0] = keys;
  for (size_t r = 0; r < records.items().size(); ++r) {
    for (size_t c = 0; c < keys.size(); ++c) {
      const Value* cell = records.items()[r].Find(keys[c]);
      if (cell == nullptr || cell->is_null()) {
        cells[r + 1].emplace_back();
        continue;
      }
      if (cell->kind() == Value::Kind::kString) left[c] = true;
      cells[r + 1].push_back(cell->kind() == Value::Kind::kNumber ? FormatSignificant(cell->as_number(), significant)
                                                                  : FormatCell(*cell, 0));
    }
  }
  for (const auto& row : cells)
    for (size_t c = 0; c < keys.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : cells) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < keys.size(); ++c) {
      if (c) line += "  ";
      const bool last = c + 1 == keys.size();
      line += left[c] && last ? row[c] : Pad(row[c], static_cast<int>(width[c]), left[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string WriteFields(const Value& object, int key_width) {
  std::string out;
  for (const auto& [key, value] : object.members()) {
    out += Pad(key, key_width, /*left=*/true);
    out += value.kind() == Value::Kind::kString ? value.as_string() : WriteJson(value);
    out += '\n';
  }
  return out;
}

}  // namespace parasim::cli
