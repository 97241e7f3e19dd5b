// Progress of long runs on stderr: "plan: 41200 / 98304 configs (42%), about
// 12 s left", shown only once a run has taken ~2 s, only when stderr is a
// terminal, never with --quiet, in JSON mode or on parasim-mpi's follower
// ranks. It rewrites one line and clears it at the end.
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
  // `unit` names what is counted ("configs", "points", "plans").
  ProgressLine(std::string what, bool enabled, std::string unit = "configs");
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Thread-safe; throttled to a few updates a second.
  void Update(int64_t done, int64_t total);
  // A callback for planner::PlanOptions (progress, sweep_progress, rescore_progress).
  std::function<void(int64_t, int64_t)> Callback();

  // Whether progress may be shown at all: stderr is a terminal, not quiet, not JSON.
  static bool Wanted(bool quiet, bool json);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  std::string unit_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_;
  // The rate behind the ETA is measured from the first update, so a line
  // made before a later phase (re-scoring after the search) estimates that phase alone.
  bool counting_ = false;
  Clock::time_point first_;
  int64_t first_done_ = 0;
  std::mutex mutex_;
};

}  // namespace parasim::cli
