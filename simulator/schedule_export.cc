#include "simulator/schedule_export.h"

#include <nlohmann/json.hpp>

#include "topology/group_path.h"

namespace parasim::simulator {
namespace {

using Json = nlohmann::ordered_json;

int GroupSize(const ParallelConfig& c, ParallelDim dim) {
  switch (dim) {
    case ParallelDim::kTp: return c.tp;
    case ParallelDim::kCp: return c.cp;
    case ParallelDim::kEp: return c.ep;
    case ParallelDim::kDp: return c.dp;
    case ParallelDim::kPp: return c.pp;
  }
  return 1;
}

Json CollectiveJson(const WorkloadCollective& c, const ParallelConfig& config) {
  return Json{{"op", ToString(c.op)},
              {"what", c.what},
              {"dim", ToString(c.dim)},
              {"group_size", GroupSize(config, c.dim)},
              {"phase", ToString(c.phase)},
              {"size_bytes", c.size.si()},
              {"blocking", c.blocking},
              {"count", c.count},
              {"every_micro_batch", c.every_micro_batch},
              {"predicted_s", c.duration.si()}};
}

Json LayerJson(const LayerWork& l, const ParallelConfig& config) {
  Json collectives = Json::array();
  for (const WorkloadCollective& c : l.collectives) collectives.push_back(CollectiveJson(c, config));
  return Json{{"name", l.name},
              {"layer_index", l.layer_index},
              {"chunk", l.chunk},
              {"forward_s", l.forward_time.si()},
              {"backward_s", l.backward_time.si()},
              {"recompute_s", l.recompute_time.si()},
              {"forward_flops", l.forward_flops.si()},
              {"backward_flops", l.backward_flops.si()},
              {"forward_bytes", l.forward_bytes.si()},
              {"backward_bytes", l.backward_bytes.si()},
              {"parameter_bytes", l.parameter_bytes.si()},
              {"collectives", std::move(collectives)}};
}

Json ModelJson(const ModelSpec& m) {
  return Json{{"name", m.name},
              {"hidden_size", m.hidden_size},
              {"num_layers", m.num_layers},
              {"num_attention_heads", m.num_attention_heads},
              {"num_kv_heads", m.num_kv_heads},
              {"head_dim", m.HeadDim()},
              {"ffn_hidden_size", m.ffn_hidden_size},
              {"vocab_size", m.vocab_size},
              {"mlp", m.mlp == MlpKind::kSwiGlu ? "swiglu" : "gelu"},
              {"tied_embeddings", m.tied_embeddings},
              {"num_experts", m.num_experts}};
}

Json PredictionJson(const Report& r) {
  return Json{{"fidelity", r.fidelity == Fidelity::kAnalytical ? "analytical"
                           : r.fidelity == Fidelity::kSimulated ? "simulated" : "full"},
              {"step_time_s", r.step_time.si()},
              {"compute_s", r.compute.si()},
              {"comm_s", r.comm.si()},
              {"exposed_comm_s", r.exposed_comm.si()},
              {"bubble_s", r.bubble.si()},
              {"mfu", r.mfu}};
}

}  // namespace

std::string ScheduleJson(const StepWorkload& w, const ModelSpec& model, const JobSpec& job, const Report& prediction) {
  const ParallelConfig& c = w.config;
  Json j;
  j["kind"] = "parasim_schedule";
  j["schema_version"] = kScheduleSchemaVersion;
  j["model"] = ModelJson(model);
  j["seq_len"] = job.seq_len;
  j["micro_batch"] = c.micro_batch;
  j["num_micro_batches"] = w.num_micro_batches;
  j["config"] = c.ToString();
  j["parallel"] = Json{{"dp", c.dp}, {"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep},
                       {"sequence_parallel", c.sequence_parallel}};
  j["sharding"] = ToString(w.sharding);
  j["recompute"] = ToString(c.recompute);
  j["prefetch_depth"] = w.prefetch_depth;
  j["reshard_after_forward"] = w.reshard_after_forward;
  j["world_size"] = w.world_size;
  j["prediction"] = PredictionJson(prediction);
  // The first stage: a single-GPU slice replays it; later stages differ only
  // in their layers and have no embedding.
  Json layers = Json::array();
  if (!w.stages.empty()) {
    for (const LayerWork& l : w.stages.front().layers) layers.push_back(LayerJson(l, c));
    j["stage"] = 0;
    j["optimizer_s"] = w.stages.front().optimizer_time.si();
    j["memory_peak_bytes"] = w.stages.front().memory_peak.si();
  }
  j["layers"] = std::move(layers);
  return j.dump(1) + "\n";
}

}  // namespace parasim::simulator
