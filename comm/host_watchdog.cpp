#include "comm/host_watchdog.h"

#include <fmt/format.h>

#include "ir/thread_start.h"

#include <algorithm>

namespace hostir {

HostWatchdog::HostWatchdog(std::chrono::milliseconds timeout, std::function<void(const std::string&)> expire)
    : timeout_(timeout),
      expire_(std::move(expire)),
      thread_(startThread("the thread that keeps the host's deadlines", [this] { loop(); })) {}

HostWatchdog::~HostWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

HostWatchdog::Guard::~Guard() {
  if (!owner_) return;
  std::lock_guard lock(owner_->mutex_);
  owner_->watched_.erase(id_);
}

HostWatchdog::Guard HostWatchdog::watch(std::string step) {
  std::lock_guard lock(mutex_);
  uint64_t id = nextId_++;
  watched_.emplace(id, Watched{std::move(step), std::chrono::steady_clock::now()});
  return Guard(this, id);
}

void HostWatchdog::heardFromPeer() {
  std::lock_guard lock(mutex_);
  lastHeard_ = std::chrono::steady_clock::now();
}

void HostWatchdog::loop() {
  // A tenth of the timeout (at most 100 ms) between looks: the report comes
  // at most that late.
  const auto period = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(100), std::max<std::chrono::milliseconds>(timeout_ / 10, std::chrono::milliseconds(1)));
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period);
    if (stopping_ || expired_) continue;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [id, watched] : watched_) {
      // Time a peer spent on its own work, beating, is not time waited.
      if (now - std::max(watched.since, lastHeard_) <= timeout_) continue;
      expired_ = true;
      double seconds = std::chrono::duration<double>(timeout_).count();
      std::string message = fmt::format(
          "{} has not completed after {:g} s (--comm-timeout): another rank stopped responding or failed "
          "without saying why",
          watched.step, seconds);
      lock.unlock();
      expire_(message);  // ends the team; blocked steps return with an error or the process ends
      lock.lock();
      break;
    }
  }
}

}  // namespace hostir
