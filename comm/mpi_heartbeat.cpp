#include "comm/mpi_heartbeat.h"

#include <algorithm>

#include "comm/communicator.h"
#include "ir/thread_start.h"

namespace hostir {

MpiHeartbeat::MpiHeartbeat(MPI_Comm base, HostWatchdog& watchdog, std::chrono::milliseconds period,
                           bool threadsMayCallMpi)
    : watchdog_(watchdog), period_(std::max(period, std::chrono::milliseconds(1))) {
  if (MPI_Comm_dup(base, &comm_) != MPI_SUCCESS) throw CommError("MPI_Comm_dup failed");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  enabled_ = threadsMayCallMpi && size_ > 1;
  if (!enabled_) return;
  listener_ = startThread("the heartbeat's listener", [this] { listen(); });
  try {
    sender_ = startThread("the heartbeat's sender", [this] { send(); });
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    listener_.join();
    throw;
  }
}

MpiHeartbeat::~MpiHeartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (listener_.joinable()) listener_.join();
  if (sender_.joinable()) sender_.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (enabled_) drain();  // beats still in flight must not outlive the communicator unreceived
  MPI_Comm_free(&comm_);
}

MpiHeartbeat::Beating::~Beating() {
  if (!owner_) return;
  std::lock_guard lock(owner_->mutex_);
  --owner_->beating_;
}

MpiHeartbeat::Beating MpiHeartbeat::beat() {
  {
    std::lock_guard lock(mutex_);
    ++beating_;
  }
  wake_.notify_all();  // the first beat goes out at once
  return Beating(this);
}

void MpiHeartbeat::drain() {
  bool heard = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kTag, comm_, &arrived, &status) != MPI_SUCCESS || !arrived) break;
    char byte = 0;
    MPI_Recv(&byte, 1, MPI_CHAR, status.MPI_SOURCE, kTag, comm_, MPI_STATUS_IGNORE);
    heard = true;
  }
  if (heard) watchdog_.heardFromPeer();
}

void MpiHeartbeat::listen() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period_ / 2);
    if (stopping_) break;
    lock.unlock();
    drain();
    lock.lock();
  }
}

void MpiHeartbeat::send() {
  static const char kByte = 1;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait(lock, [&] { return stopping_ || beating_ > 0; });
    if (stopping_) break;
    lock.unlock();
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      MPI_Request request;
      // Fire and forget: a peer that stopped must not stop this rank's work.
      if (MPI_Isend(&kByte, 1, MPI_CHAR, peer, kTag, comm_, &request) == MPI_SUCCESS) MPI_Request_free(&request);
    }
    lock.lock();
    wake_.wait_for(lock, period_, [&] { return stopping_; });
  }
}

}  // namespace hostir
