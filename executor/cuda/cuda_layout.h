// Elementwise layouts for the kernels: the iteration space of an operation
// on strided views with unit dims dropped and adjacent dims merged wherever
// every operand allows it, so most launches index at rank 1 or 2. Plain
// host code, shared with the kernels (which take the struct by value).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "runtime/tensor.h"

namespace hostir::cuda {

inline constexpr int kMaxLayoutRank = 8;
inline constexpr int kMaxLayoutOperands = 4;

// The iteration space of an elementwise kernel: `rank` dims (outermost
// first) and each operand's strides in elements. Operand 0 is the output.
struct ElementwiseLayout {
  int rank = 0;
  int operands = 0;
  int64_t numel = 0;
  int64_t shape[kMaxLayoutRank] = {};
  int64_t strides[kMaxLayoutOperands][kMaxLayoutRank] = {};
};

// `strides` holds each operand's strides over `shape`, the output first; a
// stride of 0 broadcasts the operand along that dim.
ElementwiseLayout elementwiseLayout(const Dims& shape, std::initializer_list<Dims> strides);

// Whether operand `o` covers one dense run of memory (stride 1 throughout).
bool isDense(const ElementwiseLayout& layout, int o);

// Whether every operand is rows of unit-stride elements, rows not
// overlapping: a 2-D memcpy with pitch strides[o][0] can do the copy.
bool isPitched(const ElementwiseLayout& layout);

}  // namespace hostir::cuda
