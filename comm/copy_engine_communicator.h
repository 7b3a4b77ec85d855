// Collectives and sendrecv for ranks that are threads of one process, done
// with copies instead of a communication library: every rank pulls what it
// needs from its peers' buffers and reduces locally (comm/transfer_schedule.h),
// through a TransferEngine. With the CUDA engine the copies run on the copy
// engines (cudaMemcpyPeerAsync, cudaMemcpyAsync) and only the reductions
// take SMs, so a rank's GEMMs keep the SMs while its communication moves;
// several ranks may share one GPU, which NCCL refuses. With the host engine
// it runs the same schedule in host memory (the CPU backend, and tests).
//
// Calls are matched across ranks by issue order through the host team
// (`hostComm`, an in-process team): at each call the ranks exchange their
// buffers and a fence, check that they called the same collective, and
// after each phase of the schedule exchange fences again. A rank's host
// waits for its peers' hosts to reach the same call (not for any device
// work), so stream-ordered calls return as soon as their work is issued.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/collective_signature.h"
#include "comm/communicator.h"
#include "comm/transfer_engine.h"

namespace hostir {

class CopyEngineCommunicator final : public Communicator {
 public:
  // Collective over `hostComm`, which must outlive this communicator and
  // whose ranks must be threads of this process: the ranks exchange their
  // process ids and devices. Throws CommError when they are not one process.
  CopyEngineCommunicator(Communicator& hostComm, std::unique_ptr<TransferEngine> engine);
  // Collective too: the ranks meet before their engines (and fences) go.
  ~CopyEngineCommunicator() override;

  int rank() const override { return hostComm_.rank(); }
  int size() const override { return hostComm_.size(); }
  std::string name() const override { return "copy-engine"; }
  bool blocking() const override { return !engine_->asynchronous(); }
  // Every rank's device, in rank order.
  const std::vector<int>& devices() const { return devices_; }

  // With a stream the work completes in its order (or at once, on the
  // host); without one it runs on the engine's own stream and the call
  // returns once it has completed.
  void allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void* stream = nullptr) override;
  void allgather(const void* send, void* recv, size_t count, DType dtype, void* stream = nullptr) override;
  void reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                     void* stream = nullptr) override;
  void broadcast(void* buffer, size_t count, DType dtype, int root, void* stream = nullptr) override;
  void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                void* stream = nullptr) override;
  void barrier() override;
  void abort(const std::string& reason) override;

 private:
  struct Call {
    CollectiveSignature signature;
    const void* send;
    size_t sendBytes;
    void* recv;
    bool inPlace;  // the collective's own in-place layout (see scheduleTransfers)
    bool stage;    // send overlaps recv some other way: peers read a copy of it
  };
  void run(const Call& call, void* stream);

  Communicator& hostComm_;
  std::unique_ptr<TransferEngine> engine_;
  std::vector<int> devices_;
};

}  // namespace hostir
