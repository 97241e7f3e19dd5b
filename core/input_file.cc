#include "core/input_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.h"

namespace parasim {
namespace {

std::string Shorten(const std::string& path) {
  return path.size() <= 200 ? path : path.substr(0, 120) + "..." + path.substr(path.size() - 60);
}

}  // namespace

bool PathExists(const std::string& path) noexcept {
  if (path.empty() || path.size() > kMaxPathLength) return false;
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !ec;
}

std::string ReadInputFile(const std::string& path, const std::string& key, uint64_t max_bytes) {
  namespace fs = std::filesystem;
  const std::string shown = Shorten(path);
  if (path.empty()) throw InvalidInput("", key, "no file name given");
  if (path.size() > kMaxPathLength) {
    throw InvalidInput(shown, key, StrCat("file name of ", path.size(), " characters is longer than ", kMaxPathLength));
  }
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw InvalidInput(shown, key, ec && ec != std::errc::no_such_file_or_directory
                                       ? StrCat("cannot read: ", ec.message())
                                       : std::string("cannot read: no such file"));
  }
  if (fs::is_directory(status)) throw InvalidInput(shown, key, "is a directory, not a file");
  if (!fs::is_regular_file(status)) {
    throw InvalidInput(shown, key, "is not a regular file (a device, FIFO or socket); give a file");
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InvalidInput(shown, key, StrCat("cannot read: ", ec.message()));
  if (size > max_bytes) {
    throw InvalidInput(shown, key, StrCat("is ", size, " bytes, more than the limit of ", max_bytes));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InvalidInput(shown, key, StrCat("cannot open: ", std::strerror(errno)));
  // Read at most the limit + 1 bytes, whatever the size said (the file may grow).
  std::string text;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    text.append(buf, n);
    if (text.size() > max_bytes) throw InvalidInput(shown, key, StrCat("is more than the limit of ", max_bytes, " bytes"));
  }
  if (std::ferror(f.get())) throw InvalidInput(shown, key, "read error");
  return text;
}

}  // namespace parasim
