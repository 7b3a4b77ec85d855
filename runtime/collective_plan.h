// Turns a communication on views (strided, any axis) into what a
// Communicator takes: contiguous send/receive buffers, with pack and unpack
// copies around the call where the views need them. Backend-agnostic: each
// backend runs the copies with its own kernels.
#pragma once

#include <functional>
#include <vector>

#include "runtime/backend.h"

namespace hostir {

struct CopyStep {
  TensorView src;
  TensorView dst;
};

struct CollectivePlan {
  std::vector<CopyStep> pack;  // before the call
  OpKind kind = OpKind::Allreduce;
  TensorView send;       // contiguous
  TensorView recv;       // contiguous; the same buffer as send when in place
  size_t count = 0;      // elements per rank (allgather, reduce_scatter) or in total; sendrecv: received
  size_t sendCount = 0;  // sendrecv: elements sent
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  int to = 0, from = 0;          // sendrecv
  std::vector<CopyStep> unpack;  // after the call
  std::vector<TensorView> temporaries;

  // Calls the communicator with the plan's buffers.
  void communicate(Communicator& comm, void* nativeStream = nullptr) const;
};

using AllocateTemporary = std::function<TensorView(DType, const Dims&)>;

CollectivePlan planCollective(const CollectiveCall& call, int world, const AllocateTemporary& allocate);

}  // namespace hostir
