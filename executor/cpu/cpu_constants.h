// The CPU backend's constants: fill and iota write every element of a new
// tensor (the one in their type slot, operands::Fill::type), of any dtype.
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// Every element = value (rounded to the dtype; i32 takes it truncated).
void fill(const KernelCall& call);
// Every element = its index along the axis.
void iota(const KernelCall& call);

}  // namespace hostir::cpu
