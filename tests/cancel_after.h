// Cancels work that runs for seconds, from another thread as Ctrl-C would,
// and measures how long it takes to stop (ir/cancellation.h).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>

#include "ir/cancellation.h"

namespace hostir::testing {

// How soon work must stop once cancelled.
constexpr std::chrono::duration<double> kCancelLatencyLimit = std::chrono::seconds(1);

// Starts `work` on a thread, sets `cancel` after 200 ms (so that the work is
// deep inside, not at its first poll), and expects it to throw Cancelled.
// Returns the seconds from setting the flag to the work's end. `work` must
// run well past 200 ms uncancelled: when it finishes first, the test fails.
inline double cancelAfterAWhile(std::atomic<bool>& cancel, const std::function<void()>& work) {
  using Clock = std::chrono::steady_clock;
  std::future<bool> cancelled = std::async(std::launch::async, [&] {
    try {
      work();
    } catch (const Cancelled&) {
      return true;
    }
    return false;
  });
  // Whatever else `work` throws comes out of get() and fails the test.
  if (cancelled.wait_for(std::chrono::milliseconds(200)) == std::future_status::ready) {
    ADD_FAILURE() << "the work finished within 200 ms, before it was cancelled: make it longer";
    cancelled.get();
    return 0;
  }
  const Clock::time_point set = Clock::now();
  cancel.store(true, std::memory_order_relaxed);
  EXPECT_TRUE(cancelled.get()) << "the work finished instead of throwing Cancelled";
  return std::chrono::duration<double>(Clock::now() - set).count();
}

}  // namespace hostir::testing
