#include "tools/hostir/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace hostir::tool {

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

bool ProgressThrottle::due(std::chrono::steady_clock::duration elapsed) {
  if (elapsed < settings_.delay) return false;
  if (lastDrawn_ && elapsed - *lastDrawn_ < settings_.interval) return false;
  lastDrawn_ = elapsed;
  return true;
}

std::string redrawnLine(std::string_view text, size_t previousWidth) {
  // Spaces, not an ANSI erase: any terminal, however plain, shows it right.
  std::string line = "\r" + std::string(text);
  if (text.size() < previousWidth) line += std::string(previousWidth - text.size(), ' ');
  return line;
}

std::string erasedLine(size_t width) { return "\r" + std::string(width, ' ') + "\r"; }

std::string runProgressText(int run, int warmup, int repeat, double seconds) {
  if (run < 0 || warmup + repeat <= 1) return fmt::format("run: {:.1f} s", seconds);
  if (run < warmup) return fmt::format("run: warmup {}/{}, {:.1f} s", run + 1, warmup, seconds);
  return fmt::format("run: repetition {}/{}, {:.1f} s", run - warmup + 1, repeat, seconds);
}

namespace {

void writeToStderr(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressTicker::ProgressTicker(Describe describe, ProgressSettings settings, Write write)
    : describe_(std::move(describe)), settings_(settings), write_(write ? std::move(write) : writeToStderr) {
  thread_ = std::thread([this] { loop(); });
}

void ProgressTicker::loop() {
  const auto start = std::chrono::steady_clock::now();
  ProgressThrottle throttle(settings_);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (throttle.due(elapsed)) {
      const std::string text = describe_(std::chrono::duration<double>(elapsed).count());
      write_(redrawnLine(text, width_));
      width_ = std::max(width_, text.size());
    }
    // The first wake-up is at the delay: a short command costs one sleep.
    const auto next = elapsed < settings_.delay ? settings_.delay - elapsed : settings_.interval;
    wake_.wait_for(lock, next, [this] { return stopping_; });
  }
}

void ProgressTicker::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  // What comes next starts at the beginning of a clean line.
  if (width_ > 0) write_(erasedLine(width_));
}

RunProgress::RunProgress(bool show, int warmup, int repeat, ProgressSettings settings) {
  if (!show) return;
  ticker_.emplace(
      [this, warmup, repeat](double seconds) { return runProgressText(run_.load(), warmup, repeat, seconds); },
      settings);
}

void RunProgress::atRun(int run, bool started) {
  if (!started) return;
  // Ranks reach run i together; the most advanced one is shown.
  int seen = run_.load();
  while (seen < run && !run_.compare_exchange_weak(seen, run)) {
  }
}

void RunProgress::stop() { ticker_.reset(); }

}  // namespace hostir::tool
