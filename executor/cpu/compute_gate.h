// Admission of a rank's computations (and communications, which are CPU
// work too) to its cores. A CPU stream is a
// thread, and a rank may have more streams computing at once than it has
// cores. Left to the OS, all of them would be time-sliced: chunk 0 would
// finish last instead of first, and its communication could not start
// early. The gate lets `slots` computations run at once (one per core the
// rank may use), started strictly in the order the host issued them, as a
// GPU starts kernels. Every wait in a program is on earlier-issued work, so
// starting earlier work first never deadlocks. A computation runs on its
// own stream's thread: no hand-off, so tiny operations stay cheap.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "executor/cpu/ticket_waiters.h"

namespace hostir::cpu {

class ComputeGate {
 public:
  using Clock = std::chrono::steady_clock;
  struct Span {
    Clock::time_point start, end;
  };

  // `slots` <= 0: no limit; every computation runs at once.
  explicit ComputeGate(int slots) : slots_(slots), free_(slots) {}

  // Host side: the next ticket, in issue order.
  uint64_t nextTicket() { return issued_++; }
  // Stream side: runs `job` on the calling thread once every earlier ticket
  // has started and a slot is free; returns when it ran. nullopt when the
  // gate was aborted before the job could start.
  std::optional<Span> run(uint64_t ticket, const std::function<void()>& job);
  // A failed rank drops its queued tasks, so their tickets never arrive:
  // release every waiting stream and start nothing more.
  void abort();
  // Before a run, with every stream idle: tickets start again from 0.
  void reset();

 private:
  bool enter(uint64_t ticket);
  void leave();
  // Wakes the waiter whose ticket starts next, if a slot is free; called with mutex_ held.
  void wakeNext();

  const int slots_;
  std::mutex mutex_;
  TicketWaiters waiters_;   // guarded by mutex_
  int free_;                // guarded by mutex_
  uint64_t nextStart_ = 0;  // guarded by mutex_
  bool aborted_ = false;    // guarded by mutex_
  uint64_t issued_ = 0;     // host only
};

}  // namespace hostir::cpu
