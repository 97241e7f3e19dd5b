#include "core/error.h"

namespace parasim {

std::string Issue::ToString() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += StrCat(":", line, ":", column);
    out += ": ";
  }
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

namespace {
std::string Join(const std::vector<Issue>& issues) {
  std::string out;
  for (size_t i = 0; i < issues.size(); ++i) {
    if (i) out += "\n";
    out += issues[i].ToString();
  }
  return out;
}
}  // namespace

Error::Error(std::vector<Issue> issues) : std::runtime_error(Join(issues)), issues_(std::move(issues)) {}

Error::Error(std::string file, std::string key, std::string message)
    : Error(std::vector<Issue>{Issue{std::move(file), std::move(key), 0, 0, std::move(message)}}) {}

}  // namespace parasim
