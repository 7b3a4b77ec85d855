#include "comm/mpi_communicator.h"

#include <cstdio>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&threadLevel_);
  } else {
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

void MpiCommunicator::allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void*) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  // MPI forbids aliased buffers other than MPI_IN_PLACE, so any overlap
  // becomes in place; then ranks that alias alike all use MPI_IN_PLACE.
  const bool inPlace = bytesOverlap(in, bytes, out, bytes) || in == out;
  if (inPlace && in != out) std::memmove(out, in, bytes);
  forEachPiece(count, [&](size_t first, int n) {
    const void* source = inPlace ? MPI_IN_PLACE : in + first * elementSize;
    check(MPI_Allreduce(source, out + first * elementSize, n, mpiType(dtype), mpiOp(dtype, op), comm_),
          "MPI_Allreduce");
  });
  if (op == ReduceOp::Avg) scaleInPlace(out, count, dtype, 1.0 / size_);
}

void MpiCommunicator::allgather(const void* send, void* recv, size_t count, DType dtype, void*) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  const MPI_Datatype type = mpiType(dtype);
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

void MpiCommunicator::reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void*) {
  const size_t elementSize = dtypeSize(dtype);
  const size_t bytes = count * elementSize;
  auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  const MPI_Datatype type = mpiType(dtype);
  const MPI_Op mpiReduceOp = mpiOp(dtype, op);
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
  if (count <= maxElementsPerCall_) {
    check(MPI_Reduce_scatter_block(in, target, static_cast<int>(count), type, mpiReduceOp, comm_),
          "MPI_Reduce_scatter_block");
  } else {
    // A block too long for one int count: reduce each block onto its rank in pieces.
    for (int root = 0; root < size_; ++root)
      forEachPiece(count, [&](size_t first, int n) {
        const std::byte* source = in + (root * count + first) * elementSize;
        void* destination = root == rank_ ? target + first * elementSize : nullptr;
        check(MPI_Reduce(source, destination, n, type, mpiReduceOp, root, comm_), "MPI_Reduce");
      });
  }
  if (op == ReduceOp::Avg) scaleInPlace(target, count, dtype, 1.0 / size_);
  if (target != out) std::memcpy(out, target, bytes);
}

void MpiCommunicator::broadcast(void* buffer, size_t count, DType dtype, int root, void*) {
  if (root < 0 || root >= size_)
    throw CommError(fmt::format("broadcast root {} is not a rank of this team of {}", root, size_));
  const size_t elementSize = dtypeSize(dtype);
  auto* data = static_cast<std::byte*>(buffer);
  forEachPiece(count, [&](size_t first, int n) {
    check(MPI_Bcast(data + first * elementSize, n, mpiType(dtype), root, comm_), "MPI_Bcast");
  });
}

void MpiCommunicator::sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from,
                               DType dtype, void*) {
  if (std::string error = sendRecvPeerError(rank_, size_, to, from); !error.empty()) throw CommError(error);
  if (std::string error = selfSendRecvError(rank_, to, from, sendCount, recvCount); !error.empty())
    throw CommError(error);
  const size_t elementSize = dtypeSize(dtype);
  const size_t sendBytes = sendCount * elementSize;
  const size_t recvBytes = recvCount * elementSize;
  auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  if (to == rank_ && from == rank_) {
    if (sendBytes > 0) std::memmove(out, in, sendBytes);
    return;
  }
  // MPI forbids a send buffer that a pending receive writes: send a private copy.
  std::vector<std::byte> staged;
  if (bytesOverlap(in, sendBytes, out, recvBytes)) {
    staged.assign(in, in + sendBytes);
    in = staged.data();
  }

  // Every piece is posted before any is waited for; pieces of one direction
  // match in order, as MPI does not let messages of one tag overtake.
  const MPI_Datatype type = mpiType(dtype);
  std::vector<MPI_Request> requests;
  requests.reserve((sendCount + maxElementsPerCall_ - 1) / maxElementsPerCall_ +
                   (recvCount + maxElementsPerCall_ - 1) / maxElementsPerCall_);
  auto post = [&](auto start, const char* call) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int status = start(&request);
    if (status == MPI_SUCCESS) {
      requests.push_back(request);
      return;
    }
    // Nothing may still write recv (or read the staged copy) once we throw.
    for (MPI_Request& pending : requests) {
      MPI_Cancel(&pending);
      MPI_Wait(&pending, MPI_STATUS_IGNORE);
    }
    check(status, call);
  };
  forEachPiece(recvCount, [&](size_t first, int n) {
    post([&](MPI_Request* r) { return MPI_Irecv(out + first * elementSize, n, type, from, kSendRecvTag, comm_, r); },
         "MPI_Irecv");
  });
  forEachPiece(sendCount, [&](size_t first, int n) {
    post([&](MPI_Request* r) { return MPI_Isend(in + first * elementSize, n, type, to, kSendRecvTag, comm_, r); },
         "MPI_Isend");
  });
  if (requests.empty()) return;
  std::vector<MPI_Status> statuses(requests.size());
  const int status = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  if (status == MPI_ERR_IN_STATUS)
    // Name the request that failed (a receive shorter than its message: truncated).
    for (const MPI_Status& s : statuses)
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) check(s.MPI_ERROR, "MPI_Waitall (sendrecv)");
  check(status, "MPI_Waitall (sendrecv)");
}

void MpiCommunicator::barrier() { check(MPI_Barrier(comm_), "MPI_Barrier"); }

void MpiCommunicator::abort(const std::string& reason) {
  // MPI_Abort ends every process of the job at once: this is the last chance
  // to say why, and the one rank that knows must say it.
  // A reason the caller already rendered ("p.hir:9:7: error: ...") keeps its own severity.
  bool rendered = reason.find("error: ") != std::string::npos;
  std::string text = reason;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::fprintf(stderr, "hostir: rank %d: %s%s\n", rank(), rendered ? "" : "error: ", text.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_, 1);
}

}  // namespace hostir
