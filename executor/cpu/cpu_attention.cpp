#include "executor/cpu/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/cpu_gemm.h"
#include "executor/cpu/fast_math.h"
#include "executor/cpu/strided_rows.h"
#include "executor/cpu/vector_loops.h"

namespace hostir::cpu {
namespace {

template <typename T>
constexpr T kMinusInf = -std::numeric_limits<T>::infinity();

// What one attention call computes: q [tq, heads·d], k and v [tk, kvHeads·d].
struct AttentionShape {
  int64_t tq = 0, tk = 0, heads = 1, kvHeads = 1, d = 1;
  bool causal = false;
  int64_t qOffset = 0, kOffset = 0;

  // The key rows [0, n) that query row i sees.
  int64_t visibleKeys(int64_t i) const { return causal ? causalKeysSeen(i, qOffset, kOffset, tk) : tk; }
  int64_t kvHeadOf(int64_t head) const { return head * kvHeads / heads; }
};

AttentionShape shapeOf(const KernelCall& call) {
  using O = operands::Attention;
  AttentionShape s;
  s.tq = call.operand(O::q).shape[0];
  s.tk = call.operand(O::k).shape[0];
  s.heads = call.integer(O::heads);
  s.kvHeads = call.integer(O::kv_heads);
  s.d = call.operand(O::q).shape[1] / s.heads;
  s.causal = call.flag(O::causal);
  s.qOffset = call.integer(O::q_offset);
  s.kOffset = call.integer(O::k_offset);
  return s;
}

std::byte* elementAt(const TensorView& t, int64_t row, int64_t col) {
  return t.data() + (row * t.strides[0] + col * t.strides[1]) * static_cast<int64_t>(dtypeSize(t.dtype));
}

// The rows × cols block of a 2-D view at (row, col) as a dense array of T
// with leading dimension `ld`: the view's own elements when it holds T
// with unit column stride, else converted into `scratch`.
template <typename T>
const T* blockOf(const TensorView& t, int64_t row, int64_t col, int64_t rows, int64_t cols, std::vector<T>& scratch,
                 int64_t& ld) {
  constexpr DType kNative = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  if (t.dtype == kNative && t.strides[1] == 1) {
    ld = t.strides[0];
    return reinterpret_cast<const T*>(elementAt(t, row, col));
  }
  scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    T* to = scratch.data() + r * cols;
    const auto* bits = reinterpret_cast<const uint16_t*>(elementAt(t, row + r, col));
    if constexpr (std::is_same_v<T, float>) {
      if (t.strides[1] == 1 && t.dtype == DType::F16) {
        vec::fromHalf(bits, to, cols);
        continue;
      }
      if (t.strides[1] == 1 && t.dtype == DType::BF16) {
        vec::fromBFloat16(bits, to, cols);
        continue;
      }
    }
    for (int64_t c = 0; c < cols; ++c) to[c] = load<T>(t.dtype, elementAt(t, row + r, col + c));
  }
  ld = cols;
  return scratch.data();
}

template <typename T>
T expOf(T x) {
  if constexpr (std::is_same_v<T, float>)
    return fastExp(x);
  else
    return std::exp(x);
}

// Whether rows [first, end) of a block (d columns, `ld` apart) hold only
// finite values.
template <typename T>
bool finiteRows(const T* block, int64_t ld, int64_t first, int64_t end, int64_t d) {
  for (int64_t r = first; r < end; ++r) {
    T sum = 0;  // an inf or NaN anywhere makes it NaN
    for (int64_t c = 0; c < d; ++c) sum += block[r * ld + c] * T(0);
    if (sum != T(0)) return false;
  }
  return true;
}

// One row's running softmax state, folded with its next block of scores:
// the maximum m, the sum l of e^(s - m) so far, and the output row acc
// (P·V so far, scaled by the same e^-m). The scores become e^(s - m_new).
// A maximum of -inf (every score so far masked) is taken as 0 for the
// exponentials, so that masked scores give 0 rather than e^(-inf + inf).
template <typename T>
void foldScores(T* scores, int64_t n, T& m, T& l, T* acc, int64_t d) {
  T blockMax = kMinusInf<T>;
  if constexpr (std::is_same_v<T, float>) {
    blockMax = vec::max(scores, n);
  } else {
#pragma omp simd reduction(max : blockMax)
    for (int64_t j = 0; j < n; ++j) blockMax = scores[j] > blockMax ? scores[j] : blockMax;
  }
  const T next = blockMax > m ? blockMax : m;
  const T base = next == kMinusInf<T> ? T(0) : next;
  const T rescale = expOf<T>(m - base);
  T sum = 0;
  if constexpr (std::is_same_v<T, float>) {
    sum = static_cast<float>(vec::expShifted(scores, scores, n, base));
    if (rescale != 1.0f) vec::scale(acc, d, rescale);
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += (scores[j] = std::exp(scores[j] - base));
    if (rescale != T(1))
      for (int64_t c = 0; c < d; ++c) acc[c] *= rescale;
  }
  l = l * rescale + sum;
  m = next;
}

// The output rows of one query block of one head, and their lse: acc / l,
// or zeros and -inf for a row that sees no key.
template <typename T>
void finishRows(const KernelCall& call, const AttentionShape& s, int64_t head, int64_t r0, int64_t rows,
                const std::vector<T>& acc, const std::vector<T>& m, const std::vector<T>& l) {
  using O = operands::Attention;
  const TensorView& out = call.operand(O::out);
  const TensorView* lse = call.operands[O::lse];
  for (int64_t i = 0; i < rows; ++i) {
    const bool sees = s.visibleKeys(r0 + i) > 0;
    const T inverse = sees ? T(1) / l[static_cast<size_t>(i)] : T(0);
    for (int64_t c = 0; c < s.d; ++c)
      store<T>(out.dtype, elementAt(out, r0 + i, head * s.d + c), acc[static_cast<size_t>(i * s.d + c)] * inverse);
    if (lse) {
      const double value = sees ? static_cast<double>(m[static_cast<size_t>(i)]) +
                                      std::log(static_cast<double>(l[static_cast<size_t>(i)]))
                                : kMinusInf<double>;
      store<double>(lse->dtype, elementAt(*lse, r0 + i, head), value);
    }
  }
}

// A query block's running state and the scratch of the GEMM path.
template <typename T>
struct BlockState {
  explicit BlockState(int64_t d)
      : scores(static_cast<size_t>(kQueryBlock * kKeyBlock)),
        acc(static_cast<size_t>(kQueryBlock * d)),
        m(static_cast<size_t>(kQueryBlock)),
        l(static_cast<size_t>(kQueryBlock)) {}
  void reset() {
    std::fill(m.begin(), m.end(), kMinusInf<T>);
    std::fill(l.begin(), l.end(), T(0));
    std::fill(acc.begin(), acc.end(), T(0));
  }
  std::vector<T> scores, acc, m, l;
  std::vector<T> qScratch, kScratch, vScratch;
};

// A dense block of rows at `data`, `ld` elements apart.
template <typename T>
struct Rows {
  const T* data;
  int64_t ld;
  const T* at(int64_t row) const { return data + row * ld; }
};

// Folds key block [c0, c0 + cols) into the query block at r0 (`rows` rows):
// scores by one GEMM, masked and folded row by row, then P · V by another.
// Where the causal diagonal crosses the key block, groups of
// kDiagonalRows rows each take only the keys their last row sees.
template <typename T>
void foldKeyBlock(const BlasLibrary& blas, const AttentionShape& s, BlockState<T>& state, int64_t r0, int64_t rows,
                  int64_t c0, int64_t cols, Rows<T> q, Rows<T> k, Rows<T> v) {
  const auto scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(s.d)));
  auto seen = [&](int64_t i) { return std::clamp<int64_t>(s.visibleKeys(r0 + i) - c0, 0, cols); };
  const int64_t group = seen(0) < cols ? kDiagonalRows : rows;
  for (int64_t i0 = 0; i0 < rows; i0 += group) {
    const int64_t n = std::min(group, rows - i0), width = seen(i0 + n - 1);
    if (width == 0) continue;  // no row of the group sees a key here
    T* scores = state.scores.data();
    T* acc = state.acc.data() + i0 * s.d;
    blasGemm(blas, false, true, n, width, s.d, scale, q.at(i0), q.ld, k.data, k.ld, T(0), scores, width);
    for (int64_t i = 0; i < n; ++i) {
      T* row = scores + i * width;
      for (int64_t j = seen(i0 + i); j < width; ++j) row[j] = kMinusInf<T>;
      foldScores(row, width, state.m[static_cast<size_t>(i0 + i)], state.l[static_cast<size_t>(i0 + i)], acc + i * s.d,
                 s.d);
    }
    // A masked key weighs exactly 0, which adds nothing to a row, unless
    // its value row holds an inf or NaN (0 · inf is NaN): then the keys
    // every row sees go through one GEMM and each row's further keys
    // through one of its own, so that a key a row does not see never
    // enters its sum.
    const int64_t common = seen(i0);
    if (finiteRows(v.data, v.ld, common, width, s.d)) {
      blasGemm(blas, false, false, n, s.d, width, T(1), scores, width, v.data, v.ld, T(1), acc, s.d);
      continue;
    }
    if (common > 0) blasGemm(blas, false, false, n, s.d, common, T(1), scores, width, v.data, v.ld, T(1), acc, s.d);
    for (int64_t i = 1; i < n; ++i)
      if (const int64_t more = seen(i0 + i) - common; more > 0)
        blasGemm(blas, false, false, 1, s.d, more, T(1), scores + i * width + common, width, v.at(common), v.ld, T(1),
                 acc + i * s.d, s.d);
  }
}

// The GEMM path (see the header), computing in T: float for f32, f16 and
// bf16, double for f64.
template <typename T>
void attentionBlocks(const KernelCall& call, const AttentionShape& s) {
  using O = operands::Attention;
  const TensorView &q = call.operand(O::q), &k = call.operand(O::k), &v = call.operand(O::v);
  const BlasLibrary& blas = blasLibrary();
  BlasBufferLease lease(BlasBufferPool::process());
  BlockState<T> state(s.d);
  for (int64_t head = 0; head < s.heads; ++head) {
    const int64_t kvHead = s.kvHeadOf(head);
    for (int64_t r0 = 0; r0 < s.tq; r0 += kQueryBlock) {
      const int64_t rows = std::min(kQueryBlock, s.tq - r0);
      state.reset();
      Rows<T> qb{nullptr, 0}, kb{nullptr, 0}, vb{nullptr, 0};
      qb.data = blockOf(q, r0, head * s.d, rows, s.d, state.qScratch, qb.ld);
      const int64_t keys = s.visibleKeys(r0 + rows - 1);  // the block's last row sees the most
      for (int64_t c0 = 0; c0 < keys; c0 += kKeyBlock) {
        const int64_t cols = std::min(kKeyBlock, keys - c0);
        kb.data = blockOf(k, c0, kvHead * s.d, cols, s.d, state.kScratch, kb.ld);
        vb.data = blockOf(v, c0, kvHead * s.d, cols, s.d, state.vScratch, vb.ld);
        foldKeyBlock(blas, s, state, r0, rows, c0, cols, qb, kb, vb);
      }
      finishRows(call, s, head, r0, rows, state.acc, state.m, state.l);
    }
  }
}

// The serial reference: per head and query row, every score in f64, its
// maximum subtracted, the weighted sum of v's rows.
void attentionReference(const KernelCall& call, const AttentionShape& s) {
  using O = operands::Attention;
  const TensorView &q = call.operand(O::q), &k = call.operand(O::k), &v = call.operand(O::v);
  const TensorView& out = call.operand(O::out);
  const TensorView* lse = call.operands[O::lse];
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
  std::vector<double> scores(static_cast<size_t>(s.tk)), row(static_cast<size_t>(s.d));
  for (int64_t head = 0; head < s.heads; ++head) {
    const int64_t kvHead = s.kvHeadOf(head);
    for (int64_t i = 0; i < s.tq; ++i) {
      const int64_t n = s.visibleKeys(i);
      double max = kMinusInf<double>, sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < s.d; ++c)
          dot += load<double>(q.dtype, elementAt(q, i, head * s.d + c)) *
                 load<double>(k.dtype, elementAt(k, j, kvHead * s.d + c));
        scores[static_cast<size_t>(j)] = dot * scale;
        max = std::max(max, dot * scale);
      }
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t j = 0; j < n; ++j) {
        const double p = std::exp(scores[static_cast<size_t>(j)] - max);
        sum += p;
        for (int64_t c = 0; c < s.d; ++c)
          row[static_cast<size_t>(c)] += p * load<double>(v.dtype, elementAt(v, j, kvHead * s.d + c));
      }
      for (int64_t c = 0; c < s.d; ++c)
        store<double>(out.dtype, elementAt(out, i, head * s.d + c), n ? row[static_cast<size_t>(c)] / sum : 0.0);
      if (lse) store<double>(lse->dtype, elementAt(*lse, i, head), n ? max + std::log(sum) : kMinusInf<double>);
    }
  }
}

// o and lse, per (row, head), with part and part_lse folded in; the o
// update computed in T.
template <typename T>
void mergeRows(const KernelCall& call) {
  using O = operands::MergeAttention;
  const TensorView &o = call.operand(O::o), &lse = call.operand(O::lse);
  const TensorView &part = call.operand(O::part), &partLse = call.operand(O::part_lse);
  const int64_t rows = o.shape[0], heads = lse.shape[1], d = o.shape[1] / heads;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const double a = load<double>(lse.dtype, elementAt(lse, r, h));
      const double b = load<double>(partLse.dtype, elementAt(partLse, r, h));
      if (b == kMinusInf<double>) continue;  // the part contributes nothing
      double keep = 0, take = 1, merged = b;
      if (a != kMinusInf<double>) {
        const double max = a > b ? a : b;  // NaN in either propagates through the exponentials
        keep = std::exp(a - max);
        take = std::exp(b - max);
        const double sum = keep + take;
        keep /= sum;
        take /= sum;
        merged = max + std::log(sum);
      }
      for (int64_t c = 0; c < d; ++c) {
        std::byte* to = elementAt(o, r, h * d + c);
        const T from = load<T>(part.dtype, elementAt(part, r, h * d + c));
        // A running side of -inf contributes nothing, whatever o holds.
        store<T>(o.dtype, to, a == kMinusInf<double> ? from : T(keep) * load<T>(o.dtype, to) + T(take) * from);
      }
      store<double>(lse.dtype, elementAt(lse, r, h), merged);
    }
}

}  // namespace

template <>
void familyKernel<KernelFamily::Attention>(GemmKind mode, const KernelCall& call) {
  const AttentionShape s = shapeOf(call);
  if (mode == GemmKind::ReferenceF64)
    attentionReference(call, s);
  else if (call.operand(operands::Attention::q).dtype == DType::F64)
    attentionBlocks<double>(call, s);
  else
    attentionBlocks<float>(call, s);
}

// o and lse updated in place from part and part_lse; weights in f64.
template <>
void familyKernel<KernelFamily::MergeAttention>(GemmKind mode, const KernelCall& call) {
  if (mode == GemmKind::ReferenceF64 || call.operand(operands::MergeAttention::o).dtype == DType::F64)
    mergeRows<double>(call);
  else
    mergeRows<float>(call);
}

}  // namespace hostir::cpu
