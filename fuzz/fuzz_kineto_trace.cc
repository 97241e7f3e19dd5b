// PyTorch profiler (Kineto) traces and parasim timelines (calibrate import-trace).
#include "calibrate/kineto_trace.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parasim::calibrate::TraceReadOptions options;
  parasim_fuzz::ExpectValueOrInvalidInput([&] { parasim::calibrate::ParseKinetoTrace(text, "fuzz.json", options); });
  return 0;
}
