// Liveness between the processes of an mpirun job, so that a deadline of the
// host (comm/host_watchdog.h) covers time spent waiting on peers and never a
// peer's long local work. A rank busy on its own (preparing its run, rank
// 0's serial reference for `--check`, writing outputs) beats: it sends a
// one-byte message to every other rank once per period. A listener on every
// rank drains the beats and tells its watchdog, which then counts each
// deadline from the last beat heard. A rank that stops (SIGSTOP, a hung
// node) stops beating too, so its peers still end the job one timeout
// later.
//
// The messages travel on a communicator of their own, sent and received by
// threads beside the host's, which needs MPI_THREAD_MULTIPLE; with less,
// nothing is sent and deadlines count from each call's start.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/host_watchdog.h"

namespace hostir {

class MpiHeartbeat {
 public:
  // Collective over `base` (it is duplicated). Beats every `period`; the
  // listener looks twice per period.
  MpiHeartbeat(MPI_Comm base, HostWatchdog& watchdog, std::chrono::milliseconds period, bool threadsMayCallMpi);
  ~MpiHeartbeat();
  MpiHeartbeat(const MpiHeartbeat&) = delete;
  MpiHeartbeat& operator=(const MpiHeartbeat&) = delete;

  // This rank beats for as long as the guard lives.
  class Beating {
   public:
    Beating(Beating&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Beating(const Beating&) = delete;
    Beating& operator=(const Beating&) = delete;
    ~Beating();

   private:
    friend class MpiHeartbeat;
    explicit Beating(MpiHeartbeat* owner) : owner_(owner) {}
    MpiHeartbeat* owner_;
  };
  [[nodiscard]] Beating beat();

 private:
  void listen();
  void send();
  void drain();  // receives every beat that has arrived, and tells the watchdog if any did

  static constexpr int kTag = 0x4842;  // "HB"
  HostWatchdog& watchdog_;
  const std::chrono::milliseconds period_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  bool enabled_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  int beating_ = 0;        // guarded by mutex_: live Beating guards
  bool stopping_ = false;  // guarded by mutex_
  std::thread listener_, sender_;
};

}  // namespace hostir
