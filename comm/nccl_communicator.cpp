#include "comm/nccl_communicator.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "comm/sendrecv_peers.h"

namespace hostir {
namespace {

// The id travels through the host communicator as f32 elements: every
// communicator moves those bit for bit.
static_assert(sizeof(ncclUniqueId) % sizeof(float) == 0);
constexpr size_t kIdWords = sizeof(ncclUniqueId) / sizeof(float);

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
    case DType::F32: return ncclFloat;
    case DType::F64: return ncclDouble;
    case DType::F16: return ncclHalf;
    case DType::BF16: return ncclBfloat16;
    case DType::I32: return ncclInt32;
  }
  throw CommError("nccl: unsupported dtype");
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Avg: return ncclAvg;
  }
  throw CommError("nccl: unsupported reduction");
}

void checkCuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw CommError(fmt::format("nccl: {} failed: {}", call, cudaGetErrorString(status)));
}

// NCCL's own message, with the last error it logged for `comm` when there is one.
void checkNccl(ncclResult_t status, const char* call, ncclComm_t comm = nullptr) {
  if (status == ncclSuccess) return;
  const char* detail = ncclGetLastError(comm);
  throw CommError(fmt::format("nccl: {} failed: {}{}{}", call, ncclGetErrorString(status),
                              detail && *detail ? ": " : "", detail ? detail : ""));
}

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

// A host collective that every rank reaches: whether any rank failed, so that
// no rank goes on alone into ncclCommInitRank (which would wait forever).
bool anyFailed(Communicator& hostComm, bool failed) {
  double flag = failed ? 1.0 : 0.0;
  hostComm.allreduce(&flag, &flag, 1, DType::F64, ReduceOp::Max);
  return flag != 0.0;
}

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& hostComm, int device) : NcclCommunicator(nullptr, hostComm, device) {}

NcclCommunicator::NcclCommunicator(std::unique_ptr<Communicator> ownedHost, Communicator& hostComm, int device)
    : ownedHost_(std::move(ownedHost)),
      hostComm_(hostComm),
      device_(device),
      rank_(hostComm.rank()),
      size_(hostComm.size()) {
  // Every rank reports whether its device and (rank 0) the id are ready
  // before anyone enters the blocking ncclCommInitRank.
  std::string problem;
  std::array<float, kIdWords> idWords{};
  try {
    checkCuda(cudaSetDevice(device_), "cudaSetDevice");
    checkCuda(cudaStreamCreateWithFlags(&ownStream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    checkCuda(cudaMalloc(&barrierWord_, sizeof(float)), "cudaMalloc");
    if (rank_ == 0) {
      ncclUniqueId id;
      checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      std::memcpy(idWords.data(), &id, sizeof(id));
    }
  } catch (const CommError& e) {
    problem = e.what();
  }
  try {
    if (anyFailed(hostComm_, !problem.empty()))
      throw CommError(problem.empty() ? "nccl: another rank could not set up its device" : problem);
    hostComm_.broadcast(idWords.data(), kIdWords, DType::F32, 0);
    ncclUniqueId id;
    std::memcpy(&id, idWords.data(), sizeof(id));
    ncclResult_t status = ncclCommInitRank(&comm_, size_, id, rank_);
    if (status != ncclSuccess) {
      comm_ = nullptr;
      checkNccl(status, "ncclCommInitRank");
    }
  } catch (...) {
    // The destructor does not run for a constructor that throws.
    if (barrierWord_) cudaFree(barrierWord_);
    if (ownStream_) cudaStreamDestroy(ownStream_);
    throw;
  }
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  std::unique_ptr<Communicator> group = hostComm_.split(color, key);
  Communicator& host = *group;
  return std::unique_ptr<Communicator>(new NcclCommunicator(std::move(group), host, device_));
}

NcclCommunicator::~NcclCommunicator() {
  std::lock_guard lock(abortMutex_);
  cudaSetDevice(device_);
  if (comm_ && !aborted_) {
    // Pending work was waited for by the backend; destroy frees the resources.
    ncclCommDestroy(comm_);
  }
  cudaFree(barrierWord_);
  cudaStreamDestroy(ownStream_);
}

ncclComm* NcclCommunicator::handle() {
  std::lock_guard lock(abortMutex_);
  if (aborted_) throw CommError("nccl: the team was aborted: " + abortReason_);
  return comm_;
}

CUstream_st* NcclCommunicator::streamOf(void* stream) const {
  return stream ? static_cast<cudaStream_t>(stream) : ownStream_;
}

void NcclCommunicator::finish(void* stream) {
  if (!stream) checkCuda(cudaStreamSynchronize(ownStream_), "cudaStreamSynchronize");
}

const void* NcclCommunicator::staged(const void* send, size_t bytes, CUstream_st* stream, void** scratch) {
  checkCuda(cudaMallocAsync(scratch, bytes, stream), "cudaMallocAsync");
  checkCuda(cudaMemcpyAsync(*scratch, send, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  return *scratch;
}

void NcclCommunicator::release(void* scratch, CUstream_st* stream) {
  if (scratch) checkCuda(cudaFreeAsync(scratch, stream), "cudaFreeAsync");
}

template <>
void NcclCommunicator::run<CollectiveKind::Allreduce>(const CollectiveSignature& sig, const void* send, void* recv,
                                                      cudaStream_t s) {
  ncclComm_t comm = handle();
  const size_t count = sig.sendCount;
  if (count == 0) return;  // every rank skips it alike
  const size_t bytes = count * dtypeSize(sig.dtype);
  void* scratch = nullptr;
  // NCCL allows send == recv, not a partial overlap.
  if (send != recv && overlaps(send, bytes, recv, bytes)) send = staged(send, bytes, s, &scratch);
  checkNccl(ncclAllReduce(send, recv, count, ncclType(sig.dtype), ncclOp(sig.op), comm, s), "ncclAllReduce", comm);
  release(scratch, s);
}

template <>
void NcclCommunicator::run<CollectiveKind::Allgather>(const CollectiveSignature& sig, const void* send, void* recv,
                                                      cudaStream_t s) {
  ncclComm_t comm = handle();
  const size_t count = sig.sendCount;
  if (count == 0) return;
  const size_t bytes = count * dtypeSize(sig.dtype);
  const void* inPlace = static_cast<const std::byte*>(recv) + static_cast<size_t>(rank_) * bytes;
  void* scratch = nullptr;
  // In place means send is block rank() of recv; any other overlap goes through a copy.
  if (send != inPlace && overlaps(send, bytes, recv, bytes * static_cast<size_t>(size_)))
    send = staged(send, bytes, s, &scratch);
  checkNccl(ncclAllGather(send, recv, count, ncclType(sig.dtype), comm, s), "ncclAllGather", comm);
  release(scratch, s);
}

template <>
void NcclCommunicator::run<CollectiveKind::ReduceScatter>(const CollectiveSignature& sig, const void* send, void* recv,
                                                          cudaStream_t s) {
  ncclComm_t comm = handle();
  const size_t count = sig.recvCount;
  if (count == 0) return;
  const size_t bytes = count * dtypeSize(sig.dtype);
  const void* inPlace = static_cast<const std::byte*>(send) + static_cast<size_t>(rank_) * bytes;
  void* scratch = nullptr;
  // In place means recv is block rank() of send; any other overlap goes through a copy.
  if (recv != inPlace && overlaps(send, bytes * static_cast<size_t>(size_), recv, bytes))
    send = staged(send, bytes * static_cast<size_t>(size_), s, &scratch);
  checkNccl(ncclReduceScatter(send, recv, count, ncclType(sig.dtype), ncclOp(sig.op), comm, s), "ncclReduceScatter",
            comm);
  release(scratch, s);
}

template <>
void NcclCommunicator::run<CollectiveKind::AllToAll>(const CollectiveSignature& sig, const void* send, void* recv,
                                                     cudaStream_t s) {
  ncclComm_t comm = handle();
  const size_t part = sig.sendCount / static_cast<size_t>(size_);
  if (part == 0) return;  // every rank skips it alike: the counts agree
  const size_t bytes = sig.sendCount * dtypeSize(sig.dtype);
  const size_t partBytes = part * dtypeSize(sig.dtype);
  void* scratch = nullptr;
  // A receive may land before the sends have read everything: send a copy.
  if (overlaps(send, bytes, recv, bytes)) send = staged(send, bytes, s, &scratch);
  checkNccl(ncclGroupStart(), "ncclGroupStart", comm);
  ncclResult_t status = ncclSuccess;
  const char* call = "ncclSend";
  for (int q = 0; q < size_ && status == ncclSuccess; ++q) {
    const size_t at = static_cast<size_t>(q) * partBytes;
    call = "ncclSend";
    status = ncclSend(static_cast<const std::byte*>(send) + at, part, ncclType(sig.dtype), q, comm, s);
    if (status != ncclSuccess) break;
    call = "ncclRecv";
    status = ncclRecv(static_cast<std::byte*>(recv) + at, part, ncclType(sig.dtype), q, comm, s);
  }
  // The group must be closed even when a call in it failed.
  const ncclResult_t ended = ncclGroupEnd();
  release(scratch, s);
  checkNccl(status, call, comm);
  checkNccl(ended, "ncclGroupEnd", comm);
}

template <>
void NcclCommunicator::run<CollectiveKind::Broadcast>(const CollectiveSignature& sig, const void*, void* buffer,
                                                      cudaStream_t s) {
  ncclComm_t comm = handle();
  if (sig.recvCount == 0) return;
  checkNccl(ncclBroadcast(buffer, buffer, sig.recvCount, ncclType(sig.dtype), sig.root, comm, s), "ncclBroadcast",
            comm);
}

template <>
void NcclCommunicator::run<CollectiveKind::SendRecv>(const CollectiveSignature& sig, const void* send, void* recv,
                                                     cudaStream_t s) {
  ncclComm_t comm = handle();
  if (std::string error = sendRecvPeerError(rank_, size_, sig.to, sig.from); !error.empty())
    throw CommError("nccl: " + error);
  if (std::string error = selfSendRecvError(rank_, sig.to, sig.from, sig.sendCount, sig.recvCount); !error.empty())
    throw CommError("nccl: " + error);
  const size_t sendBytes = sig.sendCount * dtypeSize(sig.dtype);
  const size_t recvBytes = sig.recvCount * dtypeSize(sig.dtype);
  const bool local = sig.to == rank_ && sig.from == rank_;
  if (local && send == recv) return;  // nothing to move
  void* scratch = nullptr;
  // The receive may land before the send has read everything: send a copy.
  if (overlaps(send, sendBytes, recv, recvBytes)) send = staged(send, sendBytes, s, &scratch);
  if (local) {
    // A local copy needs no NCCL; the staging above makes it a memmove.
    if (sendBytes > 0)
      checkCuda(cudaMemcpyAsync(recv, send, sendBytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
    release(scratch, s);
    return;
  }
  // Both sides skip a zero count alike, since the counts of a pair agree.
  checkNccl(ncclGroupStart(), "ncclGroupStart", comm);
  ncclResult_t status = ncclSuccess;
  const char* call = "ncclSend";
  if (sig.sendCount > 0) status = ncclSend(send, sig.sendCount, ncclType(sig.dtype), sig.to, comm, s);
  if (status == ncclSuccess && sig.recvCount > 0) {
    call = "ncclRecv";
    status = ncclRecv(recv, sig.recvCount, ncclType(sig.dtype), sig.from, comm, s);
  }
  // The group must be closed even when a call in it failed.
  const ncclResult_t ended = ncclGroupEnd();
  release(scratch, s);
  checkNccl(status, call, comm);
  checkNccl(ended, "ncclGroupEnd", comm);
}

void NcclCommunicator::collective(const CollectiveArgs& call, void* stream) {
  const CollectiveSignature& s = call.signature;
  if (std::string error = signatureError(s, size_); !error.empty()) throw CommError("nccl: " + error);
  cudaStream_t native = streamOf(stream);
  switch (s.kind) {
    case CollectiveKind::Allreduce: run<CollectiveKind::Allreduce>(s, call.send, call.recv, native); break;
    case CollectiveKind::Allgather: run<CollectiveKind::Allgather>(s, call.send, call.recv, native); break;
    case CollectiveKind::ReduceScatter: run<CollectiveKind::ReduceScatter>(s, call.send, call.recv, native); break;
    case CollectiveKind::AllToAll: run<CollectiveKind::AllToAll>(s, call.send, call.recv, native); break;
    case CollectiveKind::Broadcast: run<CollectiveKind::Broadcast>(s, call.send, call.recv, native); break;
    case CollectiveKind::SendRecv: run<CollectiveKind::SendRecv>(s, call.send, call.recv, native); break;
  }
  finish(stream);
}

void NcclCommunicator::barrier() { allreduce(barrierWord_, barrierWord_, 1, DType::F32, ReduceOp::Sum, nullptr); }

void NcclCommunicator::abort(const std::string& reason) {
  {
    std::lock_guard lock(abortMutex_);
    if (aborted_) return;
    aborted_ = true;
    abortReason_ = reason;
    // Ends this rank's NCCL kernels, which may be waiting for a failed peer.
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  hostComm_.abort(reason);
}

std::optional<std::string> NcclCommunicator::asyncError() {
  std::lock_guard lock(abortMutex_);
  if (aborted_) return "the team was aborted: " + abortReason_;
  ncclResult_t error = ncclSuccess;
  if (ncclCommGetAsyncError(comm_, &error) != ncclSuccess || error == ncclSuccess || error == ncclInProgress)
    return std::nullopt;
  const char* detail = ncclGetLastError(comm_);
  return fmt::format("{}{}{}", ncclGetErrorString(error), detail && *detail ? ": " : "", detail ? detail : "");
}

}  // namespace hostir
