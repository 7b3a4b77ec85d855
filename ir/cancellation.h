// Cancellation of long work (a run, the passes, the program check): another
// thread (a Ctrl-C handler) sets a flag, and the work polls it often enough
// to stop within a second. It stops by throwing Cancelled, because the polls
// sit deep in loops (an evaluator's per-operation hook, a pass's candidates)
// whose callers have no error path to return through; whoever set the flag
// catches it at the top.
#pragma once

#include <atomic>
#include <exception>

namespace hostir {

struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

// Throws Cancelled once `flag` is set; a null flag is never set. The load is
// relaxed: the flag guards no other data, it only has to be seen soon, and a
// relaxed load costs no more than a plain one in the loops that poll it.
inline void throwIfCancelled(const std::atomic<bool>* flag) {
  if (flag && flag->load(std::memory_order_relaxed)) throw Cancelled{};
}

}  // namespace hostir
