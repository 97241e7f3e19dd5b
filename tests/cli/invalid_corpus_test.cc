// The bad-input corpus (tests/testdata/invalid/manifest.tsv): every case exits
// with its code, says what its row expects (the key path or file), and leaves
// no output file. Inputs that cannot live in git (devices, directories, huge
// and looping files) are made here.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "run_parasim.h"

namespace fs = std::filesystem;
using parasim_test::Parasim;

namespace {

struct CorpusCase {
  std::string name;
  int code = 0;
  std::string expect;
  std::string args;
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::vector<CorpusCase> ReadManifest(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<CorpusCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string col; std::getline(ss, col, '\t');) cols.push_back(col);
    REQUIRE(cols.size() == 4);
    cases.push_back({cols[0], std::stoi(cols[1]), cols[2], cols[3]});
  }
  return cases;
}

// A scratch folder for this test process, removed at the end.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("parasim_corpus_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void ExpectRejected(const std::string& name, const std::string& args, int code, const std::string& expect,
                    const fs::path& out) {
  INFO(name << ": parasim " << args);
  const auto r = Parasim(args);
  CHECK(r.code == code);
  CHECK_THAT(r.err, Catch::Contains(expect));
  CHECK_THAT(r.err, !Catch::Contains("internal error"));
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(out.string() + ".parasim-tmp"));
}

}  // namespace

TEST_CASE("cli: every case of the bad-input corpus exits 2 naming its key, writing nothing", "[cli][corpus]") {
  const std::string dir = std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/invalid";
  const std::vector<CorpusCase> cases = ReadManifest(dir + "/manifest.tsv");
  REQUIRE(cases.size() >= 100);
  Scratch scratch;
  const fs::path out = scratch.dir / "out.txt";
  std::map<std::string, int> per_kind;
  for (const CorpusCase& c : cases) {
    ++per_kind[c.name.substr(0, c.name.find_first_of("_."))];
    ExpectRejected(c.name, Replace(Replace(c.args, "{DIR}", dir), "{OUT}", out.string()), c.code, c.expect, out);
  }
  for (const auto& [kind, n] : per_kind) {
    INFO(kind);
    CHECK(n >= 5);
  }
}

TEST_CASE("cli: devices, directories, huge files, long names and symlink loops are bad input", "[cli][corpus]") {
  Scratch scratch;
  const fs::path out = scratch.dir / "out.txt";
  const std::string plan = "plan --global-batch 64 --nodes 1 -o " + out.string();
  // A sparse file past the 64 MiB input limit: nothing is read.
  const fs::path huge = scratch.dir / "huge.yaml";
  { std::ofstream(huge) << "name: x\n"; }
  fs::resize_file(huge, (uint64_t{64} << 20) + 1);
  const fs::path loop_a = scratch.dir / "loop_a.yaml", loop_b = scratch.dir / "loop_b.yaml";
  fs::create_symlink(loop_b, loop_a);
  fs::create_symlink(loop_a, loop_b);
  const fs::path subdir = scratch.dir / "adir.yaml";
  fs::create_directories(subdir);
  const std::string long_name = (scratch.dir / std::string(5000, 'a')).string() + ".yaml";
  const std::pair<std::string, std::string> cases[] = {
      {"--model /dev/zero", "is not a regular file"},
      {"--cluster /dev/zero", "is not a regular file"},
      {"--stack /dev/zero", "stack"},
      {"--job /dev/zero", "is not a regular file"},
      {"--model " + huge.string(), "more than the limit of 67108864"},
      {"--cluster " + huge.string(), "more than the limit of 67108864"},
      {"--model " + loop_a.string(), "--model"},
      {"--job " + loop_a.string(), "--job"},
      {"--model " + subdir.string(), "directory has no config.json"},
      {"--job " + subdir.string(), "is a directory"},
      {"--model " + long_name, "--model"},
      {"--cluster " + long_name, "--cluster"},
      {"--job " + long_name, "longer than 4096"},
  };
  for (const auto& [args, expect] : cases) ExpectRejected(args, plan + " " + args, 2, expect, out);
  ExpectRejected("trace /dev/zero", "calibrate import-trace --trace /dev/zero -o " + out.string(), 2,
                 "is not a regular file", out);
  ExpectRejected("nccl log dir", "calibrate import-nccl-tests " + subdir.string() + " -o " + out.string(), 2,
                 "adir.yaml", out);
}
