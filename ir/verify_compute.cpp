// The bound check's rules for the operations that work on the rank's own
// tensors: allocate, deallocate, shard_by_stream, copy, and every
// computation (ir/shape_checker.h). A computation's rule is a member of
// ComputeRules, named by its row of ir/op_list.h; checkByItsRule, at the end
// of this file, finds every operation's rule there. Each rule checks the
// operands, then binds a result shaped by ir/result_shape.h.
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/result_shape.h"
#include "ir/shape_checker.h"
#include "ir/shapes.h"
#include "ir/verifier.h"

namespace hostir::verification {

void ShapeChecker::checkAllocate(const Operation& op) {
  const TensorType& type = op.operands[operands::Allocate::type]->type;
  bindTensor(op.result()->name, type.dtype, extents(type), op.result()->name);
}

void ShapeChecker::checkDeallocate(const Operation& op) {
  const Arg& arg = *op.operands[operands::Deallocate::t];
  BufferState& buffer = *lookup(arg.nameValue()).tensor.buffer;
  buffer.deallocated = true;
  buffer.deallocatedAt = op.loc;
}

void ShapeChecker::checkShardByStream(const Operation& op) {
  const BoundTensor& t = tensor(op, operands::ShardByStream::t);
  int64_t axis = intOperand(op, operands::ShardByStream::axis);
  int64_t chunks = intOperand(op, operands::ShardByStream::chunks);
  int64_t index = intOperand(op, operands::ShardByStream::index);
  checkAxis(op, operands::ShardByStream::axis, axis, t);
  if (chunks < 1)
    fail(op.operands[operands::ShardByStream::chunks]->loc, fmt::format("chunks must be at least 1, got {}", chunks));
  if (index < 0 || index >= chunks)
    fail(op.operands[operands::ShardByStream::index]->loc,
         fmt::format("index {} is out of range for {} chunks", index, chunks));
  std::vector<int64_t> shape = t.shape;
  int64_t& extent = shape[static_cast<size_t>(axis)];
  extent = chunkExtent(extent, index, chunks);
  // Rows before the axis each hold a piece of the chunk, with gaps between
  // them, unless the chunk is the whole axis or there is one such row.
  int64_t rowsBefore = 1;
  for (int64_t d = 0; d < axis; ++d) rowsBefore *= t.shape[static_cast<size_t>(d)];
  const bool contiguous = t.contiguous && (rowsBefore <= 1 || extent == t.shape[static_cast<size_t>(axis)]);
  BoundTensor view{t.dtype, std::move(shape), t.buffer, contiguous};
  bind(op.result()->name, BoundValue{ValueKind::Tensor, 0, std::move(view)});
}

void ShapeChecker::checkReshape(const Operation& op) {
  using O = operands::Reshape;
  const BoundTensor& t = tensor(op, O::t);
  const TensorType& type = op.operands[O::type]->type;
  const Arg& source = *op.operands[O::t];
  if (type.dtype != t.dtype)
    fail((type.loc.valid() ? type.loc : op.loc),
         fmt::format("'reshape' keeps the dtype: '{}' is {}, not {}", source.nameValue(), dtypeName(t.dtype),
                     dtypeName(type.dtype)));
  std::vector<int64_t> shape = extents(type);
  int64_t from = 1, to = 1;
  for (int64_t extent : t.shape) from *= extent;
  for (int64_t extent : shape) to *= extent;
  if (from != to)
    fail((type.loc.valid() ? type.loc : op.loc),
         fmt::format("'reshape' keeps the element count: '{}' is {} ({} elements), but {} has {}", source.nameValue(),
                     shapeString(t.shape), from, shapeString(shape), to));
  if (!t.contiguous && from != 0)
    fail(source.loc, fmt::format("'reshape' needs a contiguous tensor, but '{}' ({}) is a view with gaps between its "
                                 "rows (a chunk along an axis after the first); copy it first",
                                 source.nameValue(), shapeString(t.shape)));
  BoundTensor view{t.dtype, std::move(shape), t.buffer, true};
  bind(op.result()->name, BoundValue{ValueKind::Tensor, 0, std::move(view)});
}

// axes: a permutation of x's axes (negative ones count from the end).
void ShapeChecker::checkTranspose(const Operation& op) {
  using O = operands::Transpose;
  const BoundTensor& x = tensor(op, O::x);
  const Arg& axes = *op.operands[O::axes];
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (static_cast<int64_t>(axes.items.size()) != rank)
    fail(axes.loc, fmt::format("'transpose' needs one axis per dim of '{}' ({}, rank {}), but axes has {}",
                               op.operands[O::x]->nameValue(), shapeString(x.shape), rank, axes.items.size()));
  std::vector<int64_t> givenAxes;
  std::vector<bool> seen(x.shape.size(), false);
  for (const Expr& item : axes.items) {
    const SourceLoc at = item.loc().valid() ? item.loc() : axes.loc;
    const int64_t given = eval(item, at);
    const int64_t axis = result_shape::normalizedAxis(given, x.shape.size());
    if (axis < 0 || axis >= rank)
      fail(at,
           fmt::format("'transpose' has no axis {}: '{}' has rank {}", given, op.operands[O::x]->nameValue(), rank));
    if (seen[static_cast<size_t>(axis)])
      fail(at, fmt::format("'transpose' names axis {} twice: axes must be a permutation", axis));
    seen[static_cast<size_t>(axis)] = true;
    givenAxes.push_back(given);
  }
  produce(op, O::out, x.dtype, result_shape::transpose(x.shape, givenAxes));
}

void ShapeChecker::checkCopy(const Operation& op) {
  const BoundTensor& src = tensor(op, operands::Copy::src);
  produce(op, operands::Copy::out, src.dtype, src.shape);
}

// The shape rules of the computations: each checks its operands and binds
// its result (or checks its out= operand) through the checker. Dtypes are
// the structure check's (ir/verifier.cpp, checkTensorOperand): by the time
// these run, every operand has the dtype its operation needs.
struct ComputeRules {
  ShapeChecker& c;
  const Operation& op;

  std::string_view name() const { return op.signature().name; }
  SourceLoc at(size_t operand) const { return op.operands[operand] ? op.operands[operand]->loc : op.loc; }
  const std::string& nameOf(size_t operand) const { return op.operands[operand]->nameValue(); }
  bool flag(size_t operand) const { return op.operands[operand] && op.operands[operand]->boolValue; }

  // Fails at `operand` unless its tensor has `rank` dims; `form` spells the shape it needs ("[M, K]").
  const BoundTensor& ofRank(size_t operand, size_t rank, std::string_view form) {
    const BoundTensor& t = c.tensor(op, operand);
    if (t.shape.size() != rank)
      fail(at(operand),
           fmt::format("'{}' needs {} of shape {}, but '{}' is {}", name(), op.signature().operands[operand].name, form,
                       nameOf(operand), shapeString(t.shape)));
    return t;
  }

  const BoundTensor& atLeastRank1(size_t operand) {
    const BoundTensor& t = c.tensor(op, operand);
    if (t.shape.empty())
      fail(at(operand), fmt::format("'{}' works over the last axis: it needs {} of rank 1 or more, but '{}' is 0-d",
                                    name(), op.signature().operands[operand].name, nameOf(operand)));
    return t;
  }

  void linear() {
    const BoundTensor& x = c.tensor(op, operands::Linear::x);
    const BoundTensor& w = c.tensor(op, operands::Linear::w);
    if (x.shape.empty()) fail(op.operands[operands::Linear::x]->loc, "'linear' needs an input x of rank 1 or more");
    if (w.shape.size() != 2)
      fail(op.operands[operands::Linear::w]->loc,
           fmt::format("'linear' needs a weight of shape [N, K], got {}", shapeString(w.shape)));
    if (w.shape[1] != x.shape.back())
      fail(op.operands[operands::Linear::w]->loc,
           fmt::format("'linear' contracts K: x is {} but w is {} (w must be [N, {}])", shapeString(x.shape),
                       shapeString(w.shape), x.shape.back()));
    if (op.operands[operands::Linear::bias])
      c.requireShape(op, operands::Linear::bias, {w.shape[0]}, "the bias of 'linear'");
    c.produce(op, operands::Linear::out, x.dtype, result_shape::linear(x.shape, w.shape));
  }

  // c = op(a) · op(b): a [M, K] (transpose_a: [K, M]), b [K, N]
  // (transpose_b: [N, K]); or all three with one leading batch axis B.
  void matmul() {
    using O = operands::Matmul;
    const BoundTensor& a = c.tensor(op, O::a);
    const BoundTensor& b = c.tensor(op, O::b);
    const bool ta = flag(O::transpose_a), tb = flag(O::transpose_b);
    const std::string_view aForm = ta ? "[K, M]" : "[M, K]", bForm = tb ? "[N, K]" : "[K, N]";
    if (a.shape.size() != 2 && a.shape.size() != 3)
      fail(at(O::a),
           fmt::format("'matmul' needs a of shape {} or [B, {}, got {}", aForm, aForm.substr(1), shapeString(a.shape)));
    if (b.shape.size() != a.shape.size())
      fail(at(O::b),
           fmt::format("'matmul' needs b of shape {}{}, got {} (a is {})", a.shape.size() == 3 ? "[B, " : "",
                       a.shape.size() == 3 ? bForm.substr(1) : bForm, shapeString(b.shape), shapeString(a.shape)));
    const size_t batched = a.shape.size() - 2;
    if (batched && a.shape[0] != b.shape[0])
      fail(at(O::b), fmt::format("'matmul' multiplies batch entry by batch entry: a is {} but b is {}",
                                 shapeString(a.shape), shapeString(b.shape)));
    const int64_t ka = a.shape[batched + (ta ? 0 : 1)], kb = b.shape[batched + (tb ? 1 : 0)];
    if (ka != kb)
      fail(at(O::b), fmt::format("'matmul' contracts K: a is {}{} but b is {}{}", shapeString(a.shape),
                                 ta ? " (transposed)" : "", shapeString(b.shape), tb ? " (transposed)" : ""));
    c.produce(op, O::out, a.dtype, result_shape::matmul(a.shape, b.shape, ta, tb));
  }

  // a op b, elementwise: b broadcasts to a's shape by NumPy's rule (axes
  // aligned from the last, each extent of b equal to a's or 1); the result is like a.
  template <typename O>
  void binaryElementwise() {
    const BoundTensor& a = c.tensor(op, O::a);
    broadcasts(O::b, O::a);
    c.produce(op, O::out, a.dtype, a.shape);
  }

  // Fails unless operand `from` broadcasts to the shape of operand `to`.
  void broadcasts(size_t from, size_t to) {
    const BoundTensor& a = c.tensor(op, to);
    const BoundTensor& b = c.tensor(op, from);
    bool fits = b.shape.size() <= a.shape.size();
    for (size_t i = 1; fits && i <= b.shape.size(); ++i) {
      const int64_t extent = b.shape[b.shape.size() - i];
      fits = extent == 1 || extent == a.shape[a.shape.size() - i];
    }
    if (!fits)
      fail(at(from), fmt::format("'{}' cannot broadcast '{}' of shape {} to the shape of '{}', {}: aligned from the "
                                 "last axis, each extent of {} must equal {}'s or be 1",
                                 name(), nameOf(from), shapeString(b.shape), nameOf(to), shapeString(a.shape),
                                 op.signature().operands[from].name, op.signature().operands[to].name));
  }

  // a where c, else b: c and b broadcast to a's shape.
  void where() {
    using O = operands::Where;
    const BoundTensor& a = c.tensor(op, O::a);
    broadcasts(O::c, O::a);
    broadcasts(O::b, O::a);
    c.produce(op, O::out, a.dtype, a.shape);
  }

  // An axis operand of a tensor of rank `rank`, counted from the end when
  // negative (NumPy's -1 is the last); absent: the last.
  size_t axisOf(size_t operand, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    const int64_t given = c.intOperand(op, operand, r - 1);
    const int64_t axis = result_shape::normalizedAxis(given, rank);
    if (axis < 0 || axis >= r)
      fail(at(operand), fmt::format("'{}' has no axis {}: its tensor has rank {} (axes 0 to {}, or -{} to -1)", name(),
                                    given, rank, r - 1, rank));
    return static_cast<size_t>(axis);
  }

  // sum, mean, max along an axis, which the result drops.
  void reduce() {
    using O = operands::Reduce;
    const BoundTensor& x = atLeastRank1(O::x);
    const size_t axis = axisOf(O::axis, x.shape.size());
    if (x.shape[axis] == 0 && op.kind == OpKind::Max)
      fail(at(O::x), fmt::format("'max' of '{}' ({}) along axis {} has no elements to take the largest of",
                                 nameOf(O::x), shapeString(x.shape), axis));
    c.produce(op, O::out, x.dtype, result_shape::reduce(x.shape, static_cast<int64_t>(axis)));
  }

  void layerNorm() {
    using O = operands::LayerNorm;
    const BoundTensor& x = atLeastRank1(O::x);
    c.requireShape(op, O::w, {x.shape.back()}, "the weight of 'layer_norm' (one per element of the last axis)");
    c.requireShape(op, O::b, {x.shape.back()}, "the bias of 'layer_norm' (one per element of the last axis)");
    if (op.operands[O::eps] && op.operands[O::eps]->floatValue < 0)
      fail(at(O::eps), fmt::format("eps must not be negative, got {}", op.operands[O::eps]->floatValue));
    c.produce(op, O::out, x.dtype, x.shape);
  }

  // x [T, H·D] with D even; rows at positions offset + i.
  void rope() {
    using O = operands::Rope;
    const BoundTensor& x = ofRank(O::x, 2, "[T, H·D]");
    const int64_t heads = positive(O::heads, c.intOperand(op, O::heads));
    if (x.shape[1] % heads != 0 || (x.shape[1] / heads) % 2 != 0 || x.shape[1] == 0)
      fail(at(O::x), fmt::format("'rope' needs x's last extent to be heads·D with D even, but '{}' is {} for heads={}",
                                 nameOf(O::x), shapeString(x.shape), heads));
    lastPosition(O::offset, x.shape[0]);
    if (op.operands[O::theta] && !(op.operands[O::theta]->floatValue > 0))
      fail(at(O::theta), fmt::format("theta must be positive, got {}", op.operands[O::theta]->floatValue));
    c.produce(op, O::out, x.dtype, x.shape);
  }

  // The k largest along the last axis and their i32 positions: x with k there.
  void topK() {
    using O = operands::TopK;
    const BoundTensor& x = atLeastRank1(O::x);
    const int64_t k = positive(O::k, c.intOperand(op, O::k));
    if (k > x.shape.back())
      fail(at(O::k), fmt::format("'top_k' keeps k={} of the last axis, but '{}' ({}) has {} there", k, nameOf(O::x),
                                 shapeString(x.shape), x.shape.back()));
    if (x.shape.back() > INT32_MAX)
      fail(at(O::x), fmt::format("'top_k' writes positions as i32, but the last axis of '{}' has {} (more than "
                                 "2^31 - 1)",
                                 nameOf(O::x), x.shape.back()));
    const std::vector<int64_t> shape = result_shape::topK(x.shape, k);
    c.produce(op, O::out, x.dtype, shape);
    c.produce(op, O::indices, x.dtype, shape);
  }

  // i32 [buckets, capacity] from i32 indices of any shape.
  void bucket() {
    using O = operands::Bucket;
    const BoundTensor& idx = c.tensor(op, O::idx);
    int64_t entries = 1;
    for (int64_t extent : idx.shape) entries *= extent;
    if (entries > INT32_MAX)
      fail(at(O::idx), fmt::format("'bucket' writes positions as i32, but '{}' has {} entries (more than 2^31 - 1)",
                                   nameOf(O::idx), entries));
    const int64_t buckets = positive(O::buckets, c.intOperand(op, O::buckets));
    const int64_t capacity = positive(O::capacity, c.intOperand(op, O::capacity));
    c.produce(op, O::out, idx.dtype, result_shape::bucket<std::vector<int64_t>>(buckets, capacity));
  }

  // fill: the tensor the type names.
  void constant() {
    const TensorType& type = op.operands[operands::Fill::type]->type;
    c.bindTensor(op.result()->name, type.dtype, c.extents(type), op.result()->name);
  }

  // iota: the type's tensor, counting along an axis of it.
  void iota() {
    const TensorType& type = op.operands[operands::Iota::type]->type;
    std::vector<int64_t> shape = c.extents(type);
    if (!shape.empty() || op.operands[operands::Iota::axis]) axisOf(operands::Iota::axis, shape.size());
    c.bindTensor(op.result()->name, type.dtype, std::move(shape), op.result()->name);
  }

  // relu, silu, gelu, scale, cumsum: the result is like x; an axis
  // operand (OperandSpec::axis) names one of x's, as a reduction's does.
  template <typename O>
  void likeX() {
    constexpr size_t kNoAxis = std::size(O::specs);
    constexpr size_t axis = [] {
      for (size_t i = 0; i < std::size(O::specs); ++i)
        if (O::specs[i].axis) return i;
      return kNoAxis;
    }();
    const BoundTensor& x = axis == kNoAxis ? c.tensor(op, O::x) : atLeastRank1(O::x);
    if constexpr (axis != kNoAxis) axisOf(axis, x.shape.size());
    c.produce(op, O::out, x.dtype, x.shape);
  }

  void softmax() {
    using O = operands::Unary;
    const BoundTensor& x = atLeastRank1(O::x);
    c.produce(op, O::out, x.dtype, x.shape);
  }

  void rmsNorm() {
    using O = operands::RmsNorm;
    const BoundTensor& x = atLeastRank1(O::x);
    c.requireShape(op, O::w, {x.shape.back()}, "the weight of 'rms_norm' (one per element of the last axis)");
    if (op.operands[O::eps] && op.operands[O::eps]->floatValue < 0)
      fail(at(O::eps), fmt::format("eps must not be negative, got {}", op.operands[O::eps]->floatValue));
    c.produce(op, O::out, x.dtype, x.shape);
  }

  // An integer attribute that must be at least 1.
  int64_t positive(size_t operand, int64_t value) {
    if (value < 1)
      fail(at(operand), fmt::format("{} must be at least 1, got {}", op.signature().operands[operand].name, value));
    return value;
  }

  // The position of the last of `rows` rows that start at the offset
  // operand `operand`: a mask compares such positions, so each must be an
  // int64 (offset + rows - 1 computed exactly), or the run is refused.
  void lastPosition(size_t operand, int64_t rows) {
    const int64_t offset = c.intOperand(op, operand);
    int64_t last = 0;
    if (rows > 0 && __builtin_add_overflow(offset, rows - 1, &last))
      fail(at(operand), fmt::format("{}={} puts row {} at position {} + {}, beyond the largest integer (2^63 - 1)",
                                    op.signature().operands[operand].name, offset, rows - 1, offset, rows - 1));
  }

  // q [Tq, H·D], k and v [Tk, G·D], out like q, lse [Tq, H].
  void attention() {
    using O = operands::Attention;
    const BoundTensor& q = ofRank(O::q, 2, "[Tq, H·D]");
    const BoundTensor& k = ofRank(O::k, 2, "[Tk, G·D]");
    const int64_t heads = positive(O::heads, c.intOperand(op, O::heads));
    const int64_t kvHeads = positive(O::kv_heads, c.intOperand(op, O::kv_heads, heads));
    if (heads % kvHeads != 0)
      fail(at(O::kv_heads),
           fmt::format("heads={} is not a multiple of kv_heads={}: each key/value head serves as many query heads",
                       heads, kvHeads));
    lastPosition(O::q_offset, q.shape[0]);
    lastPosition(O::k_offset, k.shape[0]);
    if (q.shape[1] % heads != 0 || q.shape[1] == 0)
      fail(at(O::q), fmt::format("'attention' needs q's last extent to be heads·D with D >= 1, but '{}' is {} for "
                                 "heads={}",
                                 nameOf(O::q), shapeString(q.shape), heads));
    const int64_t d = q.shape[1] / heads;
    std::vector<int64_t> kv = {k.shape[0], kvHeads * d};
    c.requireShape(op, O::k, kv, fmt::format("'attention' with kv_heads={} and D={}", kvHeads, d));
    c.requireShape(op, O::v, kv, "'attention' (v is shaped like k)");
    if (op.operands[O::lse]) c.requireShape(op, O::lse, {q.shape[0], heads}, "the lse of 'attention', [Tq, heads],");
    c.produce(op, O::out, q.dtype, q.shape);
  }

  // o [T, H·D] and lse [T, H]; part and part_lse shaped like them.
  void mergeAttention() {
    using O = operands::MergeAttention;
    const BoundTensor& o = ofRank(O::o, 2, "[T, H·D]");
    const BoundTensor& lse = ofRank(O::lse, 2, "[T, H]");
    if (lse.shape[0] != o.shape[0] || lse.shape[1] < 1 || o.shape[1] % lse.shape[1] != 0)
      fail(at(O::lse), fmt::format("'merge_attention' needs lse of shape [T, H] for o of shape [T, H·D], but '{}' is "
                                   "{} and '{}' is {}",
                                   nameOf(O::lse), shapeString(lse.shape), nameOf(O::o), shapeString(o.shape)));
    c.requireShape(op, O::part, o.shape, "'merge_attention' (part is shaped like o)");
    c.requireShape(op, O::part_lse, lse.shape, "'merge_attention' (part_lse is shaped like lse)");
  }

  // y = x[idx] on rows: idx.shape + x.shape[1:].
  void gatherRows() {
    using O = operands::GatherRows;
    const BoundTensor& x = atLeastRank1(O::x);
    const BoundTensor& idx = c.tensor(op, O::idx);
    const std::vector<int64_t> shape = result_shape::gatherRows(x.shape, idx.shape);
    if (shape.size() > kMaxTensorDims)
      fail(op.loc, fmt::format("the result of 'gather_rows', {}, has {} dimensions; tensors have at most {}",
                               shapeString(shape), shape.size(), kMaxTensorDims));
    c.produce(op, O::out, x.dtype, shape);
  }

  // src is idx.shape + out.shape[1:].
  void scatterAddRows() {
    using O = operands::ScatterAddRows;
    const BoundTensor& out = atLeastRank1(O::out);
    std::vector<int64_t> shape = c.tensor(op, O::idx).shape;
    shape.insert(shape.end(), out.shape.begin() + 1, out.shape.end());
    c.requireShape(op, O::src, shape, "'scatter_add_rows' (idx.shape + out.shape[1:])");
  }

  void cast() {
    using O = operands::Cast;
    const BoundTensor& x = c.tensor(op, O::x);
    c.produce(op, O::out, op.operands[O::dtype]->type.dtype, x.shape);
  }
};

template <auto Rule>
void ShapeChecker::checkComputation(const Operation& op) {
  ComputeRules rules{*this, op};
  (rules.*Rule)();
}

void ShapeChecker::checkByItsRule(const Operation& op) {
  using Rule = void (ShapeChecker::*)(const Operation&);
  static constexpr Rule kRules[] = {
#define HOSTIR_SHAPE_RULE(kind, spelling, specs, mode, value, category, cost, shape, flops, kernel, result, check, \
                          issue)                                                                                   \
  &ShapeChecker::check,
      HOSTIR_OP_LIST(HOSTIR_SHAPE_RULE)
#undef HOSTIR_SHAPE_RULE
  };
  static_assert(std::size(kRules) == kOpKindCount);
  (this->*kRules[opIndex(op.kind)])(op);
}

}  // namespace hostir::verification
