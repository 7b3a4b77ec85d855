// Conditions of `if`: comparisons of integer expressions (ir/expr.h) joined
// by `and`, `or` and `not`, as Python writes them (not binds tighter than
// and, and tighter than or). Immutable and cheap to copy, like Expr; equality
// is structural and ignores source positions.
//
// `and` and `or` short-circuit: the right side is evaluated only when the
// left one does not decide, so `rank > 0 and (rank - 1) % 2 == 0` never
// evaluates `-1 % 2`. The verifier evaluates conditions that way, and the
// evaluator's compiled form (runtime/compiled_program.h) does the same.
//
// Limits as for expressions: a condition's levels (comparisons, and, or and
// not on its deepest path, plus the levels of the expressions below them)
// may not pass kMaxExprLevels, nor its nodes (its own and its expressions')
// kMaxExprNodes. Printing, comparing, visiting names and destruction never
// recurse; evaluation recurses once per level, after the limits are checked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/expr.h"

namespace hostir {

class Condition;

enum class ConditionKind { Compare, And, Or, Not };
enum class CompareOp { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };

// "==", "!=", "<", "<=", ">", ">=".
std::string_view compareOpSymbol(CompareOp op);

struct ConditionNode {
  ConditionKind kind = ConditionKind::Compare;
  SourceLoc loc;                    // the comparison operator, `and`, `or` or `not`
  CompareOp compare{};              // Compare
  Expr lhs, rhs;                    // Compare
  std::vector<Condition> operands;  // And, Or: two; Not: one
  // Derived when the node is built, so that limits are checked without a walk.
  int64_t levels = 1;      // nodes on the deepest path, this one and the expressions' levels included
  int64_t nodeCount = 1;   // condition and expression nodes, saturating at INT64_MAX
  bool wellFormed = true;  // every comparison has two well-formed expressions, every and/or two
                           // operands, every not one

  ConditionNode() = default;
  ConditionNode(const ConditionNode&) = delete;
  ConditionNode& operator=(const ConditionNode&) = delete;
  // Releases the operand tree iteratively, as ExprNode does.
  ~ConditionNode();
};

class Condition {
 public:
  Condition() = default;  // empty: no condition

  static Condition compare(CompareOp op, Expr lhs, Expr rhs, SourceLoc loc = {});
  static Condition logicalAnd(Condition lhs, Condition rhs, SourceLoc loc = {});
  static Condition logicalOr(Condition lhs, Condition rhs, SourceLoc loc = {});
  static Condition logicalNot(Condition operand, SourceLoc loc = {});

  bool empty() const { return node_ == nullptr; }
  const ConditionNode& node() const { return *node_; }
  ConditionKind kind() const { return node_->kind; }
  SourceLoc loc() const { return node_ ? node_->loc : SourceLoc{}; }
  int64_t levels() const { return node_ ? node_->levels : 0; }
  int64_t nodeCount() const { return node_ ? node_->nodeCount : 0; }
  bool wellFormed() const { return node_ && node_->wellFormed; }

  // Canonical text with the fewest parentheses that keep the tree.
  std::string toString() const;

  friend bool operator==(const Condition& a, const Condition& b);

 private:
  friend struct ConditionNode;
  explicit Condition(std::shared_ptr<const ConditionNode> node) : node_(std::move(node)) {}
  static Condition logical(ConditionKind kind, std::vector<Condition> operands, SourceLoc loc);
  std::shared_ptr<const ConditionNode> node_;
};

// Builder shorthands: eq(i, 0) is `i == 0`.
Condition eq(Expr a, Expr b);
Condition ne(Expr a, Expr b);
Condition lt(Expr a, Expr b);
Condition le(Expr a, Expr b);
Condition gt(Expr a, Expr b);
Condition ge(Expr a, Expr b);

// Every name the condition's expressions refer to, left to right, with its position.
void forEachName(const Condition& cond, const std::function<void(const std::string&, SourceLoc)>& visit);

// Every expression of the condition's comparisons, left to right.
void forEachExpr(const Condition& cond, const std::function<void(const Expr&)>& visit);

// An error when the condition is deeper than kMaxExprLevels, has more than
// kMaxExprNodes nodes, or is malformed (only C++ code can build that);
// positioned at the condition or `fallback`.
Status checkConditionLimits(const Condition& cond, SourceLoc fallback = {});

// Evaluates with short-circuit `and` and `or`, and the checks of evaluate()
// in ir/expr.h on every expression it evaluates, after checkConditionLimits;
// `fallback` positions errors of conditions that carry no position.
Result<bool> evaluate(const Condition& cond, const IntLookup& lookup, SourceLoc fallback = {});

}  // namespace hostir
