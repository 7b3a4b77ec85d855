// Program inputs and outputs on the host: seeded inputs, a rank's shard of
// a global tensor, and the global tensor gathered from every rank's shard.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.h"
#include "executor/evaluator.h"
#include "executor/npy.h"
#include "executor/tensor.h"

namespace hostir {

// A host tensor: contiguous, C order (the same layout as a .npy file).
using HostTensor = NpyArray;

HostTensor makeHostTensor(DType dtype, const Dims& shape);
// A view of a host tensor's bytes (the tensor must outlive the view).
TensorView viewOf(HostTensor& tensor);

// Rank `rank`'s part of the seeded input: element i of the global tensor is
// uniform in [-1, 1), a function of (seed, name, i) only, so every team size
// sees the same global tensor.
HostTensor seededShard(uint64_t seed, const TensorSpec& spec, int64_t rank, int64_t world);
HostTensor seededGlobal(uint64_t seed, const TensorSpec& spec);

// Rank `rank`'s shard of a global tensor (the whole tensor when not sharded).
HostTensor shardOf(const HostTensor& global, const TensorSpec& spec, int64_t rank, int64_t world);

// The global tensor from every rank's shard; collective (every rank calls it).
HostTensor gatherGlobal(Communicator& comm, const HostTensor& local, const TensorSpec& spec);

}  // namespace hostir
