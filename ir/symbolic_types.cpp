#include "ir/symbolic_types.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "ir/mesh.h"
#include "ir/result_shape.h"
#include "ir/shapes.h"

namespace hostir {
namespace {

// a op b, folded when both are literals (the folds keep the language's
// meaning: ceildiv, min and max of literals, arithmetic that cannot overflow
// for verified extents).
Expr fold(IntFunction fn, Expr a, Expr b) {
  auto x = a.literalValue(), y = b.literalValue();
  if (x && y) {
    if (fn == IntFunction::Min) return Expr(std::min(*x, *y));
    if (fn == IntFunction::Max) return Expr(std::max(*x, *y));
    if (*x >= 0 && *y > 0) return Expr(ceilDiv(*x, *y));
  }
  if (fn == IntFunction::CeilDiv && y == 1) return a;
  return Expr::call(fn, {std::move(a), std::move(b)});
}

Expr fold(BinaryOp op, Expr a, Expr b) {
  auto x = a.literalValue(), y = b.literalValue();
  int64_t r = 0;
  if (x && y) {
    switch (op) {
      case BinaryOp::Add:
        if (!__builtin_add_overflow(*x, *y, &r)) return Expr(r);
        break;
      case BinaryOp::Sub:
        if (!__builtin_sub_overflow(*x, *y, &r)) return Expr(r);
        break;
      case BinaryOp::Mul:
        if (!__builtin_mul_overflow(*x, *y, &r)) return Expr(r);
        break;
      case BinaryOp::Div:
        if (*x >= 0 && *y > 0) return Expr(*x / *y);
        break;
      case BinaryOp::Mod:
        if (*x >= 0 && *y > 0) return Expr(*x % *y);
        break;
    }
  }
  if ((op == BinaryOp::Mul || op == BinaryOp::Div) && y == 1) return a;
  if (op == BinaryOp::Mul && x == 1) return b;
  if ((op == BinaryOp::Add || op == BinaryOp::Sub) && y == 0) return a;
  if (op == BinaryOp::Mul && (x == 0 || y == 0)) return Expr(0);
  return Expr::binary(op, std::move(a), std::move(b));
}

// The extent of chunk `index` of `chunks` along an axis of `extent` (ir/shapes.h's chunkExtent).
Expr chunkExtentExpr(const Expr& extent, const Expr& index, const Expr& chunks) {
  Expr size = fold(IntFunction::CeilDiv, extent, chunks);
  Expr rest = fold(BinaryOp::Sub, extent, fold(BinaryOp::Mul, index, size));
  return fold(IntFunction::Max, Expr(0), fold(IntFunction::Min, size, rest));
}

}  // namespace

SymbolicTypes::SymbolicTypes(const Program& program) {
  scopes_.emplace_back();
  for (const Decl& d : program.decls) {
    if (d.kind != DeclKind::Input) continue;
    TensorType type = d.type;
    if (d.shardAxis && static_cast<size_t>(*d.shardAxis) < type.dims.size()) {
      Expr& dim = type.dims[static_cast<size_t>(*d.shardAxis)];
      dim = fold(BinaryOp::Div, dim, Expr::name(d.shardOver.empty() ? "world" : meshSizeName(d.shardOver)));
    }
    scopes_.front()[d.name] = type;
  }
}

const std::optional<TensorType>* SymbolicTypes::lookup(const std::string& name) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
    if (auto found = scope->find(name); found != scope->end()) return &found->second;
  return nullptr;
}

const std::optional<TensorType>* SymbolicTypes::operandType(const Operation& op, size_t operand) const {
  const std::optional<Arg>& arg = op.operands[operand];
  if (!arg || !arg->isName()) return nullptr;
  const std::optional<TensorType>* type = lookup(arg->nameValue());
  return type && *type ? type : nullptr;
}

namespace {

// Each rule below reads its operands' types through `typeOf(position)`;
// ir/op_list.h's Result column names the rule of each operation. The
// shapes are ir/result_shape.h's; the rules here find their operands and
// return nullopt where a dim is not an expression here.
using TypeOf = std::function<std::optional<TensorType>(size_t)>;
using ResultRule = std::optional<TensorType> (*)(const Operation&, const TypeOf&);

// [x's leading dims, w's first].
std::optional<TensorType> linearResult(const Operation&, const TypeOf& typeOf) {
  using O = operands::Linear;
  auto x = typeOf(O::x), w = typeOf(O::w);
  if (!x || !w || x->dims.empty() || w->dims.empty()) return std::nullopt;
  x->dims = result_shape::linear(x->dims, w->dims);
  return x;
}

// [.., M, N], M from a and N from b as their transposes say.
std::optional<TensorType> matmulResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Matmul;
  auto a = typeOf(O::a), b = typeOf(O::b);
  if (!a || !b || a->dims.size() < 2 || a->dims.size() != b->dims.size()) return std::nullopt;
  auto flag = [&](size_t operand) { return op.operands[operand] && op.operands[operand]->boolValue; };
  a->dims = result_shape::matmul(a->dims, b->dims, flag(O::transpose_a), flag(O::transpose_b));
  return a;
}

// idx.shape + x.shape[1:], in x's dtype.
std::optional<TensorType> gatherResult(const Operation&, const TypeOf& typeOf) {
  using O = operands::GatherRows;
  auto x = typeOf(O::x), idx = typeOf(O::idx);
  if (!x || !idx || x->dims.empty()) return std::nullopt;
  idx->dtype = x->dtype;
  idx->dims = result_shape::gatherRows(x->dims, idx->dims);
  return idx;
}

// x's shape in the dtype the statement names.
std::optional<TensorType> castResult(const Operation& op, const TypeOf& typeOf) {
  auto x = typeOf(operands::Cast::x);
  const std::optional<Arg>& dtype = op.operands[operands::Cast::dtype];
  if (!x || !dtype || dtype->form != Arg::Form::DType) return std::nullopt;
  x->dtype = dtype->type.dtype;
  return x;
}

// A computation or copy by its table row's ResultShape: the type of the
// operand it names.
std::optional<TensorType> tableResult(const Operation& op, const TypeOf& typeOf) {
  const ResultShape& rule = op.signature().resultShape;
  if (rule.like == ResultShape::kNone) return std::nullopt;
  return typeOf(static_cast<size_t>(rule.like));
}

// The type the statement names (allocate, fill, iota, reshape).
std::optional<TensorType> typedResult(const Operation& op, const TypeOf&) {
  for (size_t i = 0; i < op.signature().operands.size(); ++i)
    if (op.signature().operands[i].kind == OperandKind::Type && op.operands[i]) return op.operands[i]->type;
  return std::nullopt;
}

// x without the reduced axis (a literal, or the last when absent).
std::optional<TensorType> reduceResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Reduce;
  auto x = typeOf(O::x);
  if (!x || x->dims.empty()) return std::nullopt;
  const auto rank = static_cast<int64_t>(x->dims.size());
  std::optional<int64_t> axis = rank - 1;
  if (op.operands[O::axis]) axis = op.operands[O::axis]->expr.literalValue();
  if (!axis) return std::nullopt;
  const int64_t normalized = result_shape::normalizedAxis(*axis, x->dims.size());
  if (normalized < 0 || normalized >= rank) return std::nullopt;
  x->dims = result_shape::reduce(x->dims, normalized);
  return x;
}

// x with k along the last axis (both of top_k's results; define() gives
// the indices i32).
std::optional<TensorType> topKResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::TopK;
  auto x = typeOf(O::x);
  if (!x || x->dims.empty() || !op.operands[O::k]) return std::nullopt;
  x->dims = result_shape::topK(x->dims, op.operands[O::k]->expr);
  return x;
}

// x's dims in the order of literal axes.
std::optional<TensorType> transposeResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Transpose;
  auto x = typeOf(O::x);
  if (!x || !op.operands[O::axes] || op.operands[O::axes]->items.size() != x->dims.size()) return std::nullopt;
  const auto rank = static_cast<int64_t>(x->dims.size());
  std::vector<int64_t> axes;
  for (const Expr& item : op.operands[O::axes]->items) {
    const std::optional<int64_t> axis = item.literalValue();
    if (!axis) return std::nullopt;
    const int64_t normalized = result_shape::normalizedAxis(*axis, x->dims.size());
    if (normalized < 0 || normalized >= rank) return std::nullopt;
    axes.push_back(*axis);
  }
  x->dims = result_shape::transpose(x->dims, axes);
  return x;
}

// [buckets, capacity] (i32: its out slot's dtype, resultType).
std::optional<TensorType> bucketResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Bucket;
  auto idx = typeOf(O::idx);
  if (!idx || !op.operands[O::buckets] || !op.operands[O::capacity]) return std::nullopt;
  idx->dims = result_shape::bucket<std::vector<Expr>>(op.operands[O::buckets]->expr, op.operands[O::capacity]->expr);
  return idx;
}

// t's type with the chunk's extent along a literal axis.
std::optional<TensorType> shardResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::ShardByStream;
  auto intOf = [&](size_t operand) { return op.operands[operand] ? op.operands[operand]->expr : Expr(); };
  auto type = typeOf(O::t);
  // -1: no literal axis. A plain integer, not an optional: GCC 12 falsely
  // warned -Wmaybe-uninitialized about the optional's value.
  const Expr& axisExpr = intOf(O::axis);
  const int64_t axis = axisExpr.empty() ? -1 : axisExpr.literalValue().value_or(-1);
  if (!type || axis < 0 || static_cast<size_t>(axis) >= type->dims.size()) return std::nullopt;
  Expr& extent = type->dims[static_cast<size_t>(axis)];
  extent = chunkExtentExpr(extent, intOf(O::index), intOf(O::chunks));
  return type;
}

// Operations that define no tensor from their operands.
std::optional<TensorType> noneResult(const Operation&, const TypeOf&) { return std::nullopt; }

constexpr ResultRule kResultRules[] = {
#define HOSTIR_RESULT_RULE(kind, spelling, specs, mode, value, category, cost, shape, flops, kernel, result, check, \
                           issue)                                                                                   \
  &result##Result,
    HOSTIR_OP_LIST(HOSTIR_RESULT_RULE)
#undef HOSTIR_RESULT_RULE
};
static_assert(std::size(kResultRules) == kOpKindCount);

}  // namespace

std::optional<TensorType> SymbolicTypes::resultType(const Operation& op, size_t k) const {
  const TypeOf typeOf = [&](size_t operand) -> std::optional<TensorType> {
    const std::optional<TensorType>* type = operandType(op, operand);
    return type ? **type : std::optional<TensorType>();
  };
  std::optional<TensorType> type = kResultRules[opIndex(op.kind)](op, typeOf);
  // A name that stands for an operand of a fixed dtype (top_k's indices,
  // bucket's result: i32) has that dtype.
  const OpSignature& sig = op.signature();
  if (const std::optional<size_t> slot = resultOperand(sig, k); type && slot)
    type->dtype = result_shape::writtenDType(sig.operands[*slot], type->dtype);
  return type;
}

std::vector<std::optional<TensorType>> SymbolicTypes::resultTypes(const Operation& op) const {
  std::vector<std::optional<TensorType>> types;
  for (size_t k = 0; k < op.results.size(); ++k) types.push_back(resultType(op, k));
  return types;
}

void SymbolicTypes::define(const Operation& op) {
  if (op.signature().resultKind != ValueKind::Tensor) return;
  std::vector<std::optional<TensorType>> types = resultTypes(op);
  for (size_t k = 0; k < op.results.size(); ++k) scopes_.back()[op.results[k].name] = std::move(types[k]);
}

}  // namespace hostir
