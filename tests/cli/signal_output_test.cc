// Safe output under signals: a long `parasim plan -o FILE` stopped by SIGINT
// or SIGTERM leaves neither FILE nor a temporary beside it, and its status is
// the signal's (killed by it, or exit 128+sig). `-o -` writes to stdout.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "run_parasim.h"

namespace fs = std::filesystem;

namespace {

// A plan that runs for minutes: every placement order on 8,192 GPUs, one thread.
pid_t StartLongPlan(const fs::path& output) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string out = output.string();
    ::execl(PARASIM_BINARY, "parasim", "plan", "--model", "llama3-70b", "--nodes", "1024", "--global-batch", "8192",
            "--constrain", "order=any", "--threads", "1", "--quiet", "--format", "json", "-o", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Sends `sig` once the plan is under way and returns its wait status.
int StopWith(pid_t pid, int sig) {
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  REQUIRE(::kill(pid, sig) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

void CheckStoppedBy(int status, int sig) {
  INFO("wait status " << status);
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == sig;
  const bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig;
  CHECK((killed || exited));
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("parasim_signal_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("cli: SIGINT during a plan leaves no output and no temporary file", "[cli][signal]") {
  const fs::path dir = FreshDir("int");
  const pid_t pid = StartLongPlan(dir / "plan.json");
  REQUIRE(pid > 0);
  CheckStoppedBy(StopWith(pid, SIGINT), SIGINT);
  CHECK(fs::is_empty(dir));   // neither plan.json nor plan.json.parasim-tmp
  fs::remove_all(dir);
}

TEST_CASE("cli: SIGTERM during a plan leaves no output and no temporary file", "[cli][signal]") {
  const fs::path dir = FreshDir("term");
  const pid_t pid = StartLongPlan(dir / "plan.json");
  REQUIRE(pid > 0);
  CheckStoppedBy(StopWith(pid, SIGTERM), SIGTERM);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("cli: -o - writes the report to stdout and no file", "[cli][signal]") {
  const fs::path dir = FreshDir("stdout");
  const std::string cd = "cd '" + dir.string() + "' && ";
  // Run from inside the folder, so a file named "-" would appear there.
  const std::string cmd = "--version >/dev/null; " + cd + PARASIM_BINARY +
                          " plan --model llama2-7b --nodes 1 --global-batch 64 --top 1 --quiet --format json -o -";
  const parasim_test::Run r = parasim_test::Parasim(cmd);
  CHECK(r.code == 0);
  REQUIRE(r.out.rfind("{", 0) == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j.contains("plans"));
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}
