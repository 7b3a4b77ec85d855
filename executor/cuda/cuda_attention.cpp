#include "executor/cuda/cuda_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>

#include "executor/cuda/cuda_attention.cuh"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_compute.h"
#include "executor/cuda/cuda_copy.h"
#include "executor/cuda/cuda_gemm.h"
#include "ir/byte_size.h"

namespace hostir::cuda {
namespace {

std::atomic<size_t> scoresBudget{size_t{64} << 20};

// The shape of one attention call, from its operands and scalars.
struct AttentionShape {
  int64_t queries = 0, keys = 0, heads = 0, kvHeads = 0, headDim = 0;
  int64_t group = 0;  // query heads per key/value head
  bool causal = false;
  int64_t qOffset = 0, kOffset = 0;
};

AttentionShape shapeOf(const KernelCall& call) {
  using O = operands::Attention;
  AttentionShape s;
  s.queries = call.operand(O::q).shape[0];
  s.keys = call.operand(O::k).shape[0];
  s.heads = call.integer(O::heads);
  s.kvHeads = call.integer(O::kv_heads) > 0 ? call.integer(O::kv_heads) : s.heads;
  if (s.heads <= 0 || s.heads % s.kvHeads != 0)
    throw std::logic_error(fmt::format("internal error: attention with {} heads and {} kv heads", s.heads, s.kvHeads));
  s.headDim = call.operand(O::q).shape[1] / s.heads;
  s.group = s.heads / s.kvHeads;
  s.causal = call.flag(O::causal);
  s.qOffset = call.integer(O::q_offset);
  s.kOffset = call.integer(O::k_offset);
  return s;
}

void requireUnitColumns(const TensorView& t, const char* role) {
  if (t.rank() != 2 || (t.shape[1] > 1 && t.strides[1] != 1))
    throw std::logic_error(
        fmt::format("internal error: attention's {} is not rows of unit stride: {}", role, t.describe()));
}

const std::byte* elementAt(const TensorView& t, int64_t row, int64_t column) {
  return t.data() + (row * t.strides[0] + column) * static_cast<int64_t>(dtypeSize(t.dtype));
}

// The keys a block of query rows [first, first + rows) sees: all of them,
// or with a causal mask those up to the one its last row sees.
int64_t keysSeen(const AttentionShape& s, int64_t first, int64_t rows) {
  return s.causal ? causalKeysSeen(first + rows - 1, s.qOffset, s.kOffset, s.keys) : s.keys;
}

// Stream-ordered scratch for `what`; running out is the statement's error.
std::shared_ptr<Buffer> scratch(const ComputeContext& context, size_t bytes, const char* what) {
  try {
    return context.memory.allocateScratch(bytes, context.stream);
  } catch (const std::bad_alloc&) {
    throw DiagnosticError{Diagnostic{context.loc, fmt::format("cannot allocate {} for {}", formatBytes(bytes), what)}};
  }
}

// One block of query rows: its scores and probabilities, [heads, rows, keys] each.
struct Block {
  int64_t first = 0, rows = 0, keys = 0;
  std::byte* scores = nullptr;
  std::byte* probabilities = nullptr;
};

// scores[h] = Q_h · K_gᵀ / √D for the heads h of every group g: column-major,
// scores[h]ᵀ [keys, rows] = (K_g read column-major, transposed) · (Q_h read column-major).
void scoreGemms(const ComputeContext& context, const KernelCall& call, const AttentionShape& s, const Block& block,
                DType scoreType) {
  using O = operands::Attention;
  const TensorView& q = call.operand(O::q);
  const TensorView& k = call.operand(O::k);
  const auto scoreSize = static_cast<int64_t>(dtypeSize(scoreType));
  ColumnMajorGemm g;
  g.opA = CUBLAS_OP_T;
  g.opB = CUBLAS_OP_N;
  g.m = block.keys;
  g.n = block.rows;
  g.k = s.headDim;
  g.lda = leadingDim(block.keys, k.strides[0], s.headDim);
  g.ldb = leadingDim(block.rows, q.strides[0], s.headDim);
  g.strideB = s.headDim;  // the group's next query head
  g.ldc = block.keys;
  g.strideC = block.rows * block.keys;
  g.batches = s.group;
  g.inputs = q.dtype;
  g.output = scoreType;
  g.alpha = 1.0 / std::sqrt(static_cast<double>(s.headDim));
  for (int64_t kv = 0; kv < s.kvHeads; ++kv) {
    const int64_t head = kv * s.group;
    g.a = elementAt(k, 0, kv * s.headDim);
    g.b = elementAt(q, block.first, head * s.headDim);
    g.c = block.scores + head * g.strideC * scoreSize;
    runGemm(context.blas, g);
  }
}

// o_h = P_h · V_g for the block's rows: column-major, o_hᵀ [D, rows] = V_gᵀ · P_hᵀ.
void valueGemms(const ComputeContext& context, const KernelCall& call, const AttentionShape& s, const Block& block) {
  using O = operands::Attention;
  const TensorView& v = call.operand(O::v);
  const TensorView& o = call.operand(O::out);
  const auto probabilitySize = static_cast<int64_t>(dtypeSize(o.dtype));
  ColumnMajorGemm g;
  g.m = s.headDim;
  g.n = block.rows;
  g.k = block.keys;
  g.lda = leadingDim(block.keys, v.strides[0], s.headDim);
  g.ldb = block.keys;
  g.strideB = block.rows * block.keys;
  g.ldc = leadingDim(block.rows, o.strides[0], s.headDim);
  g.strideC = s.headDim;  // the group's next query head
  g.batches = s.group;
  g.inputs = g.output = o.dtype;
  for (int64_t kv = 0; kv < s.kvHeads; ++kv) {
    const int64_t head = kv * s.group;
    g.a = elementAt(v, 0, kv * s.headDim);
    g.b = block.probabilities + head * g.strideB * probabilitySize;
    g.c = const_cast<std::byte*>(elementAt(o, block.first, head * s.headDim));
    runGemm(context.blas, g);
  }
}

void softmaxOf(const ComputeContext& context, const KernelCall& call, const AttentionShape& s, const Block& block) {
  using O = operands::Attention;
  const TensorView* lse = call.operands[O::lse];
  AttentionSoftmax softmax;
  softmax.scores = block.scores;
  softmax.probabilities = block.probabilities;
  if (lse) {
    softmax.lse = reinterpret_cast<float*>(const_cast<std::byte*>(elementAt(*lse, block.first, 0)));
    softmax.lseRowStride = lse->strides[0];
    softmax.lseHeadStride = lse->strides[1];
  }
  softmax.heads = s.heads;
  softmax.rows = block.rows;
  softmax.keys = block.keys;
  softmax.causal = s.causal;
  softmax.firstQuery = s.qOffset + block.first;
  softmax.kOffset = s.kOffset;
  checkCuda(launchAttentionSoftmax(call.operand(O::out).dtype, softmax, context.stream),
            "attention softmax kernel launch");
}

// Rows [first, first + rows) of o: zeros (a block that sees no key).
void zeroRows(const ComputeContext& context, const TensorView& o, int64_t first, int64_t rows) {
  TensorView block = o;
  block.offset += first * o.strides[0];
  block.shape[0] = rows;
  zeroView(context.stream, block);
}

}  // namespace

size_t attentionScoresBudget() { return scoresBudget.load(); }
void setAttentionScoresBudget(size_t bytes) { scoresBudget.store(bytes); }

void attention(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Attention;
  const TensorView& o = call.operand(O::out);
  for (size_t operand : {O::q, O::k, O::v, O::out}) requireUnitColumns(call.operand(operand), "operand");
  const AttentionShape s = shapeOf(call);
  if (s.queries == 0) return;
  const DType dtype = o.dtype;
  const DType scoreType = dtype == DType::F64 ? DType::F64 : DType::F32;
  const bool shared = scoreType == dtype;  // the probabilities overwrite the scores
  const size_t bytesPerKey = dtypeSize(scoreType) + (shared ? 0 : dtypeSize(dtype));
  const auto rowBytes = static_cast<size_t>(s.heads * std::max<int64_t>(s.keys, 1)) * bytesPerKey;
  const int64_t blockRows = std::clamp<int64_t>(static_cast<int64_t>(attentionScoresBudget() / rowBytes), 1, s.queries);
  const auto count = static_cast<size_t>(s.heads * blockRows * s.keys);
  std::shared_ptr<Buffer> scores = scratch(context, count * dtypeSize(scoreType), "attention's scores");
  std::shared_ptr<Buffer> probabilities =
      shared ? scores : scratch(context, count * dtypeSize(dtype), "attention's probabilities");
  for (int64_t first = 0; first < s.queries; first += blockRows) {
    Block block{first, std::min(blockRows, s.queries - first), 0, scores->data(), probabilities->data()};
    block.keys = keysSeen(s, block.first, block.rows);
    if (block.keys > 0 && s.headDim > 0) {
      scoreGemms(context, call, s, block, scoreType);
    } else if (block.keys > 0) {  // empty dot products
      checkCuda(cudaMemsetAsync(block.scores, 0,
                                static_cast<size_t>(s.heads * block.rows * block.keys) * dtypeSize(scoreType),
                                context.stream),
                "cudaMemsetAsync");
    }
    softmaxOf(context, call, s, block);
    if (block.keys > 0 && s.headDim > 0)
      valueGemms(context, call, s, block);
    else
      zeroRows(context, o, block.first, block.rows);
  }
}

}  // namespace hostir::cuda
