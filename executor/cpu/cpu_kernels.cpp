#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <cstring>

#include "executor/cpu/cpu_attention.h"
#include "executor/cpu/cpu_elementwise.h"
#include "executor/cpu/cpu_gather.h"
#include "executor/cpu/cpu_gemm.h"
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

void runKernel(GemmKind gemm, const KernelCall& call) {
  switch (call.kind) {
    case OpKind::Linear: linear(gemm, call); return;
    case OpKind::Matmul: matmul(gemm, call); return;
    case OpKind::Add: add(gemm, call); return;
    case OpKind::Sub: sub(gemm, call); return;
    case OpKind::Mul: mul(gemm, call); return;
    case OpKind::Relu: relu(gemm, call); return;
    case OpKind::Silu: silu(gemm, call); return;
    case OpKind::Gelu: gelu(gemm, call); return;
    case OpKind::Scale: scale(gemm, call); return;
    case OpKind::RmsNorm: rmsNorm(gemm, call); return;
    case OpKind::Softmax: softmax(gemm, call); return;
    case OpKind::Attention: attention(gemm, call); return;
    case OpKind::MergeAttention: mergeAttention(gemm, call); return;
    case OpKind::GatherRows: gatherRows(call); return;
    case OpKind::ScatterAddRows: scatterAddRows(gemm, call); return;
    case OpKind::Cast: cast(call); return;
    case OpKind::Allocate:
    case OpKind::Deallocate:
    case OpKind::ShardByStream:
    case OpKind::Copy:
    case OpKind::Allreduce:
    case OpKind::Allgather:
    case OpKind::ReduceScatter:
    case OpKind::AllToAll:
    case OpKind::Broadcast:
    case OpKind::SendRecv:
    case OpKind::Wait:
    case OpKind::GetCurrentStream:
    case OpKind::SetCurrentStream:
    case OpKind::Synchronize:
    case OpKind::RecordEvent:
    case OpKind::WaitEvent:
    case OpKind::IntValue: break;  // not computations
  }
  throw std::logic_error(
      fmt::format("internal error: the CPU backend has no kernel for '{}'", signatureOf(call.kind).name));
}

}  // namespace hostir::cpu
