// Software-stack files (--stack FILE).
#include "cost_model/software_stack_io.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parasim_fuzz::ExpectValueOrInvalidInput([&] { parasim::ParseSoftwareStackYaml(text, "fuzz.yaml"); });
  return 0;
}
