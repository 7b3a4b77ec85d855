#include "executor/cuda/cuda_layout.h"

#include <stdexcept>

namespace hostir::cuda {

ElementwiseLayout elementwiseLayout(const Dims& shape, std::initializer_list<Dims> strides) {
  ElementwiseLayout layout;
  layout.operands = static_cast<int>(strides.size());
  if (layout.operands > kMaxLayoutOperands || shape.size > static_cast<size_t>(kMaxLayoutRank))
    throw std::logic_error("internal error: elementwise layout too large");
  layout.numel = 1;
  for (int64_t extent : shape) layout.numel *= extent;
  if (layout.numel == 0) return layout;
  for (size_t d = 0; d < shape.size; ++d) {
    if (shape[d] == 1) continue;  // its stride never matters
    const int r = layout.rank;
    // Merge into the previous dim when, for every operand, stepping the
    // previous dim once is stepping this one shape[d] times.
    bool merges = r > 0;
    int o = 0;
    for (const Dims& s : strides) {
      merges = merges && layout.strides[o][r - 1] == s[d] * shape[d];
      ++o;
    }
    if (merges) {
      layout.shape[r - 1] *= shape[d];
      o = 0;
      for (const Dims& s : strides) layout.strides[o++][r - 1] = s[d];
      continue;
    }
    layout.shape[r] = shape[d];
    o = 0;
    for (const Dims& s : strides) layout.strides[o++][r] = s[d];
    ++layout.rank;
  }
  return layout;
}

bool isDense(const ElementwiseLayout& layout, int o) {
  return layout.rank == 0 || (layout.rank == 1 && layout.strides[o][0] == 1);
}

bool isPitched(const ElementwiseLayout& layout) {
  if (layout.rank != 2) return false;
  for (int o = 0; o < layout.operands; ++o)
    if (layout.strides[o][1] != 1 || layout.strides[o][0] < layout.shape[1]) return false;
  return true;
}

}  // namespace hostir::cuda
