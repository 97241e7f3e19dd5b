// Shared by the libFuzzer targets: the contract every loader and parser must
// keep on any input is "a value, or parasim::InvalidInput"; anything else (a
// crash, a sanitizer report, another exception) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"

namespace parasim_fuzz {

// Runs `body`; InvalidInput is the expected answer to bad input.
template <class F>
void ExpectValueOrInvalidInput(F&& body) {
  try {
    body();
  } catch (const parasim::InvalidInput&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parasim fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  }
}

// A file of this process holding the input, for loaders that take a path.
inline std::string WriteInput(const uint8_t* data, size_t size, const char* suffix) {
  const std::string path = "/tmp/parasim_fuzz_" + std::to_string(::getpid()) + suffix;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace parasim_fuzz
