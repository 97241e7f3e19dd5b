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

InvalidInput::InvalidInput(std::vector<Issue> issues) : Error(Join(issues)), issues_(std::move(issues)) {}

InvalidInput::InvalidInput(std::string file, std::string key, std::string message)
    : InvalidInput(std::vector<Issue>{Issue{std::move(file), std::move(key), 0, 0, std::move(message)}}) {}

namespace {
std::string JoinReasons(const std::string& summary, const std::vector<std::string>& reasons) {
  std::string out = summary;
  for (const std::string& r : reasons) out += "\n  " + r;
  return out;
}
}  // namespace

NoAnswer::NoAnswer(std::string summary, std::vector<std::string> reasons)
    : Error(JoinReasons(summary, reasons)), reasons_(std::move(reasons)) {}

}  // namespace parasim
