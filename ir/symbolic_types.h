// The type of every tensor a program names, with its dims as expressions
// over the parameters, loop indices, integer names and `rank`/`world`, valid
// where the name is in scope: what a statement would have to allocate to
// stand for another statement's result (strip-compute replaces
// `y = linear(x, w)` with `y = allocate(...)` of the same type).
//
// Rules: an input holds its rank's slice (the sharded extent divided by
// `world`); `allocate` has its type; `shard_by_stream` cuts its axis by the
// chunk rule of ir/shapes.h, written as max(0, min(size, extent -
// index * size)) with size = ceildiv(extent, chunks); a computation or
// copy has its table row's ResultShape (ir/ops.h): `copy`, `add` and the
// other elementwise and row operations their first operand's type;
// `linear`, `matmul`, `gather_rows`, the reductions, `top_k`, `transpose`
// and `bucket` have the shapes of ir/result_shape.h, and `cast` x's shape
// in the named dtype. Literal subexpressions are folded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace hostir {

class SymbolicTypes {
 public:
  // The program's inputs, as the rank holds them.
  explicit SymbolicTypes(const Program& program);

  // The type of the tensor `op` defines or writes (allocate, shard_by_stream,
  // and the result of a computation or copy), from the names before
  // it; nullopt for other operations, or when a dim is not an expression
  // here (a shard_by_stream whose axis is not a constant). `k`: which of
  // the names it defines (top_k's second, its indices, is i32).
  std::optional<TensorType> resultType(const Operation& op, size_t k = 0) const;
  // The type of each name `op` defines (top_k's two: its values, and its
  // i32 indices).
  std::vector<std::optional<TensorType>> resultTypes(const Operation& op) const;
  // Records the tensors `op` defines, if any.
  void define(const Operation& op);

  // Names defined in a loop body or an if branch are visible only inside it.
  void openScope() { scopes_.emplace_back(); }
  void closeScope() { scopes_.pop_back(); }

 private:
  const std::optional<TensorType>* lookup(const std::string& name) const;
  const std::optional<TensorType>* operandType(const Operation& op, size_t operand) const;

  std::vector<std::map<std::string, std::optional<TensorType>>> scopes_;
};

}  // namespace hostir
