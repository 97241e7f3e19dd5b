// Hugging Face config.json (--model FILE.json).
#include "core/loaders.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasim_fuzz::WriteInput(data, size, ".json");
  parasim_fuzz::ExpectValueOrInvalidInput([&] { parasim::LoadHuggingFaceConfig(path); });
  return 0;
}
