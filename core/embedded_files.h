// YAML files under hw_profiles/ compiled into the library (cmake/embed_files.cmake).
#pragma once

#include <string>
#include <vector>

namespace parasim {

struct EmbeddedFile {
  const char* path;     // relative to hw_profiles/, e.g. "gpus/h100-sxm.yaml"
  const char* content;
};

const std::vector<EmbeddedFile>& EmbeddedProfileFiles();

}  // namespace parasim
