// The built-in model shapes (llama2-7b, ...), in a fixed order.
#pragma once

#include <vector>

#include "core/model_spec.h"

namespace parasim {

const std::vector<ModelSpec>& ModelPresets();

}  // namespace parasim
