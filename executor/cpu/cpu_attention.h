// The CPU backend's attention and merge_attention.
//
// attention under GemmKind::Blas runs per head on blocks of query rows and
// key rows, as FlashAttention does: the scores of one block, Q_b · K_bᵀ
// scaled by 1/√D, come from one GEMM, are masked (causal), folded into each
// row's running maximum and sum (the online softmax), and P_b · V_b is
// added to the row's output by a second GEMM. The score block is bounded
// (kQueryBlock × kKeyBlock elements) whatever the sequence lengths, and
// with `causal` the key blocks no row of a query block sees are skipped
// (and, on the diagonal, the scores no row of a group of rows sees).
// f32 and f64 operands are read in place; f16 and bf16 blocks are
// converted to f32 first. The serial reference (GemmKind::ReferenceF64)
// is the textbook formula in f64, row by row.
#pragma once

#include <cstdint>

#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// Query rows and key rows per block of the GEMM path; where the causal
// diagonal crosses a block, its query rows go in groups of kDiagonalRows,
// each computing only the scores its rows see.
inline constexpr int64_t kQueryBlock = 128;
inline constexpr int64_t kKeyBlock = 512;
inline constexpr int64_t kDiagonalRows = 32;

}  // namespace hostir::cpu
