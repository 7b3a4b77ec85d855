// A CPU stream: one worker thread running its queue of tasks in issue
// order. Positions count tasks: an event at position p is reached once the
// first p tasks have run, which is all other streams ever wait for.
//
// The thread starts with the first task: a pool of 1024 streams that a
// program uses two of costs two threads, not 1024 (each thread reserves a
// stack, and 8 ranks of 1024 idle threads took 1.8 GB). A stream that never
// started has reached position 0, the only one anybody can wait for on it.
//
// The host issues an operation in well under a microsecond, so the queue
// keeps the cost of a handoff off that path: the host wakes the worker only
// when it is asleep, the worker takes everything queued under one lock,
// and progress is announced with an atomic store plus a notification only
// when a waiting thread's position is reached.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "executor/delay_injection.h"
#include "runtime/backend.h"

namespace hostir::cpu {

class CpuStream : public Stream {
 public:
  using Task = std::function<void()>;
  // `skip` tells whether to drop tasks (after a failure); `onFailure` gets what a task threw.
  CpuStream(int slot, DelayInjection delays, std::function<bool()> skip,
            std::function<void(std::exception_ptr)> onFailure);
  ~CpuStream() override;
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;

  int slot() const override { return slot_; }

  // Host side (one thread): queues a task, starting the worker thread at
  // the first, and returns the position just after it.
  uint64_t enqueue(Task task);
  // Whether the worker thread was started (host side).
  bool started() const { return worker_.joinable(); }
  // The position just after the last task issued so far (host side).
  uint64_t issued() const { return issued_; }
  // Blocks the calling thread until the first `position` tasks have run.
  void waitFor(uint64_t position);
  bool reached(uint64_t position) const { return completed_.load(std::memory_order_acquire) >= position; }

 private:
  void run();
  // Worker side: the next tasks to run, in order; empty once stopping and drained.
  void takeQueued(std::vector<Task>& batch);
  void announceCompleted(uint64_t completed);

  const int slot_;
  DelayInjection delays_;
  std::function<bool()> skip_;
  std::function<void(std::exception_ptr)> onFailure_;

  std::mutex mutex_;
  std::condition_variable workAvailable_;
  std::condition_variable progress_;
  std::vector<Task> queue_;    // guarded by mutex_
  bool workerAsleep_ = false;  // guarded by mutex_: the worker waits on workAvailable_
  bool stopping_ = false;      // guarded by mutex_
  // Written by the worker only; read anywhere.
  std::atomic<uint64_t> completed_{0};
  // The lowest position a waiter sleeps for (max: nobody sleeps). Lowered
  // by waiters and reset by the worker, both under mutex_, so that the
  // worker notifies once that position is reached rather than after every task.
  std::atomic<uint64_t> wakeAt_{std::numeric_limits<uint64_t>::max()};
  uint64_t issued_ = 0;  // touched by the issuing host thread only
  std::thread worker_;   // started by the first enqueue; touched by the host only
};

}  // namespace hostir::cpu
