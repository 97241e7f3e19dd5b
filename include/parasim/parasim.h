// parasim's library: what a job scheduler links to ask, many times a second,
// how to split a training job over N GPUs and what a given split will cost.
// Specs (Model, Cluster, Stack) are loaded once, immutable and cheap to copy;
// a Planner over them answers Plan, Simulate, Scale and WhatIf queries from
// any number of threads at once, sharing one cache of what does not depend
// on the GPU count or the batch. Results are plain structs in SI units.
// Only standard-library types cross these headers. Errors: parasim::Error
// and its kinds (parasim/error.h); bad input names the struct field
// ("PlanQuery::top"), file or key. The library never prints, exits or reads
// the environment; hardware profiles are compiled in.
//
// Example (compiled and run by a test, as written here):
//   parasim::Planner planner(parasim::Model::Load("llama2-7b"), parasim::Cluster::Load("dgx-h100"),
//                            parasim::Job{.global_batch = 512, .seq_len = 4096});
//   parasim::PlanQuery query;
//   query.gpus = 256;
//   query.objective = "throughput";
//   const parasim::PlanResult plan = planner.Plan(query);   // throws parasim::InvalidInput on bad fields
//   const parasim::Prediction& best = plan.best();          // throws parasim::NoAnswer when nothing fits
//   // The chosen config replays to the same prediction (or through the simulator: fidelity "simulated").
//   const parasim::Prediction again = planner.Simulate({.gpus = 256, .config = best.config});
//   std::printf("%s: %.0f tokens/s, %.0f tokens/s again\n", best.config.c_str(), best.tokens_per_s,
//               again.tokens_per_s);
// End of example.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parasim/error.h"
#include "parasim/export.h"

namespace parasim {

namespace detail {
struct ModelData;
struct ClusterData;
struct StackData;
struct Engine;
struct Access;
}  // namespace detail

// A model's shape, for Model::Define (the fields of a parasim model YAML file).
struct ModelShape {
  std::string name = "custom";
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;          // 0 = num_attention_heads (MHA)
  int64_t ffn_hidden_size = 0;
  int64_t vocab_size = 0;
  std::string mlp = "swiglu";        // | gelu
  bool tied_embeddings = false;
  int64_t num_experts = 0;           // 0 = dense
  int64_t experts_per_token = 0;
  int64_t moe_ffn_hidden_size = 0;
};

// A transformer model: a preset (llama3-70b, ...), a parasim YAML file, a
// Hugging Face config.json, or a shape.
class PARASIM_API Model {
 public:
  static Model Load(const std::string& preset_or_file);
  static Model Define(const ModelShape& shape);   // throws InvalidInput naming ModelShape::<field>
  static std::vector<std::string> Presets();
  const std::string& name() const;
  int64_t parameters() const;

 private:
  friend struct detail::Access;
  explicit Model(std::shared_ptr<const detail::ModelData> data);
  std::shared_ptr<const detail::ModelData> data_;
};

// A cluster: a preset (dgx-h100, ...) or a cluster YAML file. Queries give
// the GPU count; the cluster is resized to it (whole nodes).
class PARASIM_API Cluster {
 public:
  static Cluster Load(const std::string& preset_or_file);
  static std::vector<std::string> Presets();
  const std::string& name() const;
  const std::string& gpu() const;   // GPU profile name
  int gpus_per_node() const;
  int nodes() const;                // as loaded

 private:
  friend struct detail::Access;
  explicit Cluster(std::shared_ptr<const detail::ClusterData> data);
  std::shared_ptr<const detail::ClusterData> data_;
};

// A software stack (framework, kernels, NCCL): a preset or a stack YAML file.
// Stack() is the default, pytorch-fsdp.
class PARASIM_API Stack {
 public:
  Stack();
  static Stack Load(const std::string& preset_or_file);
  static std::vector<std::string> Presets();
  const std::string& name() const;

 private:
  friend struct detail::Access;
  explicit Stack(std::shared_ptr<const detail::StackData> data);
  std::shared_ptr<const detail::StackData> data_;
};

// What to train: sequences per optimizer step, tokens per sequence, precision.
struct Job {
  int64_t global_batch = 0;
  int64_t seq_len = 4096;
  std::string precision = "bf16";   // | fp8 | fp4 (a GPU with an NVFP4/MXFP4 rate) | fp32 (stack fp32_matmul)
};

// One predicted training step of one parallel config (SI units).
struct Prediction {
  std::string config;               // canonical config string; Simulate takes it back
  bool feasible = false;
  std::string infeasible_reason;    // "memory: needs 91.2 GB of 80 GB"
  std::string fidelity;             // analytical | simulated | full
  int num_micro_batches = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double compute_s = 0;
  double comm_s = 0;
  double exposed_comm_s = 0;
  double exposed_comm_fraction = 0;
  double bubble_s = 0;
  double memory_bytes_per_gpu = 0;                   // the peak stage's estimate
  std::vector<double> memory_bytes_per_stage;        // each pipeline stage's peak per GPU (pp entries)
  int memory_peak_stage = 0;                         // the first stage at the peak
  double power_w_per_gpu = 0;
  double energy_j_per_step = 0;
  double tokens_per_joule = 0;
  std::vector<std::pair<std::string, double>> comm_s_by_dimension;   // dp, tp, pp, cp, ep: total per step
};

struct PlanQuery {
  int gpus = 0;                                  // a multiple of the cluster's GPUs per node (or fewer than one node)
  int64_t global_batch = 0;                      // 0 = the job's
  std::string objective = "tokens-per-joule";    // | throughput | exposed-comm | cost | time-to-train
  std::string constraints;                       // "tp<=8,sharding=zero2"
  double gpu_hour_price = 0;                     // $ per GPU-hour (objective cost)
  double energy_price = 0;                       // $ per kWh (objective cost)
  double tokens = 0;                             // tokens to train (objective time-to-train)
  int top = 16;                                  // plans to return
  std::string fidelity = "analytical";           // | simulated | full: re-score the best `top` plans
  int threads = 1;                               // 0 = every core; the answer is the same for any count
};

struct PlanResult {
  int gpus = 0;
  std::vector<Prediction> plans;                 // best first; empty when nothing fits
  std::vector<double> objective_values;          // of each plan, in the objective's unit
  std::vector<Prediction> pareto;                // throughput vs tokens per joule, highest throughput first
  std::optional<Prediction> baseline;            // the best pure-FSDP plan, when one fits
  int64_t searched = 0;                          // candidates in the space
  int64_t scored = 0;                            // configs the cost model evaluated
  int64_t feasible = 0;                          // scored and fit
  std::map<std::string, int64_t> rejected;       // reason -> count
  PARASIM_API const Prediction& best() const;    // throws NoAnswer (with the reasons) when nothing fits
};

struct SimulateQuery {
  int gpus = 0;
  std::string config;                            // "dp=8,tp=4,pp=2,mbs=1,sharding=zero1"
  std::string fidelity = "analytical";           // | simulated (tier B) | full (tier C)
  int64_t global_batch = 0;                      // 0 = the job's
};

struct ScaleQuery {
  std::vector<int> gpus;                         // the sizes, ascending
  std::string mode = "weak";                     // weak: local_batch sequences per GPU; strong: global_batch
  int64_t local_batch = 2;
  int64_t global_batch = 0;                      // strong mode; 0 = the job's
  double knee_threshold = 0.8;                   // efficiency below which the knee is reported
  PlanQuery plan;                                // objective, constraints, threads (gpus, global_batch unused)
};

struct ScalePoint {
  int gpus = 0;
  int64_t global_batch = 0;
  bool feasible = false;
  Prediction best;
  double objective_value = 0;
  double efficiency = 0;                         // tokens/s per GPU against the first feasible size
  double marginal_tokens_per_s_per_gpu = 0;      // from the previous size
  int64_t searched = 0;
  int64_t feasible_configs = 0;
};

struct ScaleResult {
  std::string mode;
  std::vector<ScalePoint> points;
  int knee_gpus = 0;                             // first size below the threshold; 0 = none
};

struct WhatIfQuery {
  int gpus = 0;
  std::vector<std::string> vary;                 // "nic_bandwidth=200Gbps,400Gbps", first outermost
  PlanQuery plan;                                // objective, constraints, threads (gpus unused)
};

struct WhatIfPoint {
  std::vector<std::pair<std::string, std::string>> setting;   // key, value
  int gpus = 0;
  bool feasible = false;
  Prediction best;
  double objective_value = 0;
  int64_t searched = 0;
  int64_t feasible_configs = 0;
};

struct WhatIfResult {
  std::vector<WhatIfPoint> points;
};

// Answers queries about one model on one cluster with one stack and job.
// Copies share the specs and the cache; every method is const and may be
// called from many threads at once, with the same answers as one by one.
class PARASIM_API Planner {
 public:
  Planner(Model model, Cluster cluster, Job job, Stack stack = Stack());   // throws InvalidInput naming Job::<field>
  ~Planner();
  Planner(const Planner&);
  Planner& operator=(const Planner&);

  PlanResult Plan(const PlanQuery& query) const;
  Prediction Simulate(const SimulateQuery& query) const;
  ScaleResult Scale(const ScaleQuery& query) const;
  WhatIfResult WhatIf(const WhatIfQuery& query) const;

 private:
  std::shared_ptr<detail::Engine> engine_;
};

// One NCCL collective on a group of a cluster, nccl-tests style.
struct CollectiveQuery {
  std::string op = "allreduce";   // | allgather | reducescatter | broadcast | reduce | alltoall | sendrecv
  int ranks = 0;                  // 0 = every GPU of `nodes` (or one node)
  int nodes = 0;                  // 0 = as many as the ranks need
  int gpus_per_node = 0;          // ranks per node; 0 = the cluster's
  bool per_node = false;          // one rank per node, all on one rail
  std::vector<double> sizes_bytes = {268435456.0};
  std::string nccl = "current";   // NCCL release: 2.MINOR[.PATCH], current, paper
  std::string fabric;             // ib | efa; "" = the cluster's transport
  std::string hw_profile;         // a fitted collective profile file; "" = the cluster's, if any
  std::string algo;               // force, as NCCL_ALGO; "" = NCCL's choice
  std::string proto;              // force, as NCCL_PROTO
  int gpus_per_thread = 1;        // nccl-tests -g
};

struct CollectiveRow {
  double size_bytes = 0;
  double time_s = 0;
  double latency_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  std::string algo, protocol;
};

struct CollectiveResult {
  std::string op, cluster, nccl, fabric;   // fabric "profile" when a fitted profile times it
  std::string hw_profile;
  int ranks = 0, nodes = 0, ranks_per_node = 0;
  bool single_rail = false;
  double ring_bandwidth_Bps = 0;
  std::vector<CollectiveRow> rows;
};

PARASIM_API CollectiveResult Collective(const Cluster& cluster, const CollectiveQuery& query);

}  // namespace parasim
