// The Communicator interface: the collectives of a team of ranks on
// contiguous buffers. The executor orders the calls (issue order, the same
// on every rank) and packs strided views; implementations only move and
// reduce bytes.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

// A collective that cannot complete: a peer failed, the team was aborted,
// or the transport reported an error. Every rank's pending call throws it.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "mpi", "in-process", "nccl", "copy-engine"

  // True when a call returns only once the collective has completed (MPI,
  // in-process). False when it is enqueued on `stream` and completes in
  // stream order (NCCL, copy engines on a GPU); `stream` is the backend's
  // native stream then.
  virtual bool blocking() const { return true; }

  // recv = op over ranks of send; `send == recv` is in place (a partial
  // overlap is allowed too). Avg divides the sum by size().
  virtual void allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         void* stream = nullptr) = 0;
  // recv (count * size() elements) = every rank's send (count elements) in rank order.
  // In place: send is block rank() of recv. Any other overlap of send and recv
  // is allowed too (as if send were read first).
  virtual void allgather(const void* send, void* recv, size_t count, DType dtype, void* stream = nullptr) = 0;
  // recv (count elements) = block rank() of the reduction of send (count * size() elements).
  // In place: recv is block rank() of send. Any other overlap (recv == send
  // included) is allowed too.
  virtual void reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             void* stream = nullptr) = 0;
  // buffer (count elements) on every rank = buffer of `root`.
  virtual void broadcast(void* buffer, size_t count, DType dtype, int root, void* stream = nullptr) = 0;
  // Sends `sendCount` elements of `send` to rank `to` and receives
  // `recvCount` elements into `recv` from rank `from`, as one call that
  // returns (or, for NCCL, completes in stream order) once both are done;
  // every rank of a ring calling it at once never deadlocks. It pairs with
  // the call of the same position on `to` (whose `from` is this rank). Any
  // overlap of send and recv is allowed (as if send were read first); `to ==
  // from == rank()` is a local copy.
  virtual void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                        void* stream = nullptr) = 0;
  virtual void barrier() = 0;

  // An error the transport detected on its own, outside any call (NCCL: a
  // remote peer failed), or nullopt while it is healthy.
  virtual std::optional<std::string> asyncError() { return std::nullopt; }

  // Makes every rank's pending and future calls fail with CommError (or,
  // for MPI, ends the job), so a failing rank never leaves the others hanging.
  virtual void abort(const std::string& reason) = 0;
};

}  // namespace hostir
