// Job YAML files (--job FILE).
#include "core/field_registry.h"
#include "core/loaders.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = parasim_fuzz::WriteInput(data, size, ".yaml");
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    const parasim::JobSpec job = parasim::LoadJobYaml(path);
    parasim::ValidateJob(job, path);
  });
  return 0;
}
