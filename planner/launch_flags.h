// Launch settings for a chosen plan in the framework the user runs:
// Megatron-LM arguments, a torchtitan TOML fragment, or a DeepSpeed config
// JSON. Where a framework lacks a mode the plan uses, a note says what the
// nearest setting is.
#pragma once

#include <string>
#include <vector>

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack.h"

namespace parasim::planner {

// kTorchtitan: the current registered-config torchtitan (--section.field
// overrides); kTorchtitanToml: v0.2.2, the last release with TOML job files.
enum class Framework { kMegatron, kTorchtitan, kTorchtitanToml, kDeepSpeed };
// "megatron" | "torchtitan" | "torchtitan@0.2" | "deepspeed"; throws parasim::Error naming `where`.
Framework ParseFramework(const std::string& text, const std::string& where = "--emit");
const char* ToString(Framework f);

struct LaunchFlags {
  Framework framework = Framework::kMegatron;
  std::string text;                 // arguments / TOML / JSON, ready to paste
  std::vector<std::string> notes;   // approximations and what to set by hand
  std::string target;               // framework revision the output is checked against
};

// The Megatron-LM revision whose argument definitions the emitter follows
// (tests/testdata/frameworks/megatron_lm_args.tsv).
inline constexpr const char* kTorchtitanCommit = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a";
inline constexpr const char* kTorchtitanTomlCommit = "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce";   // v0.2.2
inline constexpr const char* kDeepSpeedCommit = "edaa7221267243c7be7fb49c5d5f5c4fb97b4641";
inline constexpr const char* kMegatronLmCommit = "d98e8a64ddf34856e74b24714e3bedb2f5a39553";
// Megatron pads the vocabulary to a multiple of --make-vocab-size-divisible-by × tp
// (megatron/training/tokenizer: _vocab_size_with_padding); 128 is its default.
inline constexpr int kMegatronVocabDivisor = 128;
int64_t MegatronPaddedVocab(int64_t vocab, int tp);

// The stack is the framework (issue 15 part 4). The preset `--emit` assumes
// when no stack is chosen: megatron -> megatron-core; torchtitan and
// torchtitan@0.2 -> torchtitan; deepspeed -> deepspeed-zero.
const char* CurrentStackPreset(Framework f);
// Whether a stack of `stack_framework` (SoftwareStack::framework) launches
// with `f`'s settings: megatron-lm -> megatron; torchtitan and pytorch (a
// plain FSDP/FSDP2 loop, launched by torchtitan) -> torchtitan, torchtitan@0.2;
// deepspeed and megatron-deepspeed (its ZeRO config) -> deepspeed; nanotron -> none.
bool StackFitsEmitter(const std::string& stack_framework, Framework f);
// Throws InvalidInput (exit 2) naming the stack, its framework and the
// emitter when they differ; otherwise returns a note for the output where the
// settings are the framework's nearest launcher ("" when none is needed).
std::string CheckStackFitsEmitter(const std::string& stack_name, const std::string& stack_framework, Framework f,
                                  const std::string& where = "--emit");

// `nvfp4_bf16_layer_share`: the stack's SoftwareStack::nvfp4_bf16_layer_share,
// the BF16 blocks an fp4 job's Megatron-LM arguments keep.
LaunchFlags EmitLaunchFlags(Framework framework, const ParallelConfig& config, const ModelSpec& model,
                            const JobSpec& job, double nvfp4_bf16_layer_share = kNvfp4Bf16LayerShare);

}  // namespace parasim::planner
