// parasim: dispatches to the registered subcommands and maps failures to the
// exit codes of docs/exit-codes.md (cli/exit_codes.h). The only place that prints.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output/writers.h"
#include "facade/report_provenance.h"
#include "parasim/error.h"

namespace parasim::cli {

std::vector<RegisteredCommand>& Registry() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

CommandRegistration::CommandRegistration(std::string name, std::string description, CommandSetup setup) {
  Registry().push_back({std::move(name), std::move(description), std::move(setup)});
}

Format OutputOptions::Parsed() const {
  if (format == "json") return Format::kJson;
  if (format == "csv") return Format::kCsv;
  return Format::kTable;
}

void AddOutputOptions(CLI::App& cmd, OutputOptions& out, bool csv_allowed) {
  std::vector<std::string> formats = {"table", "json"};
  if (csv_allowed) formats.push_back("csv");
  cmd.add_option("--format", out.format, "Output format")->check(CLI::IsMember(formats))->capture_default_str();
  cmd.add_option("-o,--output", out.output_file, "Write to FILE (whole or not at all) instead of stdout");
}

namespace {

// The temporary file being written, for the signal handler: SIGINT/SIGTERM
// while writing remove it, so no partial file is left (the target is only
// ever replaced by rename, whole).
char g_temp_path[4200] = "";

extern "C" void RemoveTempAndDie(int sig) {
  if (g_temp_path[0] != '\0') ::unlink(g_temp_path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct TempGuard {
  explicit TempGuard(const std::string& path) {
    if (path.size() < sizeof g_temp_path) std::memcpy(g_temp_path, path.c_str(), path.size() + 1);
    std::signal(SIGINT, RemoveTempAndDie);
    std::signal(SIGTERM, RemoveTempAndDie);
  }
  ~TempGuard() {
    g_temp_path[0] = '\0';
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
};

// A JSON report (an object) begins with its provenance (facade/report_provenance.h).
std::string WithProvenance(const OutputOptions& out, const std::string& text) {
  if (out.Parsed() != Format::kJson || text.rfind("{\n", 0) != 0) return text;
  return "{\n" + ProvenanceMembers() + ",\n" + text.substr(2);
}

}  // namespace

void WriteOutput(const OutputOptions& out, const std::string& report) {
  if (OutputSuppressed()) return;
  const std::string text = WithProvenance(out, report);
  if (out.output_file.empty() || out.output_file == "-") {   // "-o -": stdout
    std::cout << text;
    std::cout.flush();
    return;
  }
  namespace fs = std::filesystem;
  const fs::path target(out.output_file);
  fs::path tmp = target;
  tmp += ".parasim-tmp";
  const TempGuard guard(tmp.string());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw InvalidInput(out.output_file, "-o", "cannot open for writing");
    f << text;
    f.flush();
    if (!f) {
      f.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InvalidInput(out.output_file, "-o", "write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InvalidInput(out.output_file, "-o", "cannot move the finished file into place");
  }
}

void WriteReport(const OutputOptions& out, const CommandReport& report) {
  WriteOutput(out, report.format == Format::kJson ? WriteJson(report.json) + "\n" : report.text);
}

}  // namespace parasim::cli

bool& parasim::cli::OutputSuppressed() {
  static bool suppressed = false;
  return suppressed;
}

int parasim::cli::RunCli(int argc, char** argv) {
  using namespace parasim;
  CLI::App app{"parasim: plan and predict LLM training parallelism on GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("parasim ") + ParasimVersion());

  auto& registry = cli::Registry();
  std::sort(registry.begin(), registry.end(),
            [](const cli::RegisteredCommand& a, const cli::RegisteredCommand& b) { return a.name < b.name; });
  std::map<CLI::App*, std::function<void()>> actions;
  for (auto& c : registry) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    actions[sub] = c.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream sink;   // a follower rank (parasim-mpi) leaves the messages to rank 0
    const int code = cli::OutputSuppressed() ? app.exit(e, sink, sink) : app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitBadInput;  // a bad flag or value is bad input
  }

  try {
    for (auto& [sub, action] : actions) {
      if (sub->parsed()) action();
    }
  } catch (const cli::ExitWith& e) {   // a command that ran and reports through its exit code
    return e.code;
  } catch (const std::exception& e) {
    const int code = cli::ExitCodeOf(e);
    const char* what = code == cli::kExitInternal                ? "internal error"
                       : dynamic_cast<const NoAnswer*>(&e) != nullptr ? "no answer"
                                                                      : "error";
    if (!cli::OutputSuppressed() || code == cli::kExitInternal) std::cerr << "parasim: " << what << ": " << e.what() << "\n";
    return code;
  }
  return 0;
}
