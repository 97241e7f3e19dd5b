// The CLI's writers, one home: a report is built once as a Value
// (facade/value.h) and rendered here as JSON, YAML, CSV or an aligned table.
// Every number goes through core/number_format.h: JSON and YAML in the
// shortest round-trip form, CSV and tables at the column's digits.
#pragma once

#include <string>
#include <vector>

#include "facade/value.h"
#include "facade/value_writers.h"

namespace parasim::cli {

// JSON and YAML: the facade's writers (facade/value_writers.h), which also
// give a preset stack its hash.
using parasim::WriteJson;
using parasim::WriteYaml;

struct Column {
  std::string header;
  int width = 0;        // table: the column's width (right-aligned unless `left`)
  bool left = false;
  int digits = 0;       // numbers (not integers) at this many decimals
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
  bool comment_header = false;   // table: the header line starts with '#' (in the first column's width)
  bool header = true;            // table: false = rows only
};

// One cell as the table and CSV print it: strings as they are, integers in
// full, numbers at `digits` decimals, booleans true/false, null empty.
std::string FormatCell(const Value& cell, int digits);

// Header line of the column names, then one line per row; fields with a
// comma, quote or newline are quoted.
std::string WriteCsv(const Table& table);

// The header line, then the rows, each cell padded to its column's width.
std::string WriteTable(const Table& table);

// An array of records (objects of the same keys) as an aligned table: the
// first record's keys as the header, then one line per record; each line
// starts with `indent` spaces, columns two spaces apart, numbers (not
// integers) at `significant` digits and right-aligned, text left-aligned,
// null empty; no trailing blanks. "" for no records.
std::string WriteRecords(const Value& records, int significant, int indent);

// A fit report ({"summary", "parameters", "residuals", "notes"}): the
// summary line, the parameters (two-space indent) and residuals (four) as
// record tables, then "  note: ..." lines.
std::string WriteFitReport(const Value& report);

// An object's members, one per line: the key padded to `key_width`, then the
// value (strings bare, other values as JSON writes them).
std::string WriteFields(const Value& object, int key_width);

}  // namespace parasim::cli
