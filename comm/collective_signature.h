// What one rank brings to a collective, without its buffers, and the check
// that every rank of a rendezvous called the same one: shared by the
// communicators that match their ranks' calls themselves (in-process, copy
// engines), so that a mismatch reads the same whichever runs.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

enum class CollectiveKind { Allreduce, Allgather, ReduceScatter, Broadcast, SendRecv, Barrier };

struct CollectiveSignature {
  CollectiveKind kind = CollectiveKind::Barrier;
  size_t count = 0;  // allgather: per rank sent; reduce-scatter: per rank received; sendrecv: received
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  // sendrecv only: count elements come from `from`, sendCount go to `to`.
  size_t sendCount = 0;
  int to = 0;
  int from = 0;
};

bool reduces(CollectiveKind kind);

// "allreduce(count=8, f32, sum)", as mismatch messages show a call.
std::string describe(const CollectiveSignature& signature);

// Why the signatures of one rendezvous (one per rank, in rank order) do not
// form one collective, or "": a different kind, count, dtype, op or root,
// a broadcast root outside the team, or sendrecv pairs that do not match.
std::string findMismatch(std::span<const CollectiveSignature> signatures);

// Elements [begin, end) of part `part` when `count` elements are split into
// `parts` parts whose sizes differ by at most one.
std::pair<size_t, size_t> partRange(size_t count, int part, int parts);

}  // namespace hostir
