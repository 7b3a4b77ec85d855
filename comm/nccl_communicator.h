// Collectives on device buffers through NCCL. Calls are enqueued on the
// CUDA stream they are given (a cudaStream_t passed as void*) and complete
// in that stream's order, so blocking() is false. The communicator is
// bootstrapped through any host Communicator (MPI processes or in-process
// ranks), which also carries the abort to the rest of the team.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "comm/communicator.h"

struct ncclComm;     // nccl.h: typedef struct ncclComm* ncclComm_t
struct CUstream_st;  // cuda_runtime.h: typedef struct CUstream_st* cudaStream_t

namespace hostir {

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `hostComm`: every rank calls it together with the CUDA
  // device it drives (made current on the calling thread). Rank 0 creates
  // the NCCL id and broadcasts it through `hostComm`. Throws CommError.
  NcclCommunicator(Communicator& hostComm, int device);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }
  bool blocking() const override { return false; }
  int device() const { return device_; }

  // `stream` is the cudaStream_t to enqueue on; null uses the
  // communicator's own stream and returns once the call has completed.
  // Buffers are device memory of this rank's device. all_to_all and
  // sendrecv are ncclSend and ncclRecv in one group, so a ring never deadlocks.
  void collective(const CollectiveArgs& call, void* stream = nullptr) override;
  // A one-element allreduce on the communicator's own stream, waited for.
  void barrier() override;

  // ncclCommAbort (releasing this rank's pending collectives), then aborts
  // the host communicator so that the other ranks learn of it too.
  void abort(const std::string& reason) override;

  // An error NCCL detected asynchronously (a remote peer failed, an
  // internal error), or nullopt while the communicator is healthy.
  std::optional<std::string> asyncError() override;

  // A group's NCCL communicator, with a unique id of its own, over the host
  // team's group (which it owns), on this rank's device.
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  NcclCommunicator(std::unique_ptr<Communicator> ownedHost, Communicator& hostComm, int device);

  // The collective of one kind on `stream` (broadcast's one buffer is
  // `recv`), defined for each kind in nccl_communicator.cpp: a new kind
  // changes only that file.
  template <CollectiveKind kind>
  void run(const CollectiveSignature& s, const void* send, void* recv, CUstream_st* stream);

  ncclComm* handle();  // throws CommError once aborted
  CUstream_st* streamOf(void* stream) const;
  void finish(void* stream);  // waits for the own stream when the caller gave none
  // Device scratch for send buffers that overlap recv in a way NCCL does not allow.
  const void* staged(const void* send, size_t bytes, CUstream_st* stream, void** scratch);
  void release(void* scratch, CUstream_st* stream);

  std::unique_ptr<Communicator> ownedHost_;  // null unless this is a split's group; outlives the rest
  Communicator& hostComm_;
  int device_;
  int rank_ = 0;
  int size_ = 1;
  ncclComm* comm_ = nullptr;
  CUstream_st* ownStream_ = nullptr;
  void* barrierWord_ = nullptr;  // one f32 on the device, for barrier()

  std::mutex abortMutex_;
  bool aborted_ = false;  // guarded by abortMutex_
  std::string abortReason_;
};

}  // namespace hostir
