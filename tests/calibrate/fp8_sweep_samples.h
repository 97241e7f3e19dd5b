// Shared by the FP8 GEMM fit tests: synthetic sweep rows and temporary files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate/calibration.h"

namespace parasim::calibrate::testing {

// Compute-bound Llama-like shapes (min dim >= 4096: far above the HBM
// roofline at the fp8 peak), all of one pass and accumulator; times unset.
inline std::vector<GemmSample> Fp8Samples(const std::string& pass = "fwd", bool fast = true) {
  std::vector<GemmSample> out;
  const int64_t shapes[][3] = {{8192, 12288, 4096}, {8192, 4096, 12288}, {12288, 4096, 8192},
                               {8192, 8192, 8192},  {16384, 11008, 4096}, {8192, 4096, 11008}};
  for (const auto& s : shapes) {
    GemmSample g;
    g.model = "llama2-7b";
    g.pass = pass;
    g.dtype = "fp8";
    g.fast_accumulate = fast;
    g.m = s[0];
    g.n = s[1];
    g.k = s[2];
    out.push_back(g);
  }
  return out;
}

// Writes `text` to a file of that name in the temporary directory; its path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace parasim::calibrate::testing
