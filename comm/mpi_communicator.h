// Collectives between the processes of an mpirun job, on host buffers.
#pragma once

#include <mpi.h>

#include <array>
#include <climits>
#include <cstddef>
#include <vector>

#include "comm/communicator.h"

namespace hostir {

// MPI's lifetime in this process. Initializes MPI (asking for
// MPI_THREAD_MULTIPLE: communications are issued from stream threads) unless
// something else already did, and finalizes what it initialized. Create it
// before any MpiCommunicator and destroy it after the last one.
class MpiSession {
 public:
  // Throws std::runtime_error when MPI cannot give at least
  // MPI_THREAD_SERIALIZED.
  explicit MpiSession(int* argc = nullptr, char*** argv = nullptr);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // The MPI_THREAD_* level MPI provides.
  int threadLevel() const { return threadLevel_; }

  // Whether this process was started by mpirun/mpiexec (or srun), judged
  // from the environment the launcher sets, before MPI is initialized.
  static bool launchedByMpirun();

 private:
  bool initializedHere_ = false;
  int threadLevel_ = MPI_THREAD_SINGLE;
};

// A Communicator over a duplicate of `base`. Transport errors throw
// CommError. Calls must not run concurrently (the executor issues them from
// one thread at a time), and in-place use must be the same on every rank, as
// MPI requires. Destroy it before the MpiSession ends.
class MpiCommunicator : public Communicator {
 public:
  // MPI counts are ints; longer buffers are moved in several calls of at
  // most `maxElementsPerCall` elements (lowered by tests to exercise that).
  static constexpr size_t kMaxElementsPerCall = INT_MAX;
  // A reduce-scatter whose blocks reach this size runs as one MPI_Reduce
  // per block onto its rank. Open MPI 4.1 reduces the whole input onto rank 0
  // through a fresh temporary (page-faulted on every call once it exceeds
  // glibc's mmap threshold) and then scatters it; a reduce per block moves
  // less and needs no such buffer. Per call on 2 ranks of the 2-vCPU VM,
  // reduce_scatter_block against a reduce per block: 64 KiB blocks 21 us
  // against 27, 128 KiB 55 against 39, 16 MiB 12 to 29 ms against 7.6.
  static constexpr size_t kReduceEachBlockFromBytes = 128 * 1024;

  explicit MpiCommunicator(MPI_Comm base = MPI_COMM_WORLD, size_t maxElementsPerCall = kMaxElementsPerCall);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  bool groupsOverlap() const override;

  // Counts checked (signatureError), then one MPI collective per kind, blocking.
  void collective(const CollectiveArgs& call, void* stream = nullptr) override;
  void barrier() override;

  // MPI_Comm_split of this communicator.
  std::unique_ptr<Communicator> split(int color, int key) override;

  // Prints `reason` for this rank (its rank in MPI_COMM_WORLD), then ends
  // the whole job with MPI_Abort.
  void abort(const std::string& reason) override;

 private:
  // The collective of one kind (broadcast's one buffer is `out`), defined
  // for each kind in mpi_communicator.cpp: a new kind changes only that file.
  template <CollectiveKind kind>
  void run(const CollectiveSignature& s, const std::byte* in, std::byte* out);

  // A point-to-point message of `count` elements: to or from `peer`.
  struct Message {
    bool send;
    int peer;
    std::byte* data;
    size_t count;
  };
  // Posts every message (in pieces MPI's int counts can hold) before
  // waiting for any, under `tag`; `what` names the call in errors.
  void exchange(const std::vector<Message>& messages, DType dtype, int tag, const char* what);

  MPI_Op mpiOp(DType dtype, ReduceOp op) const;
  void check(int status, const char* call) const;

  // Calls call(firstElement, elements) over [0, count) in pieces MPI's int counts can hold.
  template <typename Call>
  void forEachPiece(size_t count, Call call) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  size_t maxElementsPerCall_;
  // User ops for the half types, which MPI cannot reduce: [f16, bf16][sum, prod, min, max].
  std::array<std::array<MPI_Op, 4>, 2> halfOps_;
};

}  // namespace hostir
