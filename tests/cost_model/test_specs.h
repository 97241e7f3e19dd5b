// Hand-built specs for cost_model tests, independent of presets and loaders.
#pragma once

#include "core/cluster_spec.h"
#include "core/gpu_profile.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/kernel_time.h"

namespace parasim::testing {

// Round H100 SXM rates for closed-form layer-cost tests: 989 TFLOP/s dense
// BF16 and 132 SMs (NVIDIA H100 datasheet), 3.0 TB/s usable HBM (of 3.35).
inline DeviceRates NominalH100Rates() {
  DeviceRates d;
  d.peak_flops = 989e12;
  d.hbm_Bps = 3.0e12;
  d.sm_count = 132;
  return d;
}

// Llama-2-7B (Touvron et al. 2023, HF config.json of meta-llama/Llama-2-7b-hf).
inline ModelSpec Llama2_7b() {
  ModelSpec m;
  m.name = "llama2-7b";
  m.hidden_size = 4096;
  m.num_layers = 32;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.ffn_hidden_size = 11008;
  m.vocab_size = 32000;
  m.mlp = MlpKind::kSwiGlu;
  return m;
}

// A GPT-style layer with a 4h GELU MLP (Korthikanti et al. 2022 shapes).
inline ModelSpec Gpt(int64_t h, int64_t layers, int64_t heads, int64_t vocab) {
  ModelSpec m;
  m.name = "gpt";
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.ffn_hidden_size = 4 * h;
  m.vocab_size = vocab;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  return m;
}

// H100 SXM figures (hardware-and-collectives.md §1.1).
inline GpuProfile H100() {
  GpuProfile g;
  g.name = "h100-sxm";
  g.architecture = "hopper";
  g.compute_capability = 90;
  g.bf16_dense = TFlops(989);
  g.fp32 = TFlops(67);               // H100 SXM datasheet, non-tensor FP32
  g.pcie_bandwidth = GBps(64);       // PCIe Gen5 x16
  g.hbm_capacity = GB(80);
  g.hbm_bandwidth = GBps(3350);
  g.nvlink_bandwidth = GBps(450);
  g.sm_count = 132;
  g.tdp = Watts(700);
  g.idle_power = Watts(70);
  g.gemm_max_efficiency = 0.803;
  g.memory_efficiency = 0.85;
  g.nvls = true;
  return g;
}

inline GpuProfile A100() {
  GpuProfile g = H100();
  g.name = "a100-sxm";
  g.architecture = "ampere";
  g.compute_capability = 80;
  g.bf16_dense = TFlops(312);
  g.fp32 = TFlops(19.5);             // A100 SXM datasheet, non-tensor FP32
  g.pcie_bandwidth = GBps(32);       // PCIe Gen4 x16
  g.hbm_bandwidth = GBps(2039);
  g.nvlink_bandwidth = GBps(300);
  g.sm_count = 108;
  g.tdp = Watts(400);
  g.idle_power = Watts(55);
  g.gemm_max_efficiency = 0.869;
  g.nvls = false;
  return g;
}

inline ClusterSpec Dgx(const GpuProfile& gpu, int nodes) {
  ClusterSpec c;
  c.name = "dgx";
  c.gpu = gpu;
  c.gpus_per_node = 8;
  c.nodes = nodes;
  c.inter_node.nic_bandwidth = Gbps(gpu.architecture == "hopper" ? 400 : 200);
  return c;
}

inline JobSpec Job(int64_t global_batch, int64_t seq) {
  JobSpec j;
  j.global_batch = global_batch;
  j.seq_len = seq;
  return j;
}

// The eager slowdown the presets apply to memory-bound PyTorch kernels
// (cost_model/software_stack.cc, kEagerMemoryBoundMeasured).
inline constexpr double kEagerMemoryBound = 1.5681808517219065;

}  // namespace parasim::testing
