// The CPU backend's kernels on strided views: elementwise copy, add and
// zero-fill, GEMMs through OpenBLAS (f16/bf16 stored as such, computed in
// f32), and naive f64-accumulating GEMMs for the serial reference.
#pragma once

#include "runtime/tensor.h"

namespace hostir::cpu {

void fillZero(const TensorView& t);
void copy(const TensorView& src, const TensorView& dst);
void add(const TensorView& a, const TensorView& b, const TensorView& out);

enum class GemmKind { Blas, ReferenceF64 };

// out = x · wᵀ (+ bias); x [.., K], w [N, K], out [.., N].
void linear(GemmKind kind, const TensorView& x, const TensorView& w, const TensorView* bias, const TensorView& out);
// out = a · b; a [M, K], b [K, N].
void matmul(GemmKind kind, const TensorView& a, const TensorView& b, const TensorView& out);

}  // namespace hostir::cpu
