#include "cost_model/evaluator_units.h"

#include "cost_model/eval_memo.h"

namespace parasim {

namespace {
// What the compute of the three unit kinds depends on (layer_cost.h):
// kernel id, tp, ep, cp, mbs, sp, cp kind and a2a size, recompute (not the cluster size or batch).
using UnitsKey = WordKey<4>;
}  // namespace

const Units& UnitCostsOf(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs) {
  thread_local SlotMemo<UnitsKey, Units, 128> memo;
  return memo.Get(UnitsKey{{d.kernel_id, Pack(c.tp, c.ep), Pack(c.cp, c.micro_batch),
                            Pack((c.sequence_parallel ? 1 : 0) | static_cast<int>(c.cp_comm) << 1 | c.cp_a2a_size << 3,
                                 static_cast<int>(c.recompute))}},
                  [&] {
                    Units u{UnitCost{}, EmbeddingCost(d.lcm, c, cs.T), LmHeadCost(d.lcm, c, cs.T)};
                    u.several_kinds = d.lcm.several_kinds;
                    if (!u.several_kinds) {
                      u.layer = TransformerLayerCost(d.lcm, c, cs.T);
                      return u;
                    }
                    // Each kind once; the model's mean layer from them (as TransformerLayerCost).
                    double layers = 0;
                    for (double n : d.lcm.kind_layers) layers += n;
                    for (int k = 0; k < kNumLayerKinds; ++k) {
                      if (d.lcm.kind_layers[k] <= 0) continue;
                      u.kinds[k] = TransformerLayerKindCost(d.lcm, c, cs.T, k);
                      AddScaled(u.layer, u.kinds[k], d.lcm.kind_layers[k] / layers);
                    }
                    return u;
                  });
}

}  // namespace parasim
