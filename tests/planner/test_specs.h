// Small hand-built specs for planner tests (independent of preset values).
#pragma once

#include "core/job_spec.h"
#include "core/model_spec.h"

namespace parasim::planner::testing {

inline ModelSpec TinyModel(int layers, int heads, int ffn = 64) {
  ModelSpec m;
  m.name = "tiny";
  m.source = "test";
  m.hidden_size = 16 * heads;
  m.num_layers = layers;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = 128;
  return m;
}

inline JobSpec Job(long long global_batch, long long seq_len) {
  JobSpec j;
  j.global_batch = global_batch;
  j.seq_len = seq_len;
  return j;
}

}  // namespace parasim::planner::testing
