// cli/output: the writers render one Value tree; JSON keeps nlohmann's bytes,
// YAML reads back (through yaml-cpp) to the same values, CSV and tables align.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "cli/output/writers.h"
#include "facade/json_value.h"

namespace {

using parasim::ArrayOf;
using parasim::Value;
using namespace parasim::cli;

// The same tree as a Value and as nlohmann's ordered_json.
Value Sample() {
  Value v = Value::Object();
  v.Set("name", "llama \"3\"\n\tx\x01");
  v.Set("count", int64_t{6738415616});
  v.Set("whole", 268435456.0);
  v.Set("tiny", 2.7859999999999998e-05);
  v.Set("third", 1.0 / 3.0);
  v.Set("huge", 1.5e300);
  v.Set("negative", -0.0);
  v.Set("nan", std::numeric_limits<double>::quiet_NaN());
  v.Set("flag", true);
  v.Set("none", Value());
  v.Set("empty_list", Value::Array());
  v.Set("empty_map", Value::Object());
  Value rows = Value::Array();
  rows.Push(Value::Object().Set("a", 1).Set("b", "x: y"));
  rows.Push(Value::Array().Push(2.5).Push("true"));
  v.Set("rows", rows);
  v.Set("count", int64_t{6738415616});   // replaced in place, keeps its position
  return v;
}

nlohmann::ordered_json SampleJson() {
  nlohmann::ordered_json j;
  j["name"] = "llama \"3\"\n\tx\x01";
  j["count"] = int64_t{6738415616};
  j["whole"] = 268435456.0;
  j["tiny"] = 2.7859999999999998e-05;
  j["third"] = 1.0 / 3.0;
  j["huge"] = 1.5e300;
  j["negative"] = -0.0;
  j["nan"] = std::numeric_limits<double>::quiet_NaN();
  j["flag"] = true;
  j["none"] = nullptr;
  j["empty_list"] = nlohmann::ordered_json::array();
  j["empty_map"] = nlohmann::ordered_json::object();
  j["rows"] = nlohmann::ordered_json::array();
  j["rows"].push_back({{"a", 1}, {"b", "x: y"}});
  j["rows"].push_back(nlohmann::ordered_json::array({2.5, "true"}));
  return j;
}

}  // namespace

TEST_CASE("writers: JSON is byte-identical to nlohmann's dump(2)", "[cli][writers]") {
  CHECK(WriteJson(Sample()) == SampleJson().dump(2));
  CHECK(WriteJson(Value::Array()) == "[]");
  CHECK(WriteJson(Value(0.1)) == nlohmann::json(0.1).dump());
}

TEST_CASE("writers: a module's nlohmann JSON as values keeps its bytes", "[cli][writers]") {
  nlohmann::ordered_json j = SampleJson();
  j["unsigned"] = uint64_t{42};
  j["nested"] = SampleJson();
  CHECK(WriteJson(parasim::JsonToValue(j)) == j.dump(2));
  CHECK(WriteJson(parasim::JsonToValue(nlohmann::ordered_json::parse(j.dump(2)))) == j.dump(2));   // parsed back: the same bytes
  CHECK(parasim::JsonToValue(j).Find("unsigned")->kind() == Value::Kind::kInt);
  CHECK(parasim::JsonToValue(j).Find("whole")->kind() == Value::Kind::kNumber);   // 268435456.0 stays a double
}

TEST_CASE("writers: a row described once as a record, rows as an array", "[cli][writers]") {
  const Value record = Value::Record({{"a", 1}, {"b", "x"}, {"c", 2.5}, {"a", 3}});
  // A repeated key replaces the first, in its place.
  CHECK(WriteJson(record) == WriteJson(Value::Object().Set("a", 3).Set("b", "x").Set("c", 2.5)));
  const std::vector<int> rows = {1, 2, 3};
  const Value array = ArrayOf(rows, [](int r) { return Value::Record({{"n", r}, {"square", r * r}}); });
  REQUIRE(array.items().size() == 3);
  CHECK(array.items()[2].Find("square")->as_int() == 9);
  CHECK(WriteJson(ArrayOf(std::vector<int>{}, [](int r) { return Value(r); })) == "[]");
}

TEST_CASE("writers: YAML reads back to the same values", "[cli][writers]") {
  const YAML::Node y = YAML::Load(WriteYaml(Sample()));
  CHECK(y["name"].as<std::string>() == "llama \"3\"\n\tx\x01");
  CHECK(y["count"].as<int64_t>() == 6738415616);
  CHECK(y["whole"].as<double>() == 268435456.0);
  CHECK(y["third"].as<double>() == 1.0 / 3.0);
  CHECK(y["flag"].as<bool>());
  CHECK(y["none"].IsNull());
  CHECK(y["empty_list"].IsSequence());
  CHECK(y["empty_list"].size() == 0);
  CHECK(y["rows"][0]["b"].as<std::string>() == "x: y");
  CHECK(y["rows"][1][0].as<double>() == 2.5);
  CHECK(y["rows"][1][1].as<std::string>() == "true");   // a string, quoted, not a bool
  CHECK(y["rows"][1][1].Tag() != "?");
}

TEST_CASE("writers: CSV and table cells use the column's digits", "[cli][writers]") {
  Table t;
  t.columns = {{"name", 6, /*left=*/true, 0}, {"value", 9, false, 2}, {"n", 4, false, 0}};
  t.rows = {{Value("a,b"), Value(3.14159), Value(12)}, {Value("c"), Value(2.005), Value(7)}};
  CHECK(WriteCsv(t) == "name,value,n\n\"a,b\",3.14,12\nc,2.00,7\n");   // printf rounding: 2.005 is 2.00499...
  CHECK(WriteTable(t) == "name      value   n\na,b        3.14  12\nc          2.00   7\n");
  t.comment_header = true;
  CHECK(WriteTable(t).rfind("#name     value   n\n", 0) == 0);
  CHECK(WriteFields(Value::Object().Set("k", "v").Set("n", 1.5), 4) == "k   v\nn   1.5\n");
}

TEST_CASE("writers: YAML comments and quoting", "[cli][writers]") {
  Value v = Value::Object();
  v.Set("name", "1e3").Set("n", 4.0).Set("count", 8).Set("a_rather_long_key_name_for_the_column", 0.5);
  v.Comment("n", "bytes per element").Comment("a_rather_long_key_name_for_the_column", "past column 40");
  v.Set("nested", Value::Object().Set("x", 1));
  v.Comment("nested", "a mapping");
  v.Set("1.5", "a key YAML would read as a number");
  const std::string text = WriteYaml(v, "first line\nsecond line");
  CHECK(text ==
        "# first line\n"
        "# second line\n"
        "name: \"1e3\"\n"
        "n: 4.0                                  # bytes per element\n"
        "count: 8\n"
        "a_rather_long_key_name_for_the_column: 0.5 # past column 40\n"
        "nested:                                 # a mapping\n"
        "  x: 1\n"
        "\"1.5\": \"a key YAML would read as a number\"\n");
  const YAML::Node y = YAML::Load(text);
  CHECK(y["name"].as<std::string>() == "1e3");
  CHECK(y["n"].as<double>() == 4.0);
  CHECK(y["nested"]["x"].as<int>() == 1);
  CHECK(y["1.5"].as<std::string>() == "a key YAML would read as a number");
  CHECK(WriteJson(v).find("#") == std::string::npos);   // JSON has no comments
}

TEST_CASE("writers: records as an aligned table", "[cli][writers]") {
  Value rows = Value::Array();
  rows.Push(Value::Record({{"name", "a"}, {"x", 1.0 / 3.0}, {"n", 12}, {"note", Value()}}));
  rows.Push(Value::Record({{"name", "longer"}, {"x", 250.0}, {"n", 7}, {"note", "text"}}));
  CHECK(WriteRecords(rows, 3, 2) ==
        "  name        x   n  note\n"
        "  a       0.333  12\n"
        "  longer    250   7  text\n");
  CHECK(WriteRecords(Value::Array(), 3, 2).empty());
}
