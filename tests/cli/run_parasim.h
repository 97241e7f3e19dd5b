// Runs the parasim executable for CLI tests, capturing stdout, stderr and the exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace parasim_test {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `parasim ARGS` (ARGS is shell text), stdout and stderr kept apart.
inline Run Parasim(const std::string& args) {
  static int calls = 0;
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() /
      ("parasim_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".err");
  const std::string cmd = std::string(PARASIM_BINARY) + " " + args + " 2>" + err_file.string();
  Run r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

// A JSON report without its `inputs` (file names and hashes): for comparing
// the results of runs that read the same numbers from different files.
inline std::string WithoutInputs(const std::string& json_text) {
  if (json_text.rfind("{", 0) != 0) return json_text;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(json_text);
  j.erase("inputs");
  return j.dump(2);
}

}  // namespace parasim_test
