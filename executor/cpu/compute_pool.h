// Where a rank's computations run. A CPU stream is a thread, and a rank may
// have more streams computing at once than it has cores. Left to the OS,
// all of them would be time-sliced: chunk 0 would finish last instead of
// first, and its communication could not start early. So computations run
// on a pool of `threads` threads, one per core the rank may use, started
// strictly in the order the host issued them, as a GPU starts kernels.
// Every wait in a program is on earlier-issued work, so starting earlier
// work first never deadlocks. (Running the pool at a lower priority than
// the stream threads, so that communications preempt GEMMs, measured no
// better on 2 cores; README "Performance".)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace hostir::cpu {

class ComputePool {
 public:
  using Clock = std::chrono::steady_clock;
  struct Span {
    Clock::time_point start, end;
  };

  // `threads` <= 0: no pool; run() calls the job on the caller's thread.
  explicit ComputePool(int threads);
  ~ComputePool();
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  // Host side: the next ticket, in issue order.
  uint64_t nextTicket() { return issued_++; }
  // Stream side: runs `job` once every earlier ticket has started and a
  // pool thread is free; blocks until it is done and returns when it ran.
  // nullopt when the pool was aborted before the job started. Rethrows
  // what the job threw.
  std::optional<Span> run(uint64_t ticket, const std::function<void()>& job);
  // A failed rank drops its queued tasks, so their tickets never arrive:
  // release every waiting stream and start nothing more.
  void abort();
  // Before a run, with every stream idle: tickets start again from 0.
  void reset();

 private:
  struct Job {
    const std::function<void()>* body = nullptr;
    bool done = false;
    Span span;
    std::exception_ptr error;
  };
  void work();

  std::mutex mutex_;
  std::condition_variable jobsChanged_;  // workers wait here
  std::condition_variable jobDone_;      // streams wait here
  std::map<uint64_t, Job*> waiting_;     // by ticket; guarded by mutex_
  uint64_t nextStart_ = 0;               // guarded by mutex_
  bool aborted_ = false;                 // guarded by mutex_
  bool stopping_ = false;                // guarded by mutex_
  uint64_t issued_ = 0;                  // host only
  std::vector<std::thread> workers_;
};

}  // namespace hostir::cpu
