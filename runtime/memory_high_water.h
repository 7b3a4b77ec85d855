// The bytes of tensor memory a backend holds, and the most it held at once
// since the last resetPeak(): a run's peak is its live set, so it shows
// whether buffers are freed as the program deallocates them. Lock-free, as
// frees come from whichever thread ran a buffer's last user.
#pragma once

#include <atomic>
#include <cstdint>

namespace hostir {

class MemoryHighWater {
 public:
  void allocated(uint64_t bytes) {
    const uint64_t live = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
  }
  void freed(uint64_t bytes) { live_.fetch_sub(bytes, std::memory_order_relaxed); }

  uint64_t live() const { return live_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // The peak starts again from what is live now (at the start of a run).
  void resetPeak() { peak_.store(live_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> live_{0};
  std::atomic<uint64_t> peak_{0};
};

}  // namespace hostir
