// Deadlines for the host's blocking steps of a multi-rank run: set-up, the
// start-up agreement, the barriers between runs, the failure votes, the
// gathers of outputs and traces, and the barrier before shutdown. A rank
// that stops responding (SIGSTOP, a hung node) would leave its peers waiting
// in any of these for ever; with a deadline, the peer that waits too long
// says what it was waiting for and ends the team.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace hostir {

class HostWatchdog {
 public:
  // `expire` runs once, on the watchdog's thread, with a message naming the
  // step that did not complete; it must end the team (MPI_Abort, or abort an
  // in-process team) so the blocked step returns or the process ends.
  HostWatchdog(std::chrono::milliseconds timeout, std::function<void(const std::string&)> expire);
  ~HostWatchdog();
  HostWatchdog(const HostWatchdog&) = delete;
  HostWatchdog& operator=(const HostWatchdog&) = delete;

  // Watches one blocking step for as long as the guard lives.
  class Guard {
   public:
    Guard(Guard&& other) noexcept : owner_(other.owner_), id_(other.id_) { other.owner_ = nullptr; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard();

   private:
    friend class HostWatchdog;
    Guard(HostWatchdog* owner, uint64_t id) : owner_(owner), id_(id) {}
    HostWatchdog* owner_;
    uint64_t id_;
  };

  // `step` completes a sentence: "the barrier before run 3".
  [[nodiscard]] Guard watch(std::string step);

  // A peer said it is alive and working on its own (comm/mpi_heartbeat.h):
  // every step's deadline counts from now, not from when the step began.
  void heardFromPeer();

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  struct Watched {
    std::string step;
    std::chrono::steady_clock::time_point since;
  };
  void loop();

  const std::chrono::milliseconds timeout_;
  std::function<void(const std::string&)> expire_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<uint64_t, Watched> watched_;                // guarded by mutex_
  uint64_t nextId_ = 0;                                // guarded by mutex_
  std::chrono::steady_clock::time_point lastHeard_{};  // guarded by mutex_: the last peer's beat
  bool expired_ = false;                               // guarded by mutex_
  bool stopping_ = false;                              // guarded by mutex_
  std::thread thread_;
};

// Runs `step` under a guard of `watchdog`, or plainly when there is none
// (in-process teams, whose threads cannot be stopped one by one).
template <typename Step>
auto withDeadline(HostWatchdog* watchdog, std::string what, Step&& step) {
  if (!watchdog) return step();
  auto guard = watchdog->watch(std::move(what));
  return step();
}

}  // namespace hostir
