// Each subcommand lives in its own cli/cmd_*.cc and registers itself here, so
// main.cc stays a dispatcher and subcommands do not touch each other's files.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "facade/command_report.h"

namespace parasim::cli {

using Format = ::parasim::ReportFormat;

// Options every report-printing command shares.
struct OutputOptions {
  std::string format = "table";
  std::string output_file;   // "" = stdout
  Format Parsed() const;
};
void AddOutputOptions(CLI::App& cmd, OutputOptions& out, bool csv_allowed = true);

// Writes text to -o FILE atomically (temp file + rename) or to stdout.
void WriteOutput(const OutputOptions& out, const std::string& text);
// Writes a command's report: JSON through cli/output's writer, else its text.
void WriteReport(const OutputOptions& out, const CommandReport& report);

// The whole command line (the program's main and parasim-mpi's run this).
int RunCli(int argc, char** argv);

// True on the follower ranks of parasim-mpi: they score their share of the
// search and print nothing; rank 0 prints and writes every file.
bool& OutputSuppressed();

// A command's setup: add options to `cmd`, return the action to run.
using CommandSetup = std::function<std::function<void()>(CLI::App& cmd)>;

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup);
};

struct RegisteredCommand {
  std::string name;
  std::string description;
  CommandSetup setup;
};
std::vector<RegisteredCommand>& Registry();

}  // namespace parasim::cli
