// Progress of long runs on stderr: "scored 41,200 / 98,304 configs, 12 s left",
// shown only once a run has taken ~2 s, only when stderr is a terminal, never
// with --quiet or in JSON mode. It rewrites one line and clears it at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace parasim::cli {

class ProgressLine {
 public:
  // `enabled` false (quiet, JSON, or not a terminal) makes every call a no-op.
  ProgressLine(std::string what, bool enabled);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Thread-safe; throttled to a few updates a second.
  void Update(int64_t done, int64_t total);
  // The planner's callback (planner::PlanOptions::progress).
  std::function<void(int64_t, int64_t)> Callback();

  // Whether progress may be shown at all: stderr is a terminal, not quiet, not JSON.
  static bool Wanted(bool quiet, bool json);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_;
  std::mutex mutex_;
};

}  // namespace parasim::cli
