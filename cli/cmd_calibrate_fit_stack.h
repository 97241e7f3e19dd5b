// `parasim calibrate fit-stack`: refit a software-stack profile to a
// profiler trace of one real training step (calibrate/stack_fit.h) and write
// it as a stack file (`--stack FILE` everywhere).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace parasim::cli {

// Adds the subcommand to `calibrate`; returns its action (run when parsed).
std::function<void()> AddFitStackSubcommand(CLI::App& calibrate);

}  // namespace parasim::cli
