// Golden reports: a fixed set of (model, cluster, job, config) cases whose
// every Report field is printed at full precision (%.17g) and compared, as
// text, with a committed file under tests/data/golden/. They pin the
// evaluator (and the simulator's report) byte for byte across refactors.
//
// Regenerate after an intended change (and say so in the commit):
//   PARASIM_WRITE_GOLDEN=1 build/tests/cost_model_tests "[golden]"
//   PARASIM_WRITE_GOLDEN=1 build/tests/simulator_tests "[golden]"
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/report.h"

namespace parasim::testing {

struct GoldenCase {
  const char* model;      // preset name, or a path under the source tree (contains '/')
  const char* cluster;    // preset name
  int nodes;
  bool facility_power;    // add node-overhead and per-switch power (presets leave them 0)
  int64_t global_batch;
  int64_t seq_len;
  const char* stack;
  const char* config;     // "k=v,..." (ParseParallelConfig)
};

// The cases: dense 7B and 70B, a MoE, a tied-embedding small model; DGX
// H100 / A100 at a few node counts; every sharding, tp/pp/cp/ep/vpp/sp,
// recompute, schedules, an uneven pp split, a memory-infeasible config and
// malformed ones (rejected by Validate, and by the placement).
inline const std::vector<GoldenCase>& GoldenCases() {
  static const std::vector<GoldenCase> cases = {
      // llama2-7b, 4 DGX H100 (32 GPUs)
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=8,tp=4,sp=on,sharding=ddp"},
      {"llama2-7b", "dgx-h100", 4, true, 256, 4096, "pytorch-fsdp",
       "dp=8,tp=2,pp=2,sharding=ddp,recompute=selective"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,sharding=zero1,recompute=full"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,sharding=zero2"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,mbs=2,sharding=zero2-replicated,recompute=full"},
      {"llama2-7b", "dgx-h100", 4, true, 256, 4096, "pytorch-fsdp", "dp=32,sharding=zero3"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,sharding=zero3,prefetch=2"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,sharding=zero3,prefetch=0"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,sharding=hsdp:8"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=16,tp=2,sp=on,sharding=zero1"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp",
       "dp=8,tp=4,sharding=zero3,recompute=selective"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "megatron-core", "dp=8,tp=2,pp=2,mbs=2,recompute=full"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "megatron-core",
       "dp=4,tp=2,pp=4,vpp=2,schedule=interleaved,sp=on,sharding=zero1"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "megatron-core", "dp=8,tp=2,pp=2,schedule=gpipe,sharding=zero1,recompute=full"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "megatron-core", "dp=8,pp=4,schedule=zb-h1,sharding=zero1"},
      {"llama2-7b", "dgx-h100", 4, true, 256, 4096, "megatron-core",
       "dp=8,pp=4,pp_layers=10:8:8:6,sharding=zero1"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=8,cp=2,tp=2,sharding=zero3"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=4,cp=4,tp=2,sp=on,recompute=selective"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=16,tp=2,order=dp-tp-cp-ep-pp"},
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=32,mbs=8,sharding=ddp"},   // memory
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=3,sharding=zero2"},         // world
      {"llama2-7b", "dgx-h100", 4, false, 256, 4096, "pytorch-fsdp", "dp=16,tp=3,sharding=zero2"},   // heads
      {"llama2-7b", "dgx-h100", 1, false, 64, 4096, "pytorch-fsdp2", "dp=8,sharding=zero3"},
      {"llama2-7b", "dgx-a100", 2, false, 128, 4096, "pytorch-fsdp", "dp=16,sharding=zero3,recompute=full"},
      {"llama2-7b", "dgx-a100", 2, true, 128, 4096, "megatron-core", "dp=4,tp=4,sp=on,sharding=zero1"},
      // llama2-70b, 16 DGX H100 (128 GPUs) and 16 DGX A100
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "megatron-core", "dp=16,tp=8,sp=on,sharding=zero3,recompute=selective"},
      {"llama2-70b", "dgx-h100", 16, true, 512, 4096, "megatron-core",
       "dp=4,tp=8,pp=4,sp=on,sharding=zero1,recompute=selective"},
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "megatron-core",
       "dp=2,tp=8,pp=8,vpp=5,schedule=interleaved,sp=on,sharding=zero1"},
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "megatron-core",
       "dp=4,tp=4,pp=8,mbs=2,sp=on,recompute=full,sharding=zero1"},
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "pytorch-fsdp", "dp=128,sharding=zero3,recompute=full"},
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "pytorch-fsdp", "dp=64,tp=2,sp=on,sharding=hsdp:16,recompute=full"},
      {"llama2-70b", "dgx-h100", 16, false, 512, 4096, "pytorch-fsdp", "dp=128,sharding=ddp"},   // memory
      {"llama2-70b", "dgx-h100", 16, false, 512, 8192, "megatron-core",
       "dp=4,tp=8,cp=4,sp=on,sharding=zero1,recompute=selective"},
      {"llama2-70b", "dgx-a100", 16, false, 512, 4096, "megatron-core", "dp=4,tp=8,pp=4,sp=on,sharding=zero1"},
      {"llama2-70b", "dgx-a100", 16, false, 512, 4096, "megatron-core",
       "dp=4,tp=8,pp=4,pp_layers=21:20:20:19,sp=on,sharding=zero1,recompute=full,schedule=gpipe"},
      // mixtral-8x7b, 8 DGX H100 (64 GPUs)
      {"mixtral-8x7b", "dgx-h100", 8, false, 256, 4096, "pytorch-fsdp", "dp=64,ep=8,sharding=zero3"},
      {"mixtral-8x7b", "dgx-h100", 8, true, 256, 4096, "megatron-core",
       "dp=16,tp=2,pp=2,ep=8,sp=on,sharding=zero1,recompute=selective"},
      {"mixtral-8x7b", "dgx-h100", 8, false, 256, 4096, "megatron-core",
       "dp=8,tp=4,pp=2,ep=4,sp=on,sharding=zero1,recompute=full"},
      {"mixtral-8x7b", "dgx-h100", 8, false, 256, 4096, "pytorch-fsdp", "dp=32,ep=2,cp=2,sharding=hsdp:8"},
      {"mixtral-8x7b", "dgx-h100", 8, false, 256, 4096, "pytorch-fsdp", "dp=64,ep=3,sharding=zero3"},   // ep
      // gpt-1.7b (tied embeddings), DGX A100 at 1, 2 and 4 nodes
      {"examples/gpt-1.7b.yaml", "dgx-a100", 1, false, 64, 2048, "megatron-lm-2021", "dp=8,sharding=ddp"},
      {"examples/gpt-1.7b.yaml", "dgx-a100", 2, true, 128, 2048, "megatron-lm-2021", "dp=8,pp=2,sharding=ddp"},
      {"examples/gpt-1.7b.yaml", "dgx-a100", 4, false, 512, 2048, "megatron-lm-2021",
       "dp=32,mbs=8,sharding=ddp,recompute=full"},
      {"examples/gpt-1.7b.yaml", "dgx-a100", 4, false, 512, 2048, "pytorch-fsdp", "dp=16,tp=2,sharding=zero2"},
      {"examples/gpt-1.7b.yaml", "dgx-a100", 4, true, 512, 2048, "pytorch-fsdp", "dp=32,sharding=zero3"},
  };
  return cases;
}

// Indices of the cases the simulator (tier B) also replays: small enough to
// keep the suite fast, and covering ddp/zero3/hsdp, tp, pp (1F1B, interleaved,
// uneven), cp, ep, tied embeddings and facility power.
inline const std::vector<int>& SimulatedGoldenCases() {
  static const std::vector<int> cases = {1, 5, 8, 9, 12, 15, 16, 19, 24, 26, 27, 36, 38, 41, 42, 44};
  return cases;
}

inline ClusterSpec GoldenCluster(const GoldenCase& g) {
  ClusterSpec c = LoadCluster(g.cluster, g.nodes);
  if (g.facility_power) {   // test values, not measurements: they make the facility terms nonzero
    c.node_overhead_power = Watts(1500);
    c.network_power_per_switch = Watts(750);
  }
  return c;
}

inline ModelSpec GoldenModel(const GoldenCase& g, const std::string& source_dir) {
  const std::string name = g.model;
  return LoadModel(name.find('/') == std::string::npos ? name : source_dir + "/" + name);
}

inline JobSpec GoldenJob(const GoldenCase& g) {
  JobSpec j;
  j.global_batch = g.global_batch;
  j.seq_len = g.seq_len;
  j.stack = g.stack;
  return j;
}

inline std::string GoldenCaseName(const GoldenCase& g) {
  std::ostringstream s;
  s << g.model << " " << g.cluster << " x" << g.nodes << (g.facility_power ? "+power" : "") << " gb=" << g.global_batch
    << " seq=" << g.seq_len << " " << g.stack << " " << g.config;
  return s.str();
}

inline void GoldenField(std::string& out, const char* name, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "  %s %.17g\n", name, x);
  out += buf;
}

// Every field of a report, one per line, doubles at %.17g.
inline std::string GoldenText(const Report& r) {
  std::string o;
  o += "  config " + r.config.ToString() + "\n";
  o += "  fidelity " + std::string(ToString(r.fidelity)) + "\n";
  o += "  num_micro_batches " + std::to_string(r.num_micro_batches) + "\n";
  o += "  feasible " + std::string(r.feasible ? "true" : "false") + "\n";
  o += "  infeasible_reason " + r.infeasible_reason + "\n";
  GoldenField(o, "step_time", r.step_time.si());
  GoldenField(o, "tokens_per_s", r.tokens_per_s);
  GoldenField(o, "tokens_per_s_per_gpu", r.tokens_per_s_per_gpu);
  GoldenField(o, "mfu", r.mfu);
  GoldenField(o, "hfu", r.hfu);
  GoldenField(o, "tflops_per_gpu", r.tflops_per_gpu);
  GoldenField(o, "hardware_tflops_per_gpu", r.hardware_tflops_per_gpu);
  GoldenField(o, "compute", r.compute.si());
  GoldenField(o, "comm", r.comm.si());
  GoldenField(o, "exposed_comm", r.exposed_comm.si());
  GoldenField(o, "exposed_comm_fraction", r.exposed_comm_fraction);
  GoldenField(o, "bubble", r.bubble.si());
  GoldenField(o, "memory_per_gpu", r.memory_per_gpu.si());
  GoldenField(o, "power_per_gpu", r.power_per_gpu.si());
  GoldenField(o, "energy_per_step", r.energy_per_step.si());
  GoldenField(o, "tokens_per_joule", r.tokens_per_joule);
  GoldenField(o, "exposed_comm_energy_per_token", r.exposed_comm_energy_per_token.si());
  for (const auto& e : r.by_op) {
    GoldenField(o, ("by_op." + e.name + ".total").c_str(), e.total.si());
    GoldenField(o, ("by_op." + e.name + ".exposed").c_str(), e.exposed.si());
  }
  for (const auto& e : r.by_dimension) {
    GoldenField(o, ("by_dimension." + e.name + ".total").c_str(), e.total.si());
    GoldenField(o, ("by_dimension." + e.name + ".exposed").c_str(), e.exposed.si());
  }
  for (const auto& [name, bytes] : r.memory_breakdown_bytes) GoldenField(o, ("memory." + name).c_str(), bytes);
  return o;
}

// Splits a golden file into its "== case" blocks (header line included).
inline std::vector<std::string> GoldenBlocks(const std::string& text) {
  std::vector<std::string> blocks;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) blocks.emplace_back();
    if (!blocks.empty()) blocks.back() += line + "\n";
  }
  return blocks;
}

inline bool GoldenWriteMode() {
  const char* w = std::getenv("PARASIM_WRITE_GOLDEN");
  return w != nullptr && std::string(w) == "1";
}

inline std::string ReadGoldenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteGoldenFile(const std::string& path, const std::vector<std::string>& blocks) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "# Golden reports (tests/cost_model/report_golden.h): regenerate with PARASIM_WRITE_GOLDEN=1.\n";
  for (const std::string& b : blocks) out << b;
}

// The golden test's body: `got` equals the file at `path` block by block, or,
// in write mode, becomes it.
inline void CheckOrWriteGolden(const std::string& path, const std::vector<std::string>& got) {
  if (GoldenWriteMode()) {
    WriteGoldenFile(path, got);
    WARN("wrote " << path);
    return;
  }
  const std::vector<std::string> want = GoldenBlocks(ReadGoldenFile(path));
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("case " << i);
    CHECK(got[i] == want[i]);
  }
}

}  // namespace parasim::testing
