// The inputs most commands share: --model, --cluster with --nodes/--gpus,
// --global-batch, --seq-len, --stack, --job: the flags; facade/spec_inputs.h loads them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "facade/spec_inputs.h"

namespace parasim::cli {

using SpecOptions = ::parasim::SpecInputs;

// Adds the flags; `need_batch`: the command needs a global batch (from
// --global-batch or --job), checked by LoadJobSpec.
void AddSpecOptions(CLI::App& cmd, SpecOptions& spec, bool need_batch = true);

}  // namespace parasim::cli
