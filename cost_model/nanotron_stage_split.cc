#include "cost_model/nanotron_stage_split.h"

#include <algorithm>

namespace parasim {

int64_t NanotronDecoderLayerCost(const ModelSpec& model) {
  const int64_t h = model.hidden_size;
  const int64_t a = model.num_attention_heads;
  const int64_t d_qkv = a > 0 ? h / a : 0;   // model_config.hidden_size // num_attention_heads
  return 4 * a * d_qkv * h + 3 * model.ffn_hidden_size * h;
}

int64_t NanotronLmHeadCost(const ModelSpec& model) { return model.vocab_size * model.hidden_size; }

NanotronStageSplit NanotronBalancedStageLayers(const ModelSpec& model, int pp, bool close_at_threshold) {
  const int layers = static_cast<int>(model.num_layers);
  NanotronStageSplit out;
  out.layers.assign(std::max(pp, 1), 0);
  if (pp <= 1) {
    out.layers[0] = layers;
    out.nanotron_layers = out.layers;
    return out;
  }
  // Pipeline blocks in LlamaForTraining's module order (llama.py): token
  // embedding, the decoder layers, final norm, LM head, cast_to_fp32, loss.
  struct Block {
    int64_t cost;
    bool decoder;
  };
  std::vector<Block> blocks;
  blocks.push_back({0, false});
  for (int i = 0; i < layers; ++i) blocks.push_back({NanotronDecoderLayerCost(model), true});
  blocks.push_back({0, false});
  blocks.push_back({NanotronLmHeadCost(model), false});
  blocks.push_back({0, false});
  blocks.push_back({0, false});
  int64_t total = 0;
  for (const Block& b : blocks) total += b.cost;
  // thresholds = total * ((rank + 1) / pp_size) in float64; numpy compares
  // the int64 cumulative sum against it as float64.
  int rank = 0;
  int64_t cumulative = 0;
  for (const Block& b : blocks) {
    cumulative += b.cost;
    if (b.decoder) ++out.layers[rank];
    const double threshold = static_cast<double>(total) * (static_cast<double>(rank + 1) / pp);
    const double c = static_cast<double>(cumulative);
    const bool closes = close_at_threshold ? c >= threshold : c > threshold;
    if (closes && rank + 1 < pp) ++rank;
  }
  out.nanotron_layers = out.layers;
  // An empty stage takes the last layer of the nearest earlier stage that
  // has more than one (its boundary moves back one block), so the stages
  // before it keep nanotron's split: stage 0, which holds the most
  // micro-batches under 1F1B, stays as nanotron builds it.
  for (int s = 0; s < pp; ++s) {
    if (out.layers[s] > 0) continue;
    int donor = s - 1;
    while (donor >= 0 && out.layers[donor] <= 1) --donor;
    if (donor < 0) {
      donor = static_cast<int>(std::max_element(out.layers.begin(), out.layers.end()) - out.layers.begin());
      if (out.layers[donor] <= 1) break;   // pp > num_layers: nothing to move (Validate rejects it)
    }
    --out.layers[donor];
    out.layers[s] = 1;
    ++out.clamped_stages;
  }
  return out;
}

}  // namespace parasim
