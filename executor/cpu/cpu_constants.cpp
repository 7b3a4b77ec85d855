#include "executor/cpu/cpu_constants.h"

#include <array>

#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {

void fill(const KernelCall& call) {
  const TensorView& out = call.operand(operands::Fill::type);
  const double value = call.scalars[operands::Fill::value];
  const auto size = static_cast<int64_t>(dtypeSize(out.dtype));
  forEachRow<1>({&out}, [&](auto ptrs, int64_t n, auto inner) {
    for (int64_t i = 0; i < n; ++i) store<double>(out.dtype, ptrs[0] + i * inner[0] * size, value);
  });
}

void iota(const KernelCall& call) {
  const TensorView& out = call.operand(operands::Iota::type);
  if (out.numel() == 0) return;
  const auto axis = static_cast<size_t>(call.integer(operands::Iota::axis));
  const auto size = static_cast<int64_t>(dtypeSize(out.dtype));
  // Row-major over out's shape, each element's index kept per axis.
  std::array<int64_t, kMaxTensorRank> index{};
  const int64_t total = out.numel();
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < out.rank(); ++d) offset += index[d] * out.strides[d];
    store<double>(out.dtype, out.data() + offset * size, out.rank() ? static_cast<double>(index[axis]) : 0.0);
    for (size_t d = out.rank(); d-- > 0;) {
      if (++index[d] < out.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace hostir::cpu
