// The command-line parser: every subcommand's flags, as main() builds them
// (cli/*.cc compiled in, without cli/entry.cc's main), parsed but not run.
// Input: arguments separated by newlines.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"parasim"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else if (data[i] != '\0') {
      cur += static_cast<char>(data[i]);
    }
  }
  args.push_back(cur);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());

  CLI::App app{"parasim"};
  app.require_subcommand(1);
  std::vector<std::function<void()>> actions;
  for (auto& c : parasim::cli::Registry()) actions.push_back(c.setup(*app.add_subcommand(c.name, c.description)));
  parasim_fuzz::ExpectValueOrInvalidInput([&] {
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError&) {   // a usage error: main prints it and exits 2
    }
  });
  return 0;
}
