// The CPU backend's elementwise computations on strided views: add, sub and
// mul (b broadcast to a's shape) and the other binary operations, relu,
// silu, gelu and the other unary ones, scale, cast and where. f32
// runs as f32 through the vector loops of executor/cpu/vector_loops.h, f16
// and bf16 are computed in f32, f64 in f64; GemmKind::ReferenceF64 (the
// serial reference) computes every one of them in f64 with <cmath>.
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// The Unary family (y = f(x)) and the Binary family (y = f(a, b), b
// broadcast to a's shape) are their familyKernel (cpu_kernels.h), each by
// its table of operations in cpu_elementwise.cpp.
void scale(GemmKind mode, const KernelCall& call);
// Between f32, f16, bf16 and f64, rounding to nearest even once (f64 to f16
// and bf16 too: never through a rounded f32).
void cast(const KernelCall& call);
// out = a where c is not zero, else b (c and b broadcast to a's shape; c of any dtype).
void where(const KernelCall& call);

}  // namespace hostir::cpu
