// The CPU backend's reductions along one axis of a strided view: sum, mean
// and max (the Reduce kernel family), and top_k's selection along the last
// axis. They accumulate in f64 whatever the dtype; max propagates NaN as
// NumPy's does, and top_k ranks NaN above every number (as NumPy's sort
// places it last, after the largest).
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// out = x reduced along call.integer(operands::Reduce::axis), which out lacks.
void reduceAlongAxis(GemmKind mode, const KernelCall& call);
// out and indices: each row's k largest of x, in descending order, ties
// (and NaNs among themselves) to the lower position.
void topK(const KernelCall& call);

}  // namespace hostir::cpu
