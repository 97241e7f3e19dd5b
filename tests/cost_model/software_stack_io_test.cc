#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack_io.h"
#include "cost_model/stack_field_registry.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {

std::string Invalid(const std::string& name) {
  return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/invalid/" + name;
}

// A scratch file under the temp folder, removed when the test ends.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// The whole message of an Error thrown by `load`, or "" when none is thrown.
template <class F>
std::string ErrorText(F&& load) {
  try {
    load();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

double LaunchOverhead(const Report& r) {
  for (const TimeBreakdownEntry& e : r.by_op) {
    if (e.name == "launch_overhead") return e.total.si();
  }
  FAIL("no launch_overhead entry");
  return 0;
}

}  // namespace

TEST_CASE("cost_model: an override file changes exactly its fields, and the report follows", "[cost_model][stack_io]") {
  // Setup: pytorch-fsdp with kernel_gap_s doubled (1.5 us -> 3 us), nothing else.
  // Expectation: the loaded stack equals the preset but for that field (and
  // the name, from the file); the evaluator's launch overhead, kernels x gap
  // + unhidden host time, goes up while GEMM time stays the same.
  const TempFile file("slow_launch.yaml",
                      "schema_version: 1\nbase: pytorch-fsdp\nkernel_gap_s: 3e-6\nnccl_version: 22005\n");
  const SoftwareStack loaded = LoadSoftwareStack(file.path.string());
  SoftwareStack expected = LoadSoftwareStack("pytorch-fsdp");
  expected.name = file.path.stem().string();
  expected.kernel_gap_s = 3e-6;
  CHECK(loaded == expected);

  const ModelSpec m = testing::Llama2_7b();
  const ClusterSpec c = testing::Dgx(testing::H100(), 2);
  JobSpec job = testing::Job(32, 4096);
  const ParallelConfig cfg = ParseParallelConfig("dp=16,mbs=2,sharding=zero2");
  const Report before = AnalyticalEvaluator(m, c, job).Evaluate(cfg);
  job.stack = file.path.string();
  const Report after = AnalyticalEvaluator(m, c, job).Evaluate(cfg);
  CHECK(LaunchOverhead(after) > LaunchOverhead(before));
  CHECK(after.step_time.si() > before.step_time.si());
  CHECK(after.by_op[0].name == "gemm");
  CHECK(after.by_op[0].total.si() == before.by_op[0].total.si());
}

TEST_CASE("cost_model: nccl_version reads as text or as a number", "[cost_model][stack_io]") {
  for (const char* v : {"\"2.26.2\"", "22602", "2.26.2"}) {
    INFO(v);
    const SoftwareStackFile f =
        ParseSoftwareStackYaml(std::string("schema_version: 1\nbase: megatron-core\nnccl_version: ") + v, "v.yaml");
    CHECK(f.stack.nccl_version == 22602);
  }
}

TEST_CASE("cost_model: a bad stack file names the file, the key and the problem", "[cost_model][stack_io]") {
  // Each file gives every one of its messages at once, as "FILE:LINE:COL: key: problem".
  struct Case {
    const char* file;
    std::vector<std::string> messages;
  };
  const Case c = GENERATE(values<Case>({
      {"stack_unknown_key.yaml",
       {"4:1: kernel_gap_us: unknown key", "7:5: attention.hopper.forward_eff: unknown key",
        "8:3: attention.hoper: unknown architecture (the base has: volta, ampere, hopper, blackwell)",
        "11:15: sources.kernel_gap: names no field of the stack"}},
      {"stack_negative.yaml",
       {"4:15: kernel_gap_s: must be >= 0, got -2e-06", "5:16: reserve_bytes: '.nan' is not a number",
        "6:20: host_per_kernel_s: '.inf' is not a number", "7:28: kernels_per_layer_forward: must be in [1, 1e+06], got 0",
        "8:22: cp_kernels_per_step: must be in [1, 1e+06], got -3", "9:16: fragmentation: must be >= 1, got 0.9",
        "12:25: attention.ampere.forward_efficiency: must be in [0, 1], got 1.5",
        "14:25: attention.hopper.forward_efficiency: must be > 0 for a fused kernel"}},
      {"stack_wrong_types.yaml",
       {"4:15: kernel_gap_s: '1.5 us' is not a number", "5:28: kernels_per_layer_forward: '12.5' is not an integer",
        "6:10: dropout: 'maybe' is not a boolean", "7:15: nccl_version: '3.1' is not an NCCL version",
        "8:13: grad_bytes: expected a single value", "9:12: attention: expected a mapping",
        "10:12: framework: unknown framework 'megatron' (known: megatron-lm, torchtitan, pytorch, deepspeed, "
        "megatron-deepspeed, nanotron)"}},
      // The rest of the file is still checked against the default preset.
      {"stack_bad_base.yaml",
       {"3:7: base: unknown preset 'pytorch-fsdp3' (known: deepspeed-zero, megatron-core, "
        "megatron-deepspeed, megatron-lm-2021, megatron-lm-2022, nanotron, pytorch-fsdp, pytorch-fsdp2, pytorch-fsdp2-eager, "
        "torchtitan)",
        "4:13: grad_bytes: must be >= 0, got -4"}},
      {"stack_missing_base.yaml",
       {"2:1: schema_version: required key is missing", "2:1: base: required key is missing"}},
  }));
  INFO(c.file);
  const std::string path = Invalid(c.file);
  const std::string e = ErrorText([&] { LoadSoftwareStack(path); });
  for (const std::string& m : c.messages) CHECK_THAT(e, Contains(path + ":" + m));
}

TEST_CASE("cost_model: a missing or broken stack file is an input error", "[cost_model][stack_io]") {
  CHECK_THAT(ErrorText([] { LoadSoftwareStack("no/such/stack.yaml"); }),
             Contains("no/such/stack.yaml") && Contains("cannot read"));
  const TempFile junk("junk.yaml", "base: [pytorch-fsdp\n");
  CHECK_THAT(ErrorText([&] { LoadSoftwareStack(junk.path.string()); }), Contains("invalid YAML"));
  const TempFile list("list.yaml", "- 1\n- 2\n");
  CHECK_THAT(ErrorText([&] { LoadSoftwareStack(list.path.string()); }), Contains("expected a mapping"));
}

TEST_CASE("cost_model: an unknown stack name lists the presets and says a file is accepted", "[cost_model]") {
  const std::string e = ErrorText([] { LoadSoftwareStack("jax-pjit"); });
  CHECK_THAT(e, Contains("stack: unknown software stack 'jax-pjit'"));
  CHECK_THAT(e, Contains("deepspeed-zero, megatron-core, megatron-deepspeed, megatron-lm-2021, megatron-lm-2022, nanotron, pytorch-fsdp"));
  CHECK_THAT(e, Contains("YAML file"));
}

TEST_CASE("cost_model: the stack's registry round-trips every field and fires outside every range",
          "[cost_model][registry]") {
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  // + fp8/fp4_param_gather, saves_quantized_inputs, fp32_matmul_tf32, quantized_weight_cache,
  //   supports_cp_p2p/a2a/allgather, pp_host_synchronous, host_per_micro_batch_s, tp_comm_overlap,
  //   tp_overlap_gemm_slowdown, swiglu_saves_input_only, supports_partial_recompute,
  //   pp_balance_by_compute, supports_cp_a2a_p2p, pp_interleaved_full_warmup, repeats_kv_heads,
  //   vocab_parallel_logits_bytes_per_element, tp_saves_gathered_head_input, sac_keeps_unread_outputs,
  //   vocab_parallel_peak_excludes_logits, ddp_bucket_bytes, zero1_gather_flat_bytes, tp_gather_buffers,
  //   pp_balance_close_at_threshold, query_keeps_packed_qkv, tp_backward_overlap,
  //   pp_transfers_per_micro_batch, pp_tp_gathers_per_micro_batch, zero1_grad_allreduce,
  //   dp_overlap_per_chunk, fp8_split_accum_fprop/dgrad/wgrad, pp_overlap_p2p, pp_keeps_boundary_tensors,
  //   pp_merges_last_stage_outputs, sp_grad_bytes, grad_norm_allreduce, embedding_grads_after_backward,
  //   tp_pending_collective_inputs, zero1_grad_reduce_after_backward, unsharded_step_bytes_per_param,
  //   nvfp4_bf16_layer_share, tp_overlap_backward_reductions, fp8_tp_gathers, tp_overlap_rs_local_reduce,
  //   cp_kv_pack_bytes_per_step, cp_dkv_pack_bytes_per_step, cp_allgather_ring_loop
  REQUIRE(StackFields().size() == 105);
  REQUIRE(AttentionFields().size() == 7);
  for (const StackField& f : StackFields()) {
    INFO(f.key);
    const double in = f.unit == FieldUnit::kFlag ? 1.0 : f.range.min + 1;
    f.set(s, in);
    CHECK(f.get(s) == in);
    CHECK_FALSE(RangeProblem(f.range, f.unit, f.range.min).has_value());
    CHECK(RangeProblem(f.range, f.unit, f.unit == FieldUnit::kFlag ? 2.0 : f.range.min - (f.range.integer ? 1 : 1e-9))
              .has_value());
    CHECK(RangeProblem(f.range, f.unit, std::nan("")).has_value());
  }
  CHECK(ValidateSoftwareStack(LoadSoftwareStack("megatron-core"), "").empty());
  s.attention_by_arch.front().second.forward_efficiency = 1.5;
  const auto issues = ValidateSoftwareStack(s, "s.yaml");
  REQUIRE(!issues.empty());
  CHECK(issues.front().key == "attention." + s.attention_by_arch.front().first + ".forward_efficiency");
}

