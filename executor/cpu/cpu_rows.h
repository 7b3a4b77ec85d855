// The CPU backend's row operations, over the last axis of strided views:
// rms_norm, softmax, layer_norm and rope. Each row is loaded into a buffer of the compute
// type (f32 for f32, f16 and bf16, f64 for f64 and for the serial
// reference), reduced, and stored: a row is read whole before any of it is
// written, so the very view in and out is in place.
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// y = x / sqrt(mean(x²) + eps) · w, the sum of squares in f64.
void rmsNorm(GemmKind mode, const KernelCall& call);
// y = e^(x - max) / sum e^(x - max) per row.
void softmax(GemmKind mode, const KernelCall& call);
// y = (x - mean) / sqrt(var + eps) · w + b, mean and variance in f64.
void layerNorm(GemmKind mode, const KernelCall& call);
// Rotary embedding, rotate-half form, on x [T, H·D]: angles in f64.
void rope(const KernelCall& call);

}  // namespace hostir::cpu
