#include "core/provenance.h"

#include <fstream>
#include <iterator>

#include "core/embedded_files.h"
#include "core/error.h"
#include "core/sha256.h"

#ifndef PARASIM_VERSION
#error "PARASIM_VERSION comes from CMake (project VERSION)"
#endif

namespace parasim {

const char* ParasimVersion() { return PARASIM_VERSION; }

std::string FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path, "", "cannot read the file to record its hash");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Sha256Hex(bytes);
}

std::string EmbeddedSha256(const std::string& relative_path) {
  for (const EmbeddedFile& f : EmbeddedProfileFiles()) {
    if (relative_path == f.path) return Sha256Hex(f.content);
  }
  return "";
}

}  // namespace parasim
