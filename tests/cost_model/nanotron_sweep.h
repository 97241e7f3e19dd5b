// The Ultra-Scale Playbook's nanotron sweep
// (tests/data/throughput_hf_ultrascale_nanotron_h100.csv) priced as each run
// ran: one definition for the throughput test (tests/planner) and the memory
// reference (tests/cost_model). Stack nanotron, cluster aws-p5 at the run's
// node count, sequence 4,096, bf16, sequence parallel when tp > 1 (tp_mode
// REDUCE_SCATTER), 1F1B, no recompute, DDP or ZeRO-1; the pipeline split is
// the stack's (nanotron's compute-balanced blocks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"

namespace parasim::testing {

// The sweep's model shapes: huggingface/nanotron a756526, scaling_benchmarks.py
// model_configs (layers, hidden, heads, ffn); vocabulary 131,072; tied
// embeddings when ffn < 10,000; multi-head attention unless the row's
// kv_heads says 8 (see the CSV header).
inline ModelSpec NanotronModel(const std::string& name, int kv_heads) {
  struct Shape {
    const char* name;
    int layers, hidden, heads, ffn;
  };
  static const Shape kShapes[] = {{"nanotron-1b", 16, 2048, 32, 8192},
                                  {"nanotron-3b", 28, 3072, 32, 8192},
                                  {"nanotron-8b", 32, 4096, 32, 14336},
                                  {"nanotron-80b", 80, 8192, 64, 28672}};
  for (const Shape& s : kShapes) {
    if (name != s.name) continue;
    ModelSpec m;
    m.name = name;
    m.source = "huggingface/nanotron a756526 scaling_benchmarks.py";
    m.num_layers = s.layers;
    m.hidden_size = s.hidden;
    m.num_attention_heads = s.heads;
    m.num_kv_heads = kv_heads;
    m.ffn_hidden_size = s.ffn;
    m.vocab_size = 131072;
    m.tied_embeddings = s.ffn < 10000;
    return m;
  }
  FAIL("unknown model " << name);
  return {};
}

// One row of the sweep, as measured.
struct NanotronRun {
  std::string model;
  int kv_heads = 0, nodes = 0, dp = 1, tp = 1, pp = 1, mbs = 1, grad_acc = 1, zero = 0;
  double tokens_per_s_per_gpu = 0;
  double peak_mem_gib = 0;   // global rank 0's torch.cuda.max_memory_reserved() / 2^30 (CSV header)
  // Global rank 0's torch.cuda.max_memory_allocated() / 2^30 in the same log
  // line: its peak was reset as step 3's pipeline pass ended (CSV header).
  double peak_alloc_gib = 0;
  bool suspect = false;
  // Run after the playbook's pipeline-parallel fix (the raw sweep CSV's
  // after_pp_fix); a pp > 1 run before it measured the engine that was replaced.
  bool after_pp_fix = false;
  double allreduce_busbw_gbps = 0;   // the job's own AllReduce busbw over the world at start-up
  double allgather_busbw_gbps = 0;   // and AllGather (1 GiB output), right after it
};

inline std::vector<NanotronRun> ReadNanotronSweep() {
  std::vector<NanotronRun> runs;
  for (const auto& r : ReadCsv(DataPath("throughput_hf_ultrascale_nanotron_h100.csv"))) {
    NanotronRun run;
    run.model = r.at("model");
    run.kv_heads = std::stoi(r.at("kv_heads"));
    run.nodes = std::stoi(r.at("nodes"));
    run.dp = std::stoi(r.at("dp"));
    run.tp = std::stoi(r.at("tp"));
    run.pp = std::stoi(r.at("pp"));
    run.mbs = std::stoi(r.at("mbs"));
    run.grad_acc = std::stoi(r.at("grad_acc"));
    run.zero = std::stoi(r.at("zero"));
    run.tokens_per_s_per_gpu = std::stod(r.at("tokens_per_s_per_gpu"));
    run.peak_mem_gib = std::stod(r.at("peak_mem_gb"));
    run.peak_alloc_gib = std::stod(r.at("peak_alloc_gb"));
    run.suspect = !r.at("suspect").empty();
    run.after_pp_fix = r.at("after_pp_fix") == "1";
    run.allreduce_busbw_gbps = std::stod(r.at("allreduce_busbw_gbps"));
    run.allgather_busbw_gbps = std::stod(r.at("allgather_busbw_gbps"));
    runs.push_back(run);
  }
  return runs;
}

// Tier A on the run's model, job and layout, on `cluster`.
inline Report EvaluateNanotronRunOn(const NanotronRun& run, const SoftwareStack& stack, const ClusterSpec& cluster);

// Tier A on the run's model, cluster, job and layout.
inline Report EvaluateNanotronRun(const NanotronRun& run, const SoftwareStack& stack) {
  return EvaluateNanotronRunOn(run, stack, LoadCluster("aws-p5", run.nodes));
}

inline Report EvaluateNanotronRunOn(const NanotronRun& run, const SoftwareStack& stack, const ClusterSpec& cluster) {
  JobSpec job;
  job.global_batch = int64_t{run.mbs} * run.grad_acc * run.dp;   // what the run processed per step
  job.seq_len = 4096;
  job.precision = Precision::kBf16;
  job.stack = stack.name;
  const std::string cfg = "dp=" + std::to_string(run.dp) + ",tp=" + std::to_string(run.tp) +
                          ",pp=" + std::to_string(run.pp) + ",mbs=" + std::to_string(run.mbs) +
                          ",sharding=" + (run.zero == 1 ? "zero1" : "ddp") +
                          ",recompute=none,schedule=1f1b,sp=" + (run.tp > 1 ? "on" : "off");
  return AnalyticalEvaluator(NanotronModel(run.model, run.kv_heads), cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
}

}  // namespace parasim::testing
