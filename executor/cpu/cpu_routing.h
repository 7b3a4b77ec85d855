// The CPU backend's routing layout: bucket, MoE dispatch with capacity.
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// out [E, C] (i32): row e lists the flat positions, in row-major order of
// idx, of the entries of idx equal to e, padded with -1; entries past C,
// and values outside [0, E), are dropped.
void bucket(const KernelCall& call);

}  // namespace hostir::cpu
