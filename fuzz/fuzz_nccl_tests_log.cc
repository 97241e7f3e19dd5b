// nccl-tests stdout logs (calibrate import-nccl-tests).
#include "calibrate/nccl_tests_log.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parasim_fuzz::ExpectValueOrInvalidInput([&] { parasim::calibrate::ParseNcclTestsLog(text, "fuzz.out"); });
  return 0;
}
