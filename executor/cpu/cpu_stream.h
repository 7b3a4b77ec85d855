// A CPU stream: one worker thread running its queue of tasks in issue
// order. Positions count tasks: an event at position p is reached once the
// first p tasks have run, which is all other streams ever wait for.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

#include "executor/backend.h"

namespace hostir::cpu {

// Random sleeps before tasks, to shake out orderings that only luck provides.
struct DelayInjection {
  uint32_t maxMicros = 0;  // 0: off
  uint64_t seed = 0;
};

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

  // Host side: queues a task and returns the position just after it.
  uint64_t enqueue(Task task);
  // The position just after the last task issued so far (host side).
  uint64_t issued() const { return issued_; }
  // Blocks the calling thread until the first `position` tasks have run.
  void waitFor(uint64_t position);
  bool reached(uint64_t position);

 private:
  void run();

  const int slot_;
  DelayInjection delays_;
  std::function<bool()> skip_;
  std::function<void(std::exception_ptr)> onFailure_;
  std::mt19937_64 rng_;

  std::mutex mutex_;
  std::condition_variable workAvailable_;
  std::condition_variable progress_;
  std::deque<Task> queue_;
  uint64_t completed_ = 0;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  uint64_t issued_ = 0;     // touched by the issuing host thread only
  std::thread worker_;
};

}  // namespace hostir::cpu
