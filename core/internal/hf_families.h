// Hugging Face config.json layouts of current model families (Qwen2.5/3,
// Gemma 2/3, DeepSeek-V2/V3, Llama 4, gpt-oss): one reader per family.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/model_spec.h"

namespace parasim::internal {

class JsonFields;

// The fields every decoder-only config spells the same way (Llama layout:
// SwiGLU, RMSNorm, RoPE); `tied_default` where tie_word_embeddings is absent.
void ReadCommon(JsonFields& f, ModelSpec& m, bool tied_default);

// True when `family` (model_type) is one of these layouts; fills `m` and
// adds to `issues` what is missing or malformed.
bool LoadModernFamily(const nlohmann::json& root, const std::string& family, const std::string& path,
                      IssueList& issues, ModelSpec& m);

// The model_type values LoadModernFamily reads, for error messages.
const char* ModernFamilyNames();

}  // namespace parasim::internal
