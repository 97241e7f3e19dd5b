#include "facade/value.h"

#include "core/error.h"

namespace parasim {

Value Value::Record(std::initializer_list<std::pair<std::string, Value>> fields) {
  Value out = Object();
  for (const auto& [key, value] : fields) out.Set(key, value);
  return out;
}

Value& Value::Set(const std::string& key, Value value) {
  if (kind_ == Kind::kNull) kind_ = Kind::kObject;
  if (kind_ != Kind::kObject) throw InternalError(StrCat("Value::Set('", key, "') on a value that is not an object"));
  for (auto& [k, v] : members_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  members_.emplace_back(key, std::move(value));
  return *this;
}

Value& Value::Push(Value value) {
  if (kind_ == Kind::kNull) kind_ = Kind::kArray;
  if (kind_ != Kind::kArray) throw InternalError("Value::Push on a value that is not an array");
  items_.push_back(std::move(value));
  return *this;
}

const Value* Value::Find(const std::string& key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

Value& Value::Comment(const std::string& key, std::string text) {
  if (kind_ != Kind::kObject) throw InternalError(StrCat("Value::Comment('", key, "') on a value that is not an object"));
  for (auto& [k, c] : comments_) {
    if (k == key) {
      c = std::move(text);
      return *this;
    }
  }
  comments_.emplace_back(key, std::move(text));
  return *this;
}

const std::string* Value::CommentOf(const std::string& key) const {
  for (const auto& [k, c] : comments_)
    if (k == key) return &c;
  return nullptr;
}

}  // namespace parasim
