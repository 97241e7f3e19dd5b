// whatif --vary texts ("key=v1,v2"), and each value applied to a cluster and
// job as a grid point would be.
#include "core/loaders.h"
#include "fuzz_util.h"
#include "planner/whatif.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const parasim::ClusterSpec base = parasim::LoadCluster("dgx-h100");
  const std::string text(reinterpret_cast<const char*>(data), size);
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    const parasim::planner::Variation v = parasim::planner::ParseVariation(text);
    for (const std::string& value : v.values) {
      if (v.key == "gpu" || v.key == "stack") continue;   // names of files: the loaders' own targets
      parasim::ClusterSpec c = base;
      parasim::JobSpec j;
      j.global_batch = 64;
      j.seq_len = 4096;
      parasim::planner::ApplyVariation(c, j, v.key, value);
    }
  });
  return 0;
}
