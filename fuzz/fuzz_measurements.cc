// Microbenchmark measurement JSON (calibrate fit --measurements DIR): the
// first byte picks the file kind.
#include "calibrate/microbench_data.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = parasim_fuzz::WriteInput(data + 1, size - 1, ".json");
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    switch (data[0] % 4) {
      case 0: parasim::calibrate::LoadGemmSweep(path); break;
      case 1: parasim::calibrate::LoadBandwidthSweep(path); break;
      case 2: parasim::calibrate::LoadLaunchOverhead(path); break;
      default: parasim::calibrate::LoadPowerStates(path); break;
    }
  });
  return 0;
}
