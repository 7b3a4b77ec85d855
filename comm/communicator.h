// The Communicator interface: the collectives of a team of ranks on
// contiguous buffers. The executor orders the calls (issue order, the same
// on every rank) and packs strided views; implementations only move and
// reduce bytes. Every collective comes through one entry point,
// collective(), as every kernel comes through Backend::compute: an
// implementation has one switch over CollectiveKind, and the named calls
// below (allreduce, allgather, ...) only build its arguments.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/collective_signature.h"
#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

// A collective that cannot complete: a peer failed, the team was aborted,
// or the transport reported an error. Every rank's pending call throws it.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One collective on contiguous buffers: its signature (kind, dtype, counts,
// op, root, peers) and this rank's buffers. The counts are whole buffers:
// `send` holds signature.sendCount elements and `recv` recvCount, laid out
// as size() equal blocks where the kind splits its tensors:
//
//   allreduce       recv = op over ranks of send (count each); Avg divides
//                   the sum by size(). In place: send == recv.
//   allgather       recv block q = rank q's send. In place: send is block
//                   rank() of recv.
//   reduce_scatter  recv = block rank() of the reduction of every send. In
//                   place: recv is block rank() of send.
//   all_to_all      recv block q = block rank() of rank q's send; the
//                   counts are equal and size() divides them.
//   broadcast       recv (the one buffer; send is ignored) = root's recv.
//   sendrecv        sendCount elements of send go to rank `to`, recvCount
//                   elements of recv come from rank `from`, as one call
//                   that every rank of a ring may make at once; it pairs
//                   with the call of the same position on `to`. to == from
//                   == rank() is a local copy.
//
// Any other overlap of send and recv is allowed too, as if send were read
// before anything is written.
struct CollectiveArgs {
  CollectiveSignature signature;
  const void* send = nullptr;
  void* recv = nullptr;
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

  // Every collective. Throws CommError when the team fails or the call
  // cannot be its collective (signatureError).
  virtual void collective(const CollectiveArgs& call, void* stream = nullptr) = 0;
  virtual void barrier() = 0;

  // The collectives by name, with counts per block as the transports count
  // them: allgather's `count` is each rank's send, reduce-scatter's each
  // rank's recv, all-to-all's each part.
  void allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void* stream = nullptr);
  void allgather(const void* send, void* recv, size_t count, DType dtype, void* stream = nullptr);
  void reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void* stream = nullptr);
  void allToAll(const void* send, void* recv, size_t count, DType dtype, void* stream = nullptr);
  void broadcast(void* buffer, size_t count, DType dtype, int root, void* stream = nullptr);
  void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                void* stream = nullptr);

  // The communicator of the ranks that pass the same `color` (a mesh axis's
  // group: the ranks that share every other coordinate), ranked by `key`,
  // then by rank. Collective: every rank of this team calls it, in the same
  // order as its other calls. The group's failures end this whole team, as
  // this team's end the group's calls. Throws CommError where the transport
  // cannot split (a device communicator splits the host team it is built on).
  virtual std::unique_ptr<Communicator> split(int color, int key);
  // Whether calls on different communicators split from this team (and on
  // the team itself) may run at the same time from different threads: true
  // for in-process and copy-engine teams, and for MPI initialized with
  // MPI_THREAD_MULTIPLE. Where false, a backend runs them one at a time.
  virtual bool groupsOverlap() const { return false; }

  // An error the transport detected on its own, outside any call (NCCL: a
  // remote peer failed), or nullopt while it is healthy.
  virtual std::optional<std::string> asyncError() { return std::nullopt; }

  // Makes every rank's pending and future calls fail with CommError (or,
  // for MPI, ends the job), so a failing rank never leaves the others hanging.
  virtual void abort(const std::string& reason) = 0;
};

inline std::unique_ptr<Communicator> Communicator::split(int, int) {
  throw CommError("the " + name() + " communicator cannot split into groups");
}

inline void Communicator::allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                                    void* stream) {
  collective({{CollectiveKind::Allreduce, dtype, count, count, op}, send, recv}, stream);
}

inline void Communicator::allgather(const void* send, void* recv, size_t count, DType dtype, void* stream) {
  collective({{CollectiveKind::Allgather, dtype, count, count * static_cast<size_t>(size())}, send, recv}, stream);
}

inline void Communicator::reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                                        void* stream) {
  collective({{CollectiveKind::ReduceScatter, dtype, count * static_cast<size_t>(size()), count, op}, send, recv},
             stream);
}

inline void Communicator::allToAll(const void* send, void* recv, size_t count, DType dtype, void* stream) {
  const size_t total = count * static_cast<size_t>(size());
  collective({{CollectiveKind::AllToAll, dtype, total, total}, send, recv}, stream);
}

inline void Communicator::broadcast(void* buffer, size_t count, DType dtype, int root, void* stream) {
  CollectiveSignature s{CollectiveKind::Broadcast, dtype, count, count};
  s.root = root;
  collective({s, buffer, buffer}, stream);
}

inline void Communicator::sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from,
                                   DType dtype, void* stream) {
  CollectiveSignature s{CollectiveKind::SendRecv, dtype, sendCount, recvCount};
  s.to = to;
  s.from = from;
  collective({s, send, recv}, stream);
}

// Every rank's `mine`, in rank order: one allgather of a trivially copyable
// value (host communicators; in-process ranks may exchange addresses).
template <typename T>
std::vector<T> exchangeValues(Communicator& comm, const T& mine) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(float) == 0);
  std::vector<T> all(static_cast<size_t>(comm.size()));
  comm.allgather(&mine, all.data(), sizeof(T) / sizeof(float), DType::F32);
  return all;
}

}  // namespace hostir
