// Element-wise reduction kernels shared by the communicators that reduce on
// the host (in-process, and the MPI user ops for half types). Half types are
// combined in f32 and rounded back after every pairwise step, as an MPI user
// op must do.
#pragma once

#include <cstddef>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

// acc[i] = acc[i] op in[i] for i < count. Avg combines like Sum; the caller
// divides by the team size afterwards with scaleInPlace. Min and max return
// NaN when either operand is NaN. Both buffers hold `count` elements of
// `dtype`, aligned for it; they must be equal or disjoint.
void reduceInto(void* acc, const void* in, size_t count, DType dtype, ReduceOp op);

// buf[i] = buf[i] * factor, the product computed in f64 (Avg divides this way).
void scaleInPlace(void* buf, size_t count, DType dtype, double factor);

}  // namespace hostir
