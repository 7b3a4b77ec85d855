#include "comm/team_barrier.h"

#include <stdexcept>

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

void TeamBarrier::abortLocked(const std::string& reason) {
  if (!abortReason_) abortReason_ = reason;
  released_.notify_all();
}

void TeamBarrier::releaseLocked() {
  arrived_ = 0;
  ++generation_;
  released_.notify_all();
}

void TeamBarrier::throwAbortedLocked() const { throw CommError("team aborted: " + *abortReason_); }

}  // namespace hostir
