// Progress line on stderr (see progress.h).
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include "cli/command.h"

namespace parasim::cli {
namespace {
constexpr std::chrono::seconds kShowAfter{2};               // short runs stay silent
constexpr std::chrono::milliseconds kMinInterval{250};       // at most 4 redraws a second
}  // namespace

ProgressLine::ProgressLine(std::string what, bool enabled, std::string unit)
    : what_(std::move(what)), unit_(std::move(unit)), enabled_(enabled) {}

ProgressLine::~ProgressLine() {
  if (shown_) std::fprintf(stderr, "\r\033[K");   // leave the terminal as it was
}

bool ProgressLine::Wanted(bool quiet, bool json) {
  return !quiet && !json && !OutputSuppressed() && ::isatty(STDERR_FILENO) == 1;
}

void ProgressLine::Update(int64_t done, int64_t total) {
  if (!enabled_ || total <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const Clock::time_point now = Clock::now();
  if (!counting_) {
    counting_ = true;
    first_ = now;
    first_done_ = done;
  }
  if (done >= total) {   // finished: clear the line before the report is printed
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
    return;
  }
  if (now - start_ < kShowAfter || (shown_ && now - last_ < kMinInterval)) return;
  last_ = now;
  shown_ = true;
  const double elapsed = std::chrono::duration<double>(now - first_).count();
  const int64_t gained = done - first_done_;
  char eta[64] = "";
  if (gained > 0 && elapsed > 0) {
    std::snprintf(eta, sizeof eta, ", about %.0f s left", elapsed * static_cast<double>(total - done) / gained);
  }
  std::fprintf(stderr, "\r\033[K%s: %lld / %lld %s (%.0f%%)%s", what_.c_str(), static_cast<long long>(done),
               static_cast<long long>(total), unit_.c_str(), 100.0 * done / total, eta);
  std::fflush(stderr);
}

std::function<void(int64_t, int64_t)> ProgressLine::Callback() {
  return [this](int64_t done, int64_t total) { Update(done, total); };
}

}  // namespace parasim::cli
