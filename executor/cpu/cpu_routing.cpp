// The CPU backend's routing layout: bucket, MoE dispatch with capacity.
#include "executor/cpu/cpu_kernels.h"

#include <cstdint>
#include <vector>

#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {

// out [E, C] (i32): row e lists the flat positions, in row-major order of
// idx, of the entries of idx equal to e, padded with -1; entries past C,
// and values outside [0, E), are dropped.
template <>
void familyKernel<KernelFamily::Bucket>(GemmKind, const KernelCall& call) {
  using O = operands::Bucket;
  const TensorView& idx = call.operand(O::idx);
  const TensorView& out = call.operand(O::out);
  const int64_t buckets = out.shape[0], capacity = out.shape[1];
  auto slot = [&](int64_t e, int64_t c) {
    return reinterpret_cast<int32_t*>(out.data()) + e * out.strides[0] + c * out.strides[1];
  };
  for (int64_t e = 0; e < buckets; ++e)
    for (int64_t c = 0; c < capacity; ++c) *slot(e, c) = -1;
  std::vector<int64_t> filled(static_cast<size_t>(buckets), 0);
  int64_t position = 0;  // row-major over idx: forEachRow keeps that order
  forEachRow<1>({&idx}, [&](auto ptrs, int64_t n, auto inner) {
    const auto* entries = reinterpret_cast<const int32_t*>(ptrs[0]);
    for (int64_t i = 0; i < n; ++i, ++position) {
      const int64_t e = entries[i * inner[0]];
      if (e < 0 || e >= buckets) continue;
      int64_t& count = filled[static_cast<size_t>(e)];
      if (count < capacity) *slot(e, count++) = static_cast<int32_t>(position);
    }
  });
}

}  // namespace hostir::cpu
