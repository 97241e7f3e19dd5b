// Model YAML files (--model FILE.yaml).
#include "core/loaders.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasim_fuzz::WriteInput(data, size, ".yaml");
  parasim_fuzz::ExpectValueOrInvalidInput([&] { parasim::LoadModelYaml(path); });
  return 0;
}
