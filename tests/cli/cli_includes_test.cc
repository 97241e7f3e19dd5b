// cli/ is the library's front door: its files include only the facade
// (include/parasim/, facade/), cli/ itself and the standard and CLI11 headers;
// the writers (cli/output/) also use the one number formatter. Library work
// lives behind the facade, so a cli/ file that includes a module header fails.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

namespace fs = std::filesystem;

bool Allowed(const std::string& rel, const std::string& header, bool quoted) {
  if (!quoted) {   // <...>: the standard library, POSIX and CLI11
    return header.find('/') == std::string::npos || header.rfind("CLI/", 0) == 0 || header.rfind("sys/", 0) == 0;
  }
  for (const char* prefix : {"parasim/", "facade/", "cli/"})
    if (header.rfind(prefix, 0) == 0) return true;
  return rel.rfind("cli/output/", 0) == 0 && header == "core/number_format.h";
}

// The headers of `file` outside the rule.
std::vector<std::string> Violations(const fs::path& file, const std::string& rel) {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<std::string> out;
  std::ifstream in(file);
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, include) && !Allowed(rel, m[2], m[1] == "\"")) out.push_back(m[2]);
  return out;
}

}  // namespace

TEST_CASE("cli includes only the facade, its writers and CLI11", "[cli][includes]") {
  const fs::path root(PARASIM_SOURCE_DIR);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "cli")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const std::string rel = fs::relative(entry.path(), root).generic_string();
    const std::vector<std::string> bad = Violations(entry.path(), rel);
    ++files;
    INFO(rel);
    std::string includes;
    for (const std::string& header : bad) includes += header + " ";
    CHECK(includes == "");
  }
  CHECK(files > 10);
}
