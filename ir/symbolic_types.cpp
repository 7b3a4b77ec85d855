#include "ir/symbolic_types.h"

#include <algorithm>
#include <functional>
#include <iterator>

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
      dim = fold(BinaryOp::Div, dim, Expr::name("world"));
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
// ir/op_list.h's Result column names the rule of each operation.
using TypeOf = std::function<std::optional<TensorType>(size_t)>;
using ResultRule = std::optional<TensorType> (*)(const Operation&, const TypeOf&);

// [.., M, N] from a [.., M, K] (transposed: [K, M]) and b [.., K, N]
// (transposed: [N, K]), after the batch axis that a, b and the result share.
std::optional<TensorType> matmulResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Matmul;
  auto a = typeOf(O::a), b = typeOf(O::b);
  if (!a || !b || a->dims.size() < 2 || a->dims.size() != b->dims.size()) return std::nullopt;
  auto flag = [&](size_t operand) { return op.operands[operand] && op.operands[operand]->boolValue; };
  const size_t rows = a->dims.size() - 2;
  Expr m = a->dims[rows + (flag(O::transpose_a) ? 1 : 0)];
  Expr n = b->dims[rows + (flag(O::transpose_b) ? 0 : 1)];
  a->dims.resize(rows);
  a->dims.push_back(std::move(m));
  a->dims.push_back(std::move(n));
  return a;
}

// idx.shape + x.shape[1:], in x's dtype.
std::optional<TensorType> gatherResult(const Operation&, const TypeOf& typeOf) {
  using O = operands::GatherRows;
  auto x = typeOf(O::x), idx = typeOf(O::idx);
  if (!x || !idx || x->dims.empty()) return std::nullopt;
  idx->dtype = x->dtype;
  idx->dims.insert(idx->dims.end(), x->dims.begin() + 1, x->dims.end());
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

// A computation or copy by its table row's ResultShape.
std::optional<TensorType> tableResult(const Operation& op, const TypeOf& typeOf) {
  const ResultShape& rule = op.signature().resultShape;
  if (rule.like == ResultShape::kNone) return std::nullopt;
  auto type = typeOf(static_cast<size_t>(rule.like));
  if (!type || rule.lastFrom == ResultShape::kNone) return type;
  auto from = typeOf(static_cast<size_t>(rule.lastFrom));
  const auto dim = static_cast<size_t>(rule.lastDim);
  if (!from || type->dims.empty() || from->dims.size() <= dim) return std::nullopt;
  type->dims.back() = from->dims[dim];
  return type;
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
  if (axis && *axis < 0) *axis += rank;
  if (!axis || *axis < 0 || *axis >= rank) return std::nullopt;
  x->dims.erase(x->dims.begin() + *axis);
  return x;
}

// x with k along the last axis (both of top_k's results; define() gives
// the indices i32).
std::optional<TensorType> topKResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::TopK;
  auto x = typeOf(O::x);
  if (!x || x->dims.empty() || !op.operands[O::k]) return std::nullopt;
  x->dims.back() = op.operands[O::k]->expr;
  return x;
}

// x's dims in the order of literal axes.
std::optional<TensorType> transposeResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Transpose;
  auto x = typeOf(O::x);
  if (!x || !op.operands[O::axes] || op.operands[O::axes]->items.size() != x->dims.size()) return std::nullopt;
  const auto rank = static_cast<int64_t>(x->dims.size());
  std::vector<Expr> dims;
  for (const Expr& item : op.operands[O::axes]->items) {
    std::optional<int64_t> axis = item.literalValue();
    if (axis && *axis < 0) *axis += rank;
    if (!axis || *axis < 0 || *axis >= rank) return std::nullopt;
    dims.push_back(x->dims[static_cast<size_t>(*axis)]);
  }
  x->dims = std::move(dims);
  return x;
}

// i32 [buckets, capacity].
std::optional<TensorType> bucketResult(const Operation& op, const TypeOf& typeOf) {
  using O = operands::Bucket;
  auto idx = typeOf(O::idx);
  if (!idx || !op.operands[O::buckets] || !op.operands[O::capacity]) return std::nullopt;
  idx->dtype = DType::I32;
  idx->dims = {op.operands[O::buckets]->expr, op.operands[O::capacity]->expr};
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

std::optional<TensorType> SymbolicTypes::resultType(const Operation& op) const {
  const TypeOf typeOf = [&](size_t operand) -> std::optional<TensorType> {
    const std::optional<TensorType>* type = operandType(op, operand);
    return type ? **type : std::optional<TensorType>();
  };
  return kResultRules[opIndex(op.kind)](op, typeOf);
}

std::vector<std::optional<TensorType>> SymbolicTypes::resultTypes(const Operation& op) const {
  const OpSignature& sig = op.signature();
  std::vector<std::optional<TensorType>> types;
  for (size_t k = 0; k < op.results.size(); ++k) {
    std::optional<TensorType> type = resultType(op);
    // A name that stands for an i32 operand (top_k's indices) is i32.
    const std::optional<size_t> slot = resultOperand(sig, k);
    if (type && slot && sig.operands[*slot].dtype == DTypeRule::I32) type->dtype = DType::I32;
    types.push_back(std::move(type));
  }
  return types;
}

void SymbolicTypes::define(const Operation& op) {
  if (op.signature().resultKind != ValueKind::Tensor) return;
  std::vector<std::optional<TensorType>> types = resultTypes(op);
  for (size_t k = 0; k < op.results.size(); ++k) scopes_.back()[op.results[k].name] = std::move(types[k]);
}

}  // namespace hostir
