#include "ir/ops.h"

#include <algorithm>
#include <array>

namespace hostir {
namespace {

using K = OperandKind;
using E = Effect;
using C = OpCategory;
using D = DTypeRule;
// Results shaped like an operand (ResultShape), or following one by a rule
// of ir/result_shape.h: linear's [x's leading dims, w's first], matmul's
// [(B,) M, N] as its transposes say.
constexpr ResultShape kLinearResult{operands::Linear::x};
constexpr ResultShape kMatmulResult{operands::Matmul::a};

constexpr ResultShape kLikeA{operands::Add::a};
constexpr ResultShape kLikeX{operands::Unary::x};
// attention: [Tq, H·D], like q.
constexpr ResultShape kLikeQ{operands::Attention::q};
// gather_rows: idx.shape + x.shape[1:] (ir/result_shape.h), and cast: x's
// shape in another dtype (ir/symbolic_types.cpp).
constexpr ResultShape kGatherResult{operands::GatherRows::x};
constexpr ResultShape kCastResult{operands::Cast::x};
// where: like a (its second operand); sum, mean, max: x without the axis;
// bucket: i32 [buckets, capacity] (ir/result_shape.h); fill, iota: the
// type they name (ir/symbolic_types.cpp).
constexpr ResultShape kLikeWhereA{operands::Where::a};
constexpr ResultShape kReduceResult{operands::Reduce::x};
constexpr ResultShape kBucketResult{operands::Bucket::idx};
constexpr ResultShape kTopKResult{operands::TopK::x};  // x with k along the last axis
constexpr ResultShape kTypedResult{operands::Fill::type};
constexpr ResultShape kTransposeResult{operands::Transpose::x};  // x's dims, permuted
// merge_attention and scatter_add_rows update their operands in place.
constexpr ResultShape kInPlace{operands::MergeAttention::o};

// Every operation's signature, from its row of ir/op_list.h.
constexpr std::array<OpSignature, kOpKindCount> kSignatures = {{
#define HOSTIR_SIGNATURE(kind, spelling, O, mode, value, category, cost, shape, flops, ...) \
  {                                                                                         \
      OpKind::kind,                                                                         \
      spelling,                                                                             \
      operands::O::specs,                                                                   \
      ResultMode::mode,                                                                     \
      ValueKind::value,                                                                     \
      OpCategory::category,                                                                 \
      CostRule::cost,                                                                       \
      shape,                                                                                \
      flops},
    HOSTIR_OP_LIST(HOSTIR_SIGNATURE)
#undef HOSTIR_SIGNATURE
}};

// A computation, and only a computation, has a kernel family.
constexpr bool familiesMatchCategories() {
  for (size_t i = 0; i < kOpKindCount; ++i) {
    const auto kind = static_cast<OpKind>(i);
    if ((kernelFamilyOf(kind) != KernelFamily::None) != (categoryOf(kind) == OpCategory::Compute)) return false;
  }
  return true;
}
static_assert(familiesMatchCategories());

// The table is in OpKind order, within the operand limit, and every tensor
// operand says what the operation does to it (and only tensors do).
constexpr bool wellFormed() {
  for (size_t i = 0; i < kSignatures.size(); ++i) {
    const OpSignature& sig = kSignatures[i];
    if (static_cast<size_t>(sig.kind) != i || sig.operands.size() > kMaxOperands) return false;
    size_t tensors = 0;
    for (const OperandSpec& spec : sig.operands) tensors += spec.kind == K::Tensor ? 1 : 0;
    if (tensors > kMaxTensorOperands) return false;
    // Every computation says what its result is (symbolic types), by tensor
    // operands or the type it names.
    const ResultShape& r = sig.resultShape;
    if (isLocalTensorWork(sig.category) != (r.like != ResultShape::kNone)) return false;
    if (r.like != ResultShape::kNone) {
      if (static_cast<size_t>(r.like) >= sig.operands.size()) return false;
      const K kind = sig.operands[static_cast<size_t>(r.like)].kind;
      if (kind != K::Tensor && kind != K::Type) return false;
    }
    for (const OperandSpec& spec : sig.operands) {
      bool tensor = spec.kind == K::Tensor;
      if (!tensor && (spec.effect != E::None || spec.dtype != D::Shared)) return false;
      // Only an optional Int or Float has a default, and only an Int is an axis.
      const bool number = spec.kind == K::Int || spec.kind == K::Float;
      if (spec.byDefault != 0 && (spec.required || !number)) return false;
      if (spec.axis && spec.kind != K::Int) return false;
      if (tensor && spec.effect == E::None && sig.category != C::View) return false;
    }
  }
  return true;
}
static_assert(wellFormed());

}  // namespace

std::string_view valueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::Int: return "integer";
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Stream: return "stream";
    case ValueKind::Event: return "event";
    case ValueKind::Handle: return "communication handle";
    case ValueKind::Float: return "float parameter";
    case ValueKind::DType: return "dtype parameter";
  }
  return "?";
}

std::string_view operandKindName(OperandKind kind) {
  switch (kind) {
    case K::Tensor: return "a tensor";
    case K::Int: return "an integer expression";
    case K::Type: return "a tensor type like f32[M, N]";
    case K::Stream: return "a stream";
    case K::Event: return "an event";
    case K::Handle: return "a communication handle";
    case K::Bool: return "true or false";
    case K::ReduceOp: return "one of sum, prod, min, max, avg";
    case K::Float: return "a number such as 0.125 or 1e-6";
    case K::DType: return "a floating dtype (f32, f16, bf16 or f64)";
    case K::IntList: return "a list of integers such as (1, 0)";
    case K::MeshAxes: return "a mesh axis or a list of them, such as tp or (dp, tp)";
  }
  return "?";
}

std::string_view effectName(Effect effect) {
  switch (effect) {
    case E::None: return "none";
    case E::Read: return "read";
    case E::Write: return "write";
    case E::ReadWrite: return "read-write";
    case E::ReadInPlace: return "read, written in place";
    case E::ReadOnRoot: return "read on the root, written";
    case E::Free: return "free";
  }
  return "?";
}

std::string_view categoryName(OpCategory category) {
  switch (category) {
    case C::Compute: return "compute";
    case C::Copy: return "copy";
    case C::Communication: return "communication";
    case C::Allocation: return "allocation";
    case C::Deallocation: return "deallocation";
    case C::Synchronization: return "synchronization";
    case C::View: return "view";
    case C::Host: return "host";
  }
  return "?";
}

const OpSignature& signatureOf(OpKind kind) { return kSignatures[static_cast<size_t>(kind)]; }

std::span<const OpSignature> allSignatures() { return kSignatures; }

Effect operandEffect(const OpSignature& sig, size_t index, bool hasOut) {
  Effect effect = sig.operands[index].effect;
  if (effect == E::ReadInPlace) return hasOut ? E::Read : E::ReadWrite;
  return effect;
}

int64_t TensorExtent::numel() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

namespace {

// merge_attention per element of o: the two weighted parts added (the
// weights e^lse / (e^lse + e^part_lse) and its complement come once per
// row and head); per element of lse: the larger of the two, two
// differences, two exponentials, their sum, its log and reciprocal, the
// new lse and the two weights.
constexpr double kMergeFlopsPerOutput = 3;
constexpr double kMergeFlopsPerLse = 10;

// The (query, key) pairs attention computes: all of them, or with `causal`
// the sum over query rows of causalKeysSeen, in closed form. Row i sees
// clamp(i + c, 0, tk) keys, c = q_offset - k_offset + 1: none up to row lo,
// one more per row up to row hi, then all.
double attendedPairs(int64_t tq, int64_t tk, bool causal, double qOffset, double kOffset) {
  if (tq <= 0 || tk <= 0) return 0;
  const auto rows = static_cast<double>(tq), keys = static_cast<double>(tk);
  if (!causal) return rows * keys;
  // In doubles: integers to 2^53, and offsets far apart (up to 2^63) clamp
  // lo and hi to a whole side, as they should.
  const double c = qOffset - kOffset + 1;
  const double lo = std::clamp(1 - c, 0.0, rows);    // the first row that sees a key
  const double hi = std::clamp(keys - c, lo, rows);  // the first row that sees every key
  const double ramp = hi - lo;
  return ramp * c + ramp * (lo + hi - 1) / 2 + (rows - hi) * keys;
}

}  // namespace

int64_t causalKeysSeen(int64_t row, int64_t qOffset, int64_t kOffset, int64_t keys) {
  // qOffset + row - kOffset + 1; past int64 it is far beyond [0, keys] on its side.
  int64_t seen = 0;
  if (__builtin_sub_overflow(qOffset, kOffset, &seen)) return qOffset > kOffset ? keys : 0;
  if (__builtin_add_overflow(seen, row, &seen) || __builtin_add_overflow(seen, 1, &seen)) return keys;
  return std::clamp<int64_t>(seen, 0, keys);
}

OpCost costOf(OpKind kind, std::span<const TensorExtent> tensors, std::span<const double> scalars) {
  const OpSignature& sig = signatureOf(kind);
  auto at = [&](size_t index) -> const TensorExtent& {
    static const TensorExtent kAbsent;
    return index < tensors.size() ? tensors[index] : kAbsent;
  };
  auto scalar = [&](size_t index) { return index < scalars.size() ? scalars[index] : 0.0; };
  auto numel = [&](size_t index) { return static_cast<double>(at(index).numel()); };
  // Bytes of every tensor operand (the result stands in its `out` slot);
  // an operand updated in place is read and written.
  int64_t touched = 0;
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].kind == K::Tensor && at(i).present())
      touched += at(i).bytes() * (sig.operands[i].effect == E::ReadWrite ? 2 : 1);
  OpCost cost;
  cost.bytes = touched;
  switch (sig.cost) {
    case CostRule::None: cost.bytes = 0; break;
    case CostRule::Linear: {
      const TensorExtent& x = at(operands::Linear::x);
      double outputs = numel(operands::Linear::out);
      double k = x.shape.empty() ? 0.0 : static_cast<double>(x.shape.back());
      cost.flops = 2.0 * outputs * k + (at(operands::Linear::bias).present() ? outputs : 0.0);
      break;
    }
    case CostRule::Matmul: {
      std::optional<GemmShape> gemm = gemmShapeOf(kind, tensors, scalars);
      double batch =
          gemm && gemm->m * gemm->n != 0 ? numel(operands::Matmul::out) / static_cast<double>(gemm->m * gemm->n) : 0.0;
      cost.flops = gemm ? 2.0 * batch * static_cast<double>(gemm->m * gemm->n) * static_cast<double>(gemm->k) : 0.0;
      break;
    }
    case CostRule::Elementwise:
      if (kind == OpKind::MergeAttention) {
        using O = operands::MergeAttention;
        cost.flops = kMergeFlopsPerOutput * numel(O::o) + kMergeFlopsPerLse * numel(O::lse);
        break;
      }
      // Per element of the result, the operand the operation writes (`out`).
      for (size_t i = 0; i < sig.operands.size(); ++i)
        if (sig.operands[i].effect == E::Write) cost.flops = signatureOf(kind).flopsPerElement * numel(i);
      break;
    case CostRule::RowReduction: cost.flops = signatureOf(kind).flopsPerElement * numel(0); break;  // x is operand 0
    case CostRule::Attention: {
      // QKᵀ and PV: 2·D flops each per (query, key) pair and head, so 4 · pairs · H·D.
      using O = operands::Attention;
      const TensorExtent& q = at(O::q);
      const TensorExtent& k = at(O::k);
      if (q.shape.size() == 2 && !k.shape.empty()) {
        const double pairs =
            attendedPairs(q.shape[0], k.shape[0], scalar(O::causal) != 0.0, scalar(O::q_offset), scalar(O::k_offset));
        cost.flops = 4.0 * pairs * static_cast<double>(q.shape[1]);
      }
      break;
    }
    case CostRule::Gather:
      if (kind == OpKind::ScatterAddRows) {
        // src and idx read; each of src's elements added into a row of out, read and written.
        using O = operands::ScatterAddRows;
        const int64_t updated = at(O::src).numel() * static_cast<int64_t>(at(O::out).elementBytes);
        cost.bytes = at(O::src).bytes() + at(O::idx).bytes() + 2 * updated;
        cost.flops = numel(O::src);
      } else {
        // idx read, the rows it names read from x, the result written: only the rows moved, not all of x.
        using O = operands::GatherRows;
        cost.bytes = at(O::idx).bytes() + 2 * at(O::out).bytes();
      }
      break;
    case CostRule::Copy: break;
    case CostRule::Collective:
      cost.bytes = 0;
      for (size_t i = 0; i < sig.operands.size(); ++i)
        if (sig.operands[i].kind == K::Tensor && at(i).present()) cost.bytes = std::max(cost.bytes, at(i).bytes());
      break;
    case CostRule::Fill: cost.bytes = at(operands::Allocate::type).bytes(); break;
  }
  return cost;
}

std::optional<GemmShape> gemmShapeOf(OpKind kind, std::span<const TensorExtent> tensors,
                                     std::span<const double> scalars) {
  auto shapeOf = [&](size_t index) {
    return index < tensors.size() ? tensors[index].shape : std::span<const int64_t>();
  };
  auto flag = [&](size_t index) { return index < scalars.size() && scalars[index] != 0.0; };
  switch (signatureOf(kind).cost) {
    case CostRule::Linear: {
      // x [.., K] · w [N, K]ᵀ: every row of x's leading dims is a row of the GEMM.
      using O = operands::Linear;
      std::span<const int64_t> x = shapeOf(O::x), w = shapeOf(O::w);
      if (x.empty() || w.empty()) return GemmShape{};
      GemmShape gemm{0, w.front(), x.back()};
      if (gemm.k != 0) gemm.m = tensors[O::x].numel() / gemm.k;
      return gemm;
    }
    case CostRule::Matmul: {
      // One product per batch entry: the last two dims of a and b, as given
      // ([K, M] when transpose_a, [N, K] when transpose_b).
      using O = operands::Matmul;
      std::span<const int64_t> a = shapeOf(O::a), b = shapeOf(O::b);
      if (a.size() < 2 || b.size() < 2) return GemmShape{};
      int64_t a0 = a[a.size() - 2], a1 = a.back(), b0 = b[b.size() - 2], b1 = b.back();
      bool ta = flag(O::transpose_a), tb = flag(O::transpose_b);
      return GemmShape{ta ? a1 : a0, tb ? b0 : b1, ta ? a0 : a1};
    }
    case CostRule::None:
    case CostRule::Elementwise:
    case CostRule::RowReduction:
    case CostRule::Attention:
    case CostRule::Gather:
    case CostRule::Copy:
    case CostRule::Collective:
    case CostRule::Fill: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<OpKind> opKindByName(std::string_view name) {
  for (const OpSignature& sig : kSignatures)
    if (sig.name == name && sig.kind != OpKind::IntValue) return sig.kind;
  return std::nullopt;
}

std::optional<size_t> operandIndex(const OpSignature& sig, std::string_view name) {
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].name == name) return i;
  return std::nullopt;
}

std::optional<size_t> outOperand(const OpSignature& sig) { return operandIndex(sig, "out"); }

std::optional<size_t> resultOperand(const OpSignature& sig, size_t k) {
  if (sig.resultMode == ResultMode::OutOrResult) return k == 0 ? outOperand(sig) : std::nullopt;
  if (sig.resultMode != ResultMode::OutsOrResults) return std::nullopt;
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].kind == K::Tensor && sig.operands[i].effect == E::Write && k-- == 0) return i;
  return std::nullopt;
}

size_t resultOperandCount(const OpSignature& sig) {
  size_t count = 0;
  while (resultOperand(sig, count)) ++count;
  return count;
}

std::string_view reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

std::optional<ReduceOp> parseReduceOp(std::string_view name) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg})
    if (reduceOpName(op) == name) return op;
  return std::nullopt;
}

}  // namespace hostir
