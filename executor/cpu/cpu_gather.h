// The CPU backend's row gather and scatter: gather_rows (y = x[idx] on
// rows, -1 giving a zero row) and scatter_add_rows (y[idx] += src, -1
// skipped, in row-major order of idx). Every index is checked before any
// row moves: one out of range throws IndexOutOfRange, which the backend
// turns into an error at the statement.
#pragma once

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

void gatherRows(const KernelCall& call);
// Adds in f32 (f64 for f64, and in the serial reference).
void scatterAddRows(GemmKind mode, const KernelCall& call);

}  // namespace hostir::cpu
