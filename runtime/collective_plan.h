// Turns a communication on views (strided, any axis) into what a
// Communicator takes: contiguous send/receive buffers, with pack and unpack
// copies around the call where the views need them, chosen by the
// collective's shape rule (ir/collectives.h), and the call's signature.
// Backend-agnostic: each backend runs the copies with its own kernels.
#pragma once

#include <functional>
#include <vector>

#include "comm/collective_signature.h"
#include "runtime/backend.h"

namespace hostir {

struct CopyStep {
  TensorView src;
  TensorView dst;
};

struct CollectivePlan {
  std::vector<CopyStep> pack;  // before the call
  // What every rank agrees on; its counts are send's and recv's elements.
  CollectiveSignature signature;
  TensorView send;               // contiguous, its rank blocks in rank order
  TensorView recv;               // contiguous; the same buffer as send when in place
  std::vector<CopyStep> unpack;  // after the call
  std::vector<TensorView> temporaries;

  // Calls the communicator's one entry point with the plan's buffers.
  void communicate(Communicator& comm, void* nativeStream = nullptr) const;
};

// The signature of a communication as the evaluator issued it: what every
// rank must agree on (the program check and `run --unchecked` compare it,
// the communicators receive it).
CollectiveSignature collectiveSignature(const CollectiveCall& call);

using AllocateTemporary = std::function<TensorView(DType, const Dims&)>;

CollectivePlan planCollective(const CollectiveCall& call, int world, const AllocateTemporary& allocate);

}  // namespace hostir
