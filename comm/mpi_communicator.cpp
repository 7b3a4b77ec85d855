#include "comm/mpi_communicator.h"

#include <cstdio>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "comm/buffer_aliasing.h"
#include "comm/reduce.h"
#include "comm/sendrecv_peers.h"
#include "fmt/format.h"

namespace hostir {

namespace {

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown MPI thread level";
}

std::string mpiErrorString(int status) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(status, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", status);
  return std::string(text, static_cast<size_t>(length));
}

// Half types travel as 2-byte integers and are reduced by these user ops.
template <DType dtype, ReduceOp op>
void reduceHalves(void* in, void* inout, int* length, MPI_Datatype*) {
  reduceInto(inout, in, static_cast<size_t>(*length), dtype, op);
}

// The ops that get a user op per half type (avg uses sum's).
constexpr ReduceOp kHalfUserOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max};

// The column of an op in MpiCommunicator::halfOps_.
size_t halfOpIndex(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return 0;  // avg is a sum, divided afterwards
    case ReduceOp::Prod: return 1;
    case ReduceOp::Min: return 2;
    case ReduceOp::Max: return 3;
  }
  throw CommError("MPI communicator: unknown reduce op");
}

template <DType dtype>
MPI_User_function* halfFunction(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return reduceHalves<dtype, ReduceOp::Sum>;
    case ReduceOp::Prod: return reduceHalves<dtype, ReduceOp::Prod>;
    case ReduceOp::Min: return reduceHalves<dtype, ReduceOp::Min>;
    case ReduceOp::Max: return reduceHalves<dtype, ReduceOp::Max>;
    case ReduceOp::Avg: break;
  }
  throw std::logic_error("no MPI user op for avg: it is a sum");
}

// The tags of sendrecv's messages and of all-to-all's (when its parts are
// too long for MPI_Alltoall's int counts) on the communicator's own
// duplicate, on which nothing else sends.
constexpr int kSendRecvTag = 0x5352;
constexpr int kAllToAllTag = 0x4141;

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
    case DType::F32: return MPI_FLOAT;
    case DType::F64: return MPI_DOUBLE;
    case DType::F16:
    case DType::BF16: return MPI_UINT16_T;
    case DType::I32: return MPI_INT32_T;
  }
  throw CommError("MPI communicator: unknown dtype");
}

// Open MPI's blocking calls poll its progress engine without pause. A rank
// runs more threads than it has cores (its stream threads), so a
// communication polling for a peer, or for a fragment the peer has not
// copied yet, would hold a core that a computation, or the peer's own
// communication thread, needs: transfers then advance one scheduler time
// slice at a time. With mpi_yield_when_idle Open MPI yields the core
// whenever a poll finds nothing to do. Read at MPI_Init from the
// environment; a value the user set wins, and other MPIs ignore it.
void askOpenMpiToYieldWhenIdle() { setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0); }

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&threadLevel_);
  } else {
    askOpenMpiToYieldWhenIdle();
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &threadLevel_) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Init_thread failed");
    initializedHere_ = true;
  }
  if (threadLevel_ < MPI_THREAD_SERIALIZED) {
    if (initializedHere_) MPI_Finalize();
    throw std::runtime_error(fmt::format(
        "MPI provides only {}, but hostir needs at least MPI_THREAD_SERIALIZED because communications are issued "
        "from stream threads; use an MPI library built with thread support",
        threadLevelName(threadLevel_)));
  }
}

MpiSession::~MpiSession() {
  if (!initializedHere_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool MpiSession::launchedByMpirun() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

MpiCommunicator::MpiCommunicator(MPI_Comm base, size_t maxElementsPerCall)
    : maxElementsPerCall_(std::clamp<size_t>(maxElementsPerCall, 1, kMaxElementsPerCall)) {
  // A private communicator: our collectives never match anyone else's, and
  // its error handler returns errors instead of ending the job.
  if (MPI_Comm_dup(base, &comm_) != MPI_SUCCESS) throw CommError("MPI_Comm_dup failed");
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  for (ReduceOp op : kHalfUserOps) {
    const int commutative = 1;
    check(MPI_Op_create(halfFunction<DType::F16>(op), commutative, &halfOps_[0][halfOpIndex(op)]), "MPI_Op_create");
    check(MPI_Op_create(halfFunction<DType::BF16>(op), commutative, &halfOps_[1][halfOpIndex(op)]), "MPI_Op_create");
  }
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (auto& ops : halfOps_)
    for (MPI_Op& op : ops) MPI_Op_free(&op);
  MPI_Comm_free(&comm_);
}

MPI_Op MpiCommunicator::mpiOp(DType dtype, ReduceOp op) const {
  if (dtype == DType::F16) return halfOps_[0][halfOpIndex(op)];
  if (dtype == DType::BF16) return halfOps_[1][halfOpIndex(op)];
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return MPI_SUM;
    case ReduceOp::Prod: return MPI_PROD;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
  }
  throw CommError("MPI communicator: unknown reduce op");
}

void MpiCommunicator::check(int status, const char* call) const {
  if (status != MPI_SUCCESS) throw CommError(fmt::format("{} failed: {}", call, mpiErrorString(status)));
}

template <typename Call>
void MpiCommunicator::forEachPiece(size_t count, Call call) const {
  for (size_t first = 0; first < count; first += maxElementsPerCall_)
    call(first, static_cast<int>(std::min(maxElementsPerCall_, count - first)));
}

template <>
void MpiCommunicator::run<CollectiveKind::Allreduce>(const CollectiveSignature& s, const std::byte* in,
                                                     std::byte* out) {
  const size_t count = s.sendCount;
  const size_t elementSize = dtypeSize(s.dtype);
  const size_t bytes = count * elementSize;
  // MPI forbids aliased buffers other than MPI_IN_PLACE, so any overlap
  // becomes in place; then ranks that alias alike all use MPI_IN_PLACE.
  const bool inPlace = bytesOverlap(in, bytes, out, bytes) || in == out;
  if (inPlace && in != out) std::memmove(out, in, bytes);
  forEachPiece(count, [&](size_t first, int n) {
    const void* source = inPlace ? MPI_IN_PLACE : in + first * elementSize;
    check(MPI_Allreduce(source, out + first * elementSize, n, mpiType(s.dtype), mpiOp(s.dtype, s.op), comm_),
          "MPI_Allreduce");
  });
  if (s.op == ReduceOp::Avg) scaleInPlace(out, count, s.dtype, 1.0 / size_);
}

template <>
void MpiCommunicator::run<CollectiveKind::Allgather>(const CollectiveSignature& s, const std::byte* in,
                                                     std::byte* out) {
  const size_t count = s.sendCount;
  const size_t elementSize = dtypeSize(s.dtype);
  const size_t bytes = count * elementSize;
  const MPI_Datatype type = mpiType(s.dtype);
  // MPI's in-place layout has send at block rank() of recv; any other
  // overlap becomes that layout, so ranks that alias alike all use MPI_IN_PLACE.
  std::byte* ownBlock = out + rank_ * bytes;
  const bool inPlace = in == ownBlock || bytesOverlap(in, bytes, out, bytes * size_);
  if (inPlace && in != ownBlock) std::memmove(ownBlock, in, bytes);
  if (count == 0) return;
  if (count <= maxElementsPerCall_) {
    check(MPI_Allgather(inPlace ? MPI_IN_PLACE : in, static_cast<int>(count), type, out, static_cast<int>(count), type,
                        comm_),
          "MPI_Allgather");
    return;
  }
  // A block too long for one int count: every rank broadcasts its block in pieces.
  if (!inPlace) std::memcpy(ownBlock, in, bytes);
  for (int root = 0; root < size_; ++root)
    forEachPiece(count, [&](size_t first, int n) {
      check(MPI_Bcast(out + root * bytes + first * elementSize, n, type, root, comm_), "MPI_Bcast");
    });
}

template <>
void MpiCommunicator::run<CollectiveKind::ReduceScatter>(const CollectiveSignature& s, const std::byte* in,
                                                         std::byte* out) {
  const size_t count = s.recvCount;
  const size_t elementSize = dtypeSize(s.dtype);
  const size_t bytes = count * elementSize;
  const MPI_Datatype type = mpiType(s.dtype);
  const MPI_Op mpiReduceOp = mpiOp(s.dtype, s.op);
  // MPI's in-place reduce-scatter leaves the result at the start of the
  // input, not at block rank() where ours goes, so any overlap (our in-place
  // layout included) receives into a private buffer first.
  std::vector<std::byte> staged;
  std::byte* target = out;
  if (bytesOverlap(in, bytes * size_, out, bytes)) {
    staged.resize(bytes);
    target = staged.data();
  }
  if (count == 0) return;
  if (count <= maxElementsPerCall_ && bytes < kReduceEachBlockFromBytes) {
    check(MPI_Reduce_scatter_block(in, target, static_cast<int>(count), type, mpiReduceOp, comm_),
          "MPI_Reduce_scatter_block");
  } else {
    // Each block reduced straight onto its rank, in pieces of at most an int
    // count: Open MPI 4.1's reduce_scatter_block reduces the whole input onto
    // rank 0 through a temporary as large as the input, then scatters it.
    for (int root = 0; root < size_; ++root)
      forEachPiece(count, [&](size_t first, int n) {
        const std::byte* source = in + (root * count + first) * elementSize;
        void* destination = root == rank_ ? target + first * elementSize : nullptr;
        check(MPI_Reduce(source, destination, n, type, mpiReduceOp, root, comm_), "MPI_Reduce");
      });
  }
  if (s.op == ReduceOp::Avg) scaleInPlace(target, count, s.dtype, 1.0 / size_);
  if (target != out) std::memcpy(out, target, bytes);
}

template <>
void MpiCommunicator::run<CollectiveKind::AllToAll>(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
  const size_t part = s.sendCount / static_cast<size_t>(size_);
  const size_t elementSize = dtypeSize(s.dtype);
  const size_t bytes = s.sendCount * elementSize;
  if (part == 0) return;  // every rank skips it alike: the counts agree
  // MPI forbids a send buffer that the receives write: any overlap sends a
  // private copy, so ranks need not alias alike.
  std::vector<std::byte> staged;
  if (bytesOverlap(in, bytes, out, bytes)) {
    staged.assign(in, in + bytes);
    in = staged.data();
  }
  const MPI_Datatype type = mpiType(s.dtype);
  if (part <= maxElementsPerCall_) {
    check(MPI_Alltoall(in, static_cast<int>(part), type, out, static_cast<int>(part), type, comm_), "MPI_Alltoall");
    return;
  }
  // A part too long for one int count: each part travels as its own
  // messages, in pieces, all posted before any is waited for.
  const size_t partBytes = part * elementSize;
  std::memcpy(out + rank_ * partBytes, in + rank_ * partBytes, partBytes);
  std::vector<Message> messages;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    messages.push_back({false, q, out + q * partBytes, part});
    messages.push_back({true, q, const_cast<std::byte*>(in) + q * partBytes, part});
  }
  exchange(messages, s.dtype, kAllToAllTag, "all_to_all");
}

template <>
void MpiCommunicator::run<CollectiveKind::Broadcast>(const CollectiveSignature& s, const std::byte*, std::byte* data) {
  if (s.root < 0 || s.root >= size_)
    throw CommError(fmt::format("broadcast root {} is not a rank of this team of {}", s.root, size_));
  const size_t elementSize = dtypeSize(s.dtype);
  forEachPiece(s.recvCount, [&](size_t first, int n) {
    check(MPI_Bcast(data + first * elementSize, n, mpiType(s.dtype), s.root, comm_), "MPI_Bcast");
  });
}

template <>
void MpiCommunicator::run<CollectiveKind::SendRecv>(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
  if (std::string error = sendRecvPeerError(rank_, size_, s.to, s.from); !error.empty()) throw CommError(error);
  if (std::string error = selfSendRecvError(rank_, s.to, s.from, s.sendCount, s.recvCount); !error.empty())
    throw CommError(error);
  const size_t elementSize = dtypeSize(s.dtype);
  const size_t sendBytes = s.sendCount * elementSize;
  const size_t recvBytes = s.recvCount * elementSize;
  if (s.to == rank_ && s.from == rank_) {
    if (sendBytes > 0) std::memmove(out, in, sendBytes);
    return;
  }
  // MPI forbids a send buffer that a pending receive writes: send a private copy.
  std::vector<std::byte> staged;
  if (bytesOverlap(in, sendBytes, out, recvBytes)) {
    staged.assign(in, in + sendBytes);
    in = staged.data();
  }
  exchange({{false, s.from, out, s.recvCount}, {true, s.to, const_cast<std::byte*>(in), s.sendCount}}, s.dtype,
           kSendRecvTag, "sendrecv");
}

void MpiCommunicator::collective(const CollectiveArgs& call, void*) {
  const CollectiveSignature& s = call.signature;
  if (std::string error = signatureError(s, size_); !error.empty()) throw CommError(error);
  auto* in = static_cast<const std::byte*>(call.send);
  auto* out = static_cast<std::byte*>(call.recv);
  switch (s.kind) {
    case CollectiveKind::Allreduce: return run<CollectiveKind::Allreduce>(s, in, out);
    case CollectiveKind::Allgather: return run<CollectiveKind::Allgather>(s, in, out);
    case CollectiveKind::ReduceScatter: return run<CollectiveKind::ReduceScatter>(s, in, out);
    case CollectiveKind::AllToAll: return run<CollectiveKind::AllToAll>(s, in, out);
    case CollectiveKind::Broadcast: return run<CollectiveKind::Broadcast>(s, in, out);
    case CollectiveKind::SendRecv: return run<CollectiveKind::SendRecv>(s, in, out);
  }
}

void MpiCommunicator::exchange(const std::vector<Message>& messages, DType dtype, int tag, const char* what) {
  // Pieces of one direction match in order, as MPI does not let messages
  // of one tag overtake.
  const MPI_Datatype type = mpiType(dtype);
  const size_t elementSize = dtypeSize(dtype);
  std::vector<MPI_Request> requests;
  auto post = [&](auto start, const char* call) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int status = start(&request);
    if (status == MPI_SUCCESS) {
      requests.push_back(request);
      return;
    }
    // Nothing may still write a receive buffer (or read a staged copy) once we throw.
    for (MPI_Request& pending : requests) {
      MPI_Cancel(&pending);
      MPI_Wait(&pending, MPI_STATUS_IGNORE);
    }
    check(status, call);
  };
  for (const Message& m : messages)
    forEachPiece(m.count, [&](size_t first, int n) {
      std::byte* data = m.data + first * elementSize;
      if (m.send)
        post([&](MPI_Request* r) { return MPI_Isend(data, n, type, m.peer, tag, comm_, r); }, "MPI_Isend");
      else
        post([&](MPI_Request* r) { return MPI_Irecv(data, n, type, m.peer, tag, comm_, r); }, "MPI_Irecv");
    });
  if (requests.empty()) return;
  std::vector<MPI_Status> statuses(requests.size());
  const std::string call = fmt::format("MPI_Waitall ({})", what);
  const int status = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  if (status == MPI_ERR_IN_STATUS)
    // Name the request that failed (a receive shorter than its message: truncated).
    for (const MPI_Status& st : statuses)
      if (st.MPI_ERROR != MPI_SUCCESS && st.MPI_ERROR != MPI_ERR_PENDING) check(st.MPI_ERROR, call.c_str());
  check(status, call.c_str());
}

void MpiCommunicator::barrier() { check(MPI_Barrier(comm_), "MPI_Barrier"); }

bool MpiCommunicator::groupsOverlap() const {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level == MPI_THREAD_MULTIPLE;
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm group = MPI_COMM_NULL;
  check(MPI_Comm_split(comm_, color, key, &group), "MPI_Comm_split");
  std::unique_ptr<Communicator> sub;
  try {
    sub = std::make_unique<MpiCommunicator>(group, maxElementsPerCall_);
  } catch (...) {
    MPI_Comm_free(&group);
    throw;
  }
  MPI_Comm_free(&group);  // the new communicator holds its own duplicate
  return sub;
}

void MpiCommunicator::abort(const std::string& reason) {
  // MPI_Abort ends every process of the job at once: this is the last chance
  // to say why, and the one rank that knows must say it, once. A stream's
  // thread and the host may both abort for the same failure: the second
  // waits here until the first's MPI_Abort ends the process.
  static std::mutex aborting;
  static bool told = false;
  std::lock_guard lock(aborting);
  if (!told) {
    told = true;
    // A reason the caller already rendered ("p.hir:9:7: error: ...") keeps its own severity.
    bool rendered = reason.find("error: ") != std::string::npos;
    std::string text = reason;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    int worldRank = rank();
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);  // a group's rank would not name the process
    std::fprintf(stderr, "hostir: rank %d: %s%s\n", worldRank, rendered ? "" : "error: ", text.c_str());
    std::fflush(stderr);
  }
  MPI_Abort(comm_, 1);
}

}  // namespace hostir
