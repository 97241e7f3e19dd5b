// A small JSON reader for the standalone CUDA programs, which build with
// plain nvcc on GPU machines that may lack nlohmann/json: objects, arrays,
// strings (escapes \" \\ \/ \n \t \uXXXX kept as '?'), numbers, true, false,
// null. Enough for parasim's schedule export; errors name the byte offset.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace minijson {

struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Value> arr;
  std::map<std::string, Value> obj;

  bool Has(const std::string& k) const { return kind == kObject && obj.count(k) > 0; }
  const Value& operator[](const std::string& k) const {
    auto it = obj.find(k);
    if (kind != kObject || it == obj.end()) throw std::runtime_error("missing key '" + k + "'");
    return it->second;
  }
  double Num(const std::string& k, double fallback) const { return Has(k) ? (*this)[k].num : fallback; }
  std::string Str(const std::string& k, const std::string& fallback) const {
    return Has(k) ? (*this)[k].str : fallback;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}
  Value Parse() {
    Value v = ParseValue();
    Skip();
    if (i_ != s_.size()) Fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(i_));
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }
  std::string ParseString() {
    Expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) Fail("bad escape");
        const char e = s_[i_++];
        if (e == 'n') out += '\n';
        else if (e == 't') out += '\t';
        else if (e == 'u') { out += '?'; i_ += 4; }
        else out += e;
      } else {
        out += c;
      }
    }
    Expect('"');
    return out;
  }
  Value ParseValue() {
    Skip();
    if (i_ >= s_.size()) Fail("unexpected end");
    Value v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Value::kObject;
      if (Eat('}')) return v;
      do {
        std::string k = ParseString();
        Expect(':');
        v.obj[k] = ParseValue();
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Value::kArray;
      if (Eat(']')) return v;
      do v.arr.push_back(ParseValue());
      while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.kind = Value::kString;
      v.str = ParseString();
    } else if (s_.compare(i_, 4, "true") == 0) {
      v.kind = Value::kBool, v.b = true, i_ += 4;
    } else if (s_.compare(i_, 5, "false") == 0) {
      v.kind = Value::kBool, i_ += 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      char* end = nullptr;
      v.kind = Value::kNumber;
      v.num = std::strtod(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) Fail("expected a value");
      i_ = static_cast<size_t>(end - s_.c_str());
    }
    return v;
  }
  const std::string& s_;
  size_t i_ = 0;
};

inline Value Parse(const std::string& text) { return Parser(text).Parse(); }

}  // namespace minijson
