// Threads waiting, under their owner's mutex, for a numbered turn (a gate
// ticket, a communication's place in issue order). Each waiter has its own
// condition variable, so that a change wakes only the thread whose turn it
// is: waking every waiter on each change would preempt the running work's
// core several times per operation and, through a communication's
// lockstep, stall its peers as well.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hostir::cpu {

class TicketWaiters {
 public:
  // Blocks until `ready()` holds, releasing `lock` (the owner's mutex)
  // while it waits; wake(ticket) or wakeAll() makes it check again.
  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, uint64_t ticket, Ready ready) {
    if (ready()) return;
    Waiter self{ticket, {}};
    waiters_.push_back(&self);
    self.changed.wait(lock, ready);
    std::erase(waiters_, &self);
  }
  // With the owner's mutex held (so the waiter cannot go, and take its
  // condition variable with it, before the notification).
  void wake(uint64_t ticket) {
    auto it = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter* w) { return w->ticket == ticket; });
    if (it != waiters_.end()) (*it)->changed.notify_one();
  }
  void wakeAll() {
    for (Waiter* waiter : waiters_) waiter->changed.notify_one();
  }

 private:
  struct Waiter {
    uint64_t ticket;
    std::condition_variable changed;
  };
  std::vector<Waiter*> waiters_;  // guarded by the owner's mutex
};

}  // namespace hostir::cpu
