// One row of torchtitan's docs/performance.md tables (tests/data/
// memory_torchtitan_perf_tables.csv, throughput_torchtitan_perf_tables.csv:
// model, gpus, dp_shard/tp/pp/cp, schedule, local batch, micro-batches,
// sequence, float8, AC mode, compile, async TP) priced as it ran. One
// definition for the memory reference test
// (tests/cost_model/memory_references_test.cc) and the throughput one
// (tests/planner/throughput_torchtitan_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/power_cap.h"
#include "cost_model/software_stack.h"

namespace parasim::testing {

// torchtitan's default split without pipeline_parallel_split_points
// (torchtitan/parallelisms/pipelining_utils.py generate_split_points at
// 9dec370): pp·v stages, the first base = L / (pp·v) layers, the middle ones
// base + 1 while L mod (pp·v) lasts, the last the rest; a looped schedule
// (interleaved, v = 2) gives rank r the stages r, r + pp, …. Layers per rank.
inline std::string TorchtitanStageLayers(int layers, int pp, int v) {
  const int stages = pp * v, base = layers / stages;
  int extra = layers % stages, used = 0;
  std::vector<int> per_stage;
  for (int i = 0; i + 1 < stages; ++i) {
    const int n = i == 0 ? base : base + (extra > 0 ? 1 : 0);
    if (i > 0 && extra > 0) --extra;
    per_stage.push_back(n);
    used += n;
  }
  per_stage.push_back(layers - used);
  std::string out;
  for (int r = 0; r < pp; ++r) {
    int n = 0;
    for (int s = r; s < stages; s += pp) n += per_stage[s];
    if (r > 0) out += ':';
    out += std::to_string(n);
  }
  return out;
}

// The row priced with tier A as it ran: the `torchtitan` stack (`eager`, i.e.
// stacks/torchtitan-eager.yaml, where compile is off), H100 SXM nodes of 8,
// the Llama 3.1 preset, FSDP2 over dp_shard·cp (zero3), TP with
// sequence-parallel norms, torch pipelining with torchtitan's default split,
// all-gather CP (torchtitan's default rotate method), async TP where the row
// turned it on.
inline Report EvaluateTorchtitanTableRow(const std::map<std::string, std::string>& r, const SoftwareStack& compiled,
                                         const SoftwareStack& eager) {
  SoftwareStack stack = r.at("compile") == "true" ? compiled : eager;
  const ModelSpec model = LoadModel(r.at("model"));
  const int gpus = std::stoi(r.at("gpus"));
  const int dp = std::stoi(r.at("dp_shard")), tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp"));
  const int local_batch = std::stoi(r.at("local_batch")), microbatches = std::stoi(r.at("microbatches"));
  if (r.at("async_tp") == "true") {
    // experimental.enable_async_tensor_parallel: inductor's micro_pipeline_tp
    // pass turns the compiled graph's all-gather -> matmul and matmul ->
    // reduce-scatter pairs (float8 _scaled_mm ones too) into torch's
    // symmetric-memory ops (torch/distributed/_symmetric_memory/__init__.py,
    // _pipelined_all_gather_and_consume / _pipelined_produce_and_all2all):
    // the tensor is cut in tp shards, the local one computed while the
    // others move by copies on a side stream (copy engines, no SMs taken),
    // so all but 1/tp of a fused collective can hide; the GEMM slowdown
    // stays the preset's 0. Which collectives fuse is the preset's
    // tp_overlap_backward_reductions (false: the backward's reduce-scatters
    // of summed dgrads do not). Derived, not measured (docs/DECISIONS.md
    // "TP overlap").
    stack.tp_comm_overlap = 1.0 - 1.0 / tp;
  }
  ClusterSpec cluster = LoadCluster("dgx-h100", gpus / 8);
  // The runs' H100s are Grand Teton's 96 GB HBM2e parts (the CSV header):
  // 97871 MiB, the nvidia-smi figure of the 96 GB part (UNCERTAIN, as in
  // hw_profiles/gpus/gh200.yaml). Capacity decides only whether a segment
  // added after backward (the merged pipeline outputs) overflows the GPU.
  cluster.gpu.hbm_capacity = MiB(97871);
  // The same parts' bandwidth: "96GB HBM2e with 2.4 TB/sec peak memory
  // bandwidth" (torchtitan docs/performance.md at eaea6f6, the platform list).
  cluster.gpu.hbm_bandwidth = GBps(2400);
  // "We used the default 500W power limit, although tuning it up to 700W TDP
  // can potentially provide further speedups" (the same document): the 700 W
  // part run under a 500 W board limit, priced by the power-cap law
  // (cost_model/power_cap.h: the SM clock where each state draws the limit).
  cluster.gpu = ApplyPowerCap(cluster.gpu, Watts(500), "torchtitan docs/performance.md: 500 W power limit");
  JobSpec job;
  job.global_batch = static_cast<int64_t>(dp) * local_batch;
  job.seq_len = std::stoll(r.at("seq_len"));
  job.stack = stack.name;
  if (r.at("float8") == "true") job.precision = Precision::kFp8;   // tensorwise dynamic scaling (CSV header)
  std::string cfg = "dp=" + r.at("dp_shard") + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") + ",cp=" + r.at("cp") +
                    ",mbs=" + std::to_string(local_batch / microbatches) + ",sharding=zero3,recompute=" + r.at("ac") +
                    (tp > 1 ? ",sp=on" : ",sp=off");
  if (std::stoi(r.at("cp")) > 1) cfg += ",cp_comm=allgather";
  if (pp > 1) {
    cfg += r.at("schedule") == "interleaved" ? ",schedule=interleaved,vpp=2" : ",schedule=1f1b";
    cfg += ",pp_layers=" + TorchtitanStageLayers(model.num_layers, pp, r.at("schedule") == "interleaved" ? 2 : 1);
  }
  return AnalyticalEvaluator(model, cluster, job, stack).Evaluate(ParseParallelConfig(cfg));
}

}  // namespace parasim::testing
