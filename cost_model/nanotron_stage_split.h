#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.h"

namespace parasim {

// nanotron's pipeline split (huggingface/nanotron a756526, src/nanotron/
// models/base.py build_model): the model's pipeline blocks in order, each
// weighted by get_block_compute_costs, go to ranks contiguously; a rank is
// closed after the first block whose cumulative cost exceeds total·(r+1)/pp.
// The LM head is a block of its own, so the last stage holds fewer decoder
// layers than an even split gives it.
//
// `close_at_threshold` closes a rank already when the cumulative cost
// reaches its threshold (>=, not >). The two differ only where a boundary
// falls exactly on a threshold (Llama 1B of the Ultra-Scale Playbook sweep:
// its head weighs four decoder layers, total 20 layers at pp 2 and 4). The
// sweep's pp > 1 runs after the playbook's pipeline fix mostly built it that
// way (their logged stage-0 parameter counts: docs/DECISIONS.md, "nanotron's
// pipeline split as each run built it"); no public nanotron commit has it.

// get_block_compute_costs (src/nanotron/models/llama.py lines 913-925):
// LlamaDecoderLayer 4·a·(h // a)·h + 3·f·h (heads, not KV heads: GQA is not
// seen), TensorParallelColumnLinear (the LM head) V·h; every other block
// (embedding, final norm, cast_to_fp32, loss) costs 0.
int64_t NanotronDecoderLayerCost(const ModelSpec& model);
int64_t NanotronLmHeadCost(const ModelSpec& model);

struct NanotronStageSplit {
  std::vector<int> layers;   // decoder layers per stage, pp entries summing to num_layers
  int clamped_stages = 0;    // stages nanotron leaves without a decoder layer, given one here
  std::vector<int> nanotron_layers;   // nanotron's own split, before the clamp (a stage may hold none)
};

// A stage of parasim holds at least one decoder layer; where nanotron's rule
// leaves a rank none (its LM head alone, or a rank never reached), that
// stage gets the last layer of the nearest earlier stage holding more than
// one (clamped_stages counts them), so the stages before keep nanotron's
// split. pp >= 1, pp <= num_layers.
NanotronStageSplit NanotronBalancedStageLayers(const ModelSpec& model, int pp, bool close_at_threshold = false);

}  // namespace parasim
