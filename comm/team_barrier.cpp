#include "comm/team_barrier.h"

#include <chrono>
#include <new>
#include <stdexcept>
#include <thread>

#include "comm/communicator.h"

namespace hostir {

TeamBarrier::TeamBarrier(int parties) : parties_(parties) {
  if (parties < 1) throw std::invalid_argument("TeamBarrier needs at least one party");
}

void TeamBarrier::arriveAndWait(const ArrivalCheck& check) {
  std::unique_lock lock(mutex_);
  // An aborted team never completes another generation: nobody arrives.
  if (abortReason_) throwAbortedLocked();
  const uint64_t generation = generation_;
  if (++arrived_ == parties_) {
    if (check) {
      if (std::string problem = check(); !problem.empty()) {
        abortLocked(problem);
        throwAbortedLocked();
      }
    }
    releaseLocked();
    return;
  }
  released_.wait(lock, [&] { return generation_ != generation || abortReason_; });
  // A completed generation wins over an abort that came after it, so either
  // every party goes on to the data phase or none does.
  if (generation_ != generation) return;
  throwAbortedLocked();
}

void TeamBarrier::arriveAndWaitForAll() {
  std::unique_lock lock(mutex_);
  const uint64_t generation = generation_;
  if (++arrived_ == parties_)
    releaseLocked();
  else
    released_.wait(lock, [&] { return generation_ != generation; });
  if (abortReason_) throwAbortedLocked();
}

void TeamBarrier::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  abortLocked(reason);
}

std::optional<std::string> TeamBarrier::abortReason() {
  std::lock_guard lock(mutex_);
  return abortReason_;
}

void TeamBarrier::abortLocked(const std::string& reason) {
  if (!abortReason_) {
    abortReason_.emplace();  // an empty string allocates nothing: the abort happens even without memory
    try {
      *abortReason_ = reason;
    } catch (const std::bad_alloc&) {  // the abort matters more than its reason
    }
  }
  aborted_.store(true);
  released_.notify_all();
  signalled_.notify_all();
}

void TeamBarrier::waitUntil(const std::function<bool()>& ready) {
  // A peer a phase ahead usually signals within microseconds: spin, then
  // yield the core (ranks may outnumber cores), then sleep.
  constexpr int kSpins = 256;
  constexpr auto kYieldFor = std::chrono::microseconds(50);
  for (int i = 0; i < kSpins; ++i) {
    if (ready()) return;
    if (aborted_.load(std::memory_order_relaxed)) break;
  }
  const auto yieldUntil = std::chrono::steady_clock::now() + kYieldFor;
  while (!aborted_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < yieldUntil) {
    if (ready()) return;
    std::this_thread::yield();
  }
  std::unique_lock lock(mutex_);
  // Announced before ready() is checked under the lock: a party that makes
  // ready() hold after that check sees the sleeper (both seq_cst) and takes
  // the lock before notifying, so the wake-up cannot fall between the check
  // and the wait.
  sleepers_.fetch_add(1);
  signalled_.wait(lock, [&] { return ready() || abortReason_; });
  sleepers_.fetch_sub(1);
  if (!ready()) throwAbortedLocked();
}

void TeamBarrier::signal() {
  if (sleepers_.load() == 0) return;
  { std::lock_guard lock(mutex_); }
  signalled_.notify_all();
}

void TeamBarrier::releaseLocked() {
  arrived_ = 0;
  ++generation_;
  released_.notify_all();
}

void TeamBarrier::throwAbortedLocked() const {
  throw CommError("team aborted: " + (abortReason_->empty() ? std::string("a rank ran out of memory") : *abortReason_));
}

}  // namespace hostir
