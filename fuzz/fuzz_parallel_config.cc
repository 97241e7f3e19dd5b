// Parallel-config strings (--config "dp=..,tp=..") and their layout rules.
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const parasim::ModelSpec model = parasim::LoadModel("llama2-7b");
  parasim::JobSpec job;
  job.global_batch = 512;
  job.seq_len = 4096;
  const std::string text(reinterpret_cast<const char*>(data), size);
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    const parasim::ParallelConfig c = parasim::ParseParallelConfig(text);
    c.Validate(model, job, 64);
    parasim::ParseParallelConfig(c.ToString());   // the canonical form parses back
  });
  return 0;
}
