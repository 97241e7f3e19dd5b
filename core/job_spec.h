// The training job: batch, sequence, precision, optimizer, software stack.
#pragma once

#include <cstdint>
#include <string>

namespace parasim {

// GEMM precision of the linear layers; attention, norms and the optimizer stay
// in BF16/FP32 (cost_model/evaluator.cc PrecisionRates). kFp4: NVFP4/MXFP4.
// kFp32: fp32 training (no --bf16/--fp16); its matmuls run on TF32 tensor cores
// or FP32 SIMT as the stack's fp32_matmul says.
enum class Precision { kBf16, kFp8, kFp4, kFp32 };
enum class Optimizer { kAdamW };

struct JobSpec {
  int64_t global_batch = 0;      // sequences per optimizer step
  int64_t seq_len = 0;           // tokens per sequence
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  std::string stack = "pytorch-fsdp";  // software-stack profile name (cost_model/software_stack.h)
  std::string file;

  int64_t TokensPerStep() const { return global_batch * seq_len; }
};

}  // namespace parasim
