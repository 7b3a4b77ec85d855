// How one rank of a CopyEngineCommunicator moves and reduces bytes. On a
// GPU (executor/cuda/cuda_transfer_engine.h) copies go on the copy engines and
// reductions are small kernels, all in the order of the stream they are
// issued on; on the host (comm/host_transfer_engine.h) they are memcpy and
// the host reduction kernels, done before the call returns. The
// communicator's schedule (comm/transfer_schedule.h) is the same for both.
//
// `stream` is the engine's native stream (a cudaStream_t for CUDA), or the
// engine's defaultStream(). A fence marks a point in a stream's order; a
// rank may wait for its peers' fences (all ranks are threads of one
// process, so a fence is meaningful to every rank). A fence is taken first
// and recorded later, so a rank can hand its peers the fences of a whole
// collective at once; a peer must wait() for one only once its host knows
// the record was made (CUDA waits for the event's latest record at the time
// of the wait, or for nothing if there is none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

class TransferEngine {
 public:
  using Fence = uint64_t;  // engine-defined; 0 means "nothing to wait for"

  virtual ~TransferEngine() = default;

  // True when work completes in stream order after the call returns (CUDA);
  // false when every call has done its work by the time it returns.
  virtual bool asynchronous() const = 0;
  // Where this rank's buffers live (a CUDA device); peers copy from it.
  virtual int device() const = 0;
  // Called once every rank's device is known, before any transfer: a GPU
  // engine enables peer access to them.
  virtual void connect(const int* devices, int count) { (void)devices, (void)count; }

  // A new engine of the same kind on the same device, for a group split
  // from the team (Communicator::split); null where there is none.
  virtual std::unique_ptr<TransferEngine> sibling() const { return nullptr; }

  // A stream of the engine's own, for calls whose caller gives none.
  virtual void* defaultStream() = 0;
  // Blocks until everything issued on `stream` has completed.
  virtual void synchronize(void* stream) = 0;

  // Stream-ordered scratch that peers may read: usable by work issued on
  // `stream` after this call; released after the work issued before release().
  virtual void* allocate(size_t bytes, void* stream) = 0;
  virtual void release(void* data, void* stream) noexcept = 0;

  // dst (on dstDevice) = src (on srcDevice), `bytes` bytes, disjoint.
  virtual void copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) = 0;
  // acc[i] = acc[i] op in[i]; both this rank's, disjoint. Avg adds.
  virtual void reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) = 0;
  // data[i] *= factor, the product taken in f64.
  virtual void scale(void* data, size_t count, DType dtype, double factor, void* stream) = 0;

  // A fence to be recorded later. The engine may hand the same fence out
  // again after a while (CUDA: a ring of events), so its user must see to
  // it that every peer has waited for a record before the next one.
  virtual Fence newFence() = 0;
  // Sets `fence` to the point after everything issued on `stream` so far.
  virtual void record(Fence fence, void* stream) = 0;
  // Work issued on `stream` after this call starts once `fence` is reached.
  virtual void wait(void* stream, Fence fence) = 0;

  // A new fence recorded at once on `stream`.
  Fence fence(void* stream) {
    const Fence f = newFence();
    record(f, stream);
    return f;
  }
};

}  // namespace hostir
