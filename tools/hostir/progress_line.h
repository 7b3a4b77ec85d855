// A progress line on a terminal: a long command's status on stderr,
// rewritten in place (`\r`) by a ticker thread. It appears only once the
// command has lasted `delay` (short runs print nothing new), changes at most
// every `interval`, and is erased before the command prints anything else.
// The caller decides whether to show it at all: only on a terminal
// (stderrIsTerminal()), so that pipes, files, CI and tests see nothing, and
// only on rank 0 under mpirun (whose ranks mostly get a pipe as stderr).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace hostir::tool {

struct ProgressSettings {
  std::chrono::milliseconds delay{2000};    // nothing for commands shorter than this
  std::chrono::milliseconds interval{250};  // the most often the line changes
};

// Whether standard error is a terminal (a person watching, not a pipe).
bool stderrIsTerminal();

// When a line is due: not before `delay`, then at most once per `interval`.
class ProgressThrottle {
 public:
  explicit ProgressThrottle(ProgressSettings settings) : settings_(settings) {}
  // Whether to draw at `elapsed` since the start; true records a drawing.
  bool due(std::chrono::steady_clock::duration elapsed);

 private:
  ProgressSettings settings_;
  std::optional<std::chrono::steady_clock::duration> lastDrawn_;
};

// What the terminal is sent to replace a line `previousWidth` wide with
// `text` (padded with spaces over the old one's tail), and to erase it.
std::string redrawnLine(std::string_view text, size_t previousWidth);
std::string erasedLine(size_t width);

// `hostir run`'s line: "run: 4.2 s" for a single run, otherwise the warmup
// or timed repetition under way ("run: repetition 3/10, 4.2 s"); `run` is
// the 0-based index of the run under way (warmups first), -1 before the
// first starts.
std::string runProgressText(int run, int warmup, int repeat, double seconds);

// The ticker thread: every `interval` it asks `describe` for the text at
// the seconds elapsed and draws it when due. stop() (or the destructor)
// joins the thread and erases the line if one was drawn.
class ProgressTicker {
 public:
  using Describe = std::function<std::string(double seconds)>;
  using Write = std::function<void(std::string_view)>;
  // `write` defaults to standard error, flushed.
  ProgressTicker(Describe describe, ProgressSettings settings = {}, Write write = nullptr);
  ~ProgressTicker() { stop(); }
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;
  void stop();

 private:
  void loop();

  Describe describe_;
  ProgressSettings settings_;
  Write write_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  size_t width_ = 0;       // the ticker thread's, read after the join
  std::thread thread_;
};

// `hostir run`'s progress: when `show`, ticks until stop(), which erases the
// line, showing the latest run that atRun (the ranks call it from their
// threads, hence the atomic) was told started; otherwise does nothing.
class RunProgress {
 public:
  RunProgress(bool show, int warmup, int repeat, ProgressSettings settings = {});
  ~RunProgress() { stop(); }
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  // A run's index (warmups first), before its start (started false) and as it starts.
  void atRun(int run, bool started);
  // The run shown: the latest any rank started, -1 before the first.
  int runShown() const { return run_.load(); }
  void stop();

 private:
  std::atomic<int> run_{-1};
  std::optional<ProgressTicker> ticker_;
};

}  // namespace hostir::tool
