#include "executor/cpu/compute_gate.h"

namespace hostir::cpu {

std::optional<ComputeGate::Span> ComputeGate::run(uint64_t ticket, const std::function<void()>& job) {
  if (!enter(ticket)) return std::nullopt;
  // The slot is given back even if the job throws.
  struct Leave {
    ComputeGate* gate;
    ~Leave() { gate->leave(); }
  } leave{this};
  Span span;
  span.start = Clock::now();
  job();
  span.end = Clock::now();
  return span;
}

bool ComputeGate::enter(uint64_t ticket) {
  if (slots_ <= 0) return true;
  std::unique_lock lock(mutex_);
  auto admitted = [&] { return aborted_ || (nextStart_ == ticket && free_ > 0); };
  waiters_.wait(lock, ticket, admitted);
  if (aborted_) return false;
  ++nextStart_;
  --free_;
  wakeNext();  // the next ticket may take another free slot
  return true;
}

void ComputeGate::leave() {
  if (slots_ <= 0) return;
  std::lock_guard lock(mutex_);
  ++free_;
  wakeNext();
}

void ComputeGate::wakeNext() {
  if (free_ > 0) waiters_.wake(nextStart_);
}

void ComputeGate::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  waiters_.wakeAll();
}

void ComputeGate::reset() {
  std::lock_guard lock(mutex_);
  free_ = slots_;
  nextStart_ = 0;
  aborted_ = false;
  issued_ = 0;
}

}  // namespace hostir::cpu
