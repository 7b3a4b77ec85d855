#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <cstring>

#include "executor/cpu/cpu_attention.h"
#include "executor/cpu/cpu_constants.h"
#include "executor/cpu/cpu_elementwise.h"
#include "executor/cpu/cpu_gather.h"
#include "executor/cpu/cpu_gemm.h"
#include "executor/cpu/cpu_reductions.h"
#include "executor/cpu/cpu_routing.h"
#include "executor/cpu/cpu_rows.h"
#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {

void fillZero(const TensorView& t) {
  size_t size = dtypeSize(t.dtype);
  forEachRow<1>({&t}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1) {
      std::memset(ptrs[0], 0, static_cast<size_t>(n) * size);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memset(ptrs[0] + i * inner[0] * static_cast<int64_t>(size), 0, size);
  });
}

void copy(const TensorView& src, const TensorView& dst) {
  int64_t size = static_cast<int64_t>(dtypeSize(src.dtype));
  forEachRow<2>({&src, &dst}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1 && inner[1] == 1) {
      std::memmove(ptrs[1], ptrs[0], static_cast<size_t>(n * size));
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      std::memmove(ptrs[1] + i * inner[1] * size, ptrs[0] + i * inner[0] * size, static_cast<size_t>(size));
  });
}

namespace {

using Kernel = void (*)(GemmKind, const KernelCall&);

// Every kernel family's kernel; checked below to cover every family of a
// computation in ir/op_list.h.
constexpr std::pair<KernelFamily, Kernel> kKernelEntries[] = {
    {KernelFamily::Linear, linear},
    {KernelFamily::Matmul, matmul},
    {KernelFamily::Unary, unaryElementwise},
    {KernelFamily::Binary, binaryElementwise},
    {KernelFamily::Scale, scale},
    {KernelFamily::RmsNorm, rmsNorm},
    {KernelFamily::Softmax, softmax},
    {KernelFamily::Attention, attention},
    {KernelFamily::MergeAttention, mergeAttention},
    {KernelFamily::GatherRows, [](GemmKind, const KernelCall& call) { gatherRows(call); }},
    {KernelFamily::ScatterAddRows, scatterAddRows},
    {KernelFamily::Cast, [](GemmKind, const KernelCall& call) { cast(call); }},
    {KernelFamily::Where, [](GemmKind, const KernelCall& call) { where(call); }},
    {KernelFamily::Reduce, reduceAlongAxis},
    {KernelFamily::LayerNorm, layerNorm},
    {KernelFamily::Rope, [](GemmKind, const KernelCall& call) { rope(call); }},
    {KernelFamily::Bucket, [](GemmKind, const KernelCall& call) { bucket(call); }},
    {KernelFamily::Fill, [](GemmKind, const KernelCall& call) { fill(call); }},
    {KernelFamily::Iota, [](GemmKind, const KernelCall& call) { iota(call); }},
    {KernelFamily::TopK, [](GemmKind, const KernelCall& call) { topK(call); }},
};
constexpr FamilyTable<Kernel> kKernels = familyTable(kKernelEntries);
static_assert(coversEveryFamily(kKernels), "a CPU kernel for every kernel family");

}  // namespace

void runKernel(GemmKind gemm, const KernelCall& call) {
  const Kernel kernel = kKernels[static_cast<size_t>(kernelFamilyOf(call.kind))];
  if (!kernel)
    throw std::logic_error(
        fmt::format("internal error: the CPU backend has no kernel for '{}'", signatureOf(call.kind).name));
  kernel(gemm, call);
}

}  // namespace hostir::cpu
