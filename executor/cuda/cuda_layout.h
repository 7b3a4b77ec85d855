// Elementwise layouts for the kernels: the iteration space of an operation
// on strided views with unit dims dropped and adjacent dims merged wherever
// every operand allows it, so most launches index at rank 1 or 2.
#pragma once

#include <initializer_list>

#include "executor/cuda/cuda_kernels.cuh"
#include "executor/tensor.h"

namespace hostir::cuda {

// `strides` holds each operand's strides over `shape`, the output first; a
// stride of 0 broadcasts the operand along that dim.
ElementwiseLayout elementwiseLayout(const Dims& shape, std::initializer_list<Dims> strides);

// Whether operand `o` covers one dense run of memory (stride 1 throughout).
bool isDense(const ElementwiseLayout& layout, int o);

// Whether every operand is rows of unit-stride elements, rows not
// overlapping: a 2-D memcpy with pitch strides[o][0] can do the copy.
bool isPitched(const ElementwiseLayout& layout);

}  // namespace hostir::cuda
