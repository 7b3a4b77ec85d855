// Host tensors: the runtime's contiguous tensors in host memory, for program
// inputs and outputs. Seeded inputs, a rank's shard of a global tensor, and
// the global tensor gathered from every rank's shard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "runtime/evaluator.h"
#include "runtime/tensor.h"

namespace hostir {

// A host tensor: contiguous, C order, little endian.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;   // empty for a 0-d tensor (one element)
  std::vector<std::byte> data;  // bf16 as raw bits
};

// A global tensor the caller owns for the length of one run: contiguous, C
// order; read, never copied whole.
struct HostTensorRef {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
};

HostTensor makeHostTensor(DType dtype, const Dims& shape);
HostTensorRef refOf(const HostTensor& tensor);
// A view of a host tensor's bytes (the tensor must outlive the view).
TensorView viewOf(HostTensor& tensor);

// Rank `rank`'s part of the seeded input: element i of the global tensor is
// uniform in [-1, 1), a function of (seed, name, i) only, so every team size
// sees the same global tensor. An i32 tensor holds indices: element i is
// uniform among the integers -1, 0, ..., n - 1, n the global extent of its
// first axis (1 for a 0-d tensor), so that it indexes the rows of a tensor
// at least that long, -1 (no row) included.
HostTensor seededShard(uint64_t seed, const TensorSpec& spec, int64_t rank, int64_t world);
HostTensor seededGlobal(uint64_t seed, const TensorSpec& spec);

// Rank `rank`'s shard of a global tensor (the whole tensor when not sharded).
HostTensor shardOf(const HostTensor& global, const TensorSpec& spec, int64_t rank, int64_t world);

// Rank `rank`'s shard of a caller's global tensor, as a view of the
// caller's memory (strided when the shard axis is not the outermost).
TensorView shardView(const HostTensorRef& global, const TensorSpec& spec, int64_t rank, int64_t world);

// The global tensor from every rank's shard; collective (every rank calls it).
HostTensor gatherGlobal(Communicator& comm, const HostTensor& local, const TensorSpec& spec);
// The same, written by rank 0 into `global` (the global tensor's bytes,
// contiguous; ignored on the other ranks). A sharded tensor only: an
// unsharded one needs no communication.
void gatherGlobalInto(Communicator& comm, const HostTensor& local, const TensorSpec& spec, std::byte* global);
// Every rank's copy of a tensor each rank holds whole, in rank order, on
// rank 0 (empty on the others); collective.
std::vector<HostTensor> gatherCopies(Communicator& comm, const HostTensor& local);

}  // namespace hostir
