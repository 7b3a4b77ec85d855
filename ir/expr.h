// Integer expressions: literals, names (params, loop indices, integer
// bindings, `rank`, `world`), + - * / % and ceildiv/min/max. Immutable and
// cheap to copy; equality is structural and ignores source positions.
//
// Printing, evaluation, comparison and the evaluator's compiler recurse over
// the tree, so its depth is what bounds their stack. The parser refuses an
// expression deeper than kMaxExprLevels and the verifier refuses one that
// C++ code built deeper, so every recursive walk of a verified program stays
// within a few hundred frames. Destruction never recurses, whatever the depth.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"

namespace hostir {

class Expr;

// An expression may have at most this many operators and calls on its
// deepest path (the parser counts parentheses too). Real shapes use a handful;
// 256 is far beyond them, and 256 frames of any walk fit easily in a thread's
// stack, sanitizer builds included.
inline constexpr int kMaxExprLevels = 256;

// An expression may have at most this many nodes (operators, calls, literals
// and names, a shared subtree counted once per use), about 2-4 MB of text.
// It bounds what one evaluation or print costs, and stops a shared-subtree
// expression built in C++ (`e = e + e` sixty times) from costing 2^60 steps.
inline constexpr int64_t kMaxExprNodes = int64_t{1} << 20;

enum class ExprKind { Literal, Name, Binary, Call };
enum class BinaryOp { Add, Sub, Mul, Div, Mod };
enum class IntFunction { CeilDiv, Min, Max };

std::string_view binaryOpSymbol(BinaryOp op);
std::string_view intFunctionName(IntFunction fn);
std::optional<IntFunction> parseIntFunction(std::string_view name);

struct ExprNode {
  ExprKind kind;
  SourceLoc loc;
  int64_t value = 0;           // Literal
  std::string name;            // Name
  BinaryOp binaryOp{};         // Binary
  IntFunction function{};      // Call
  std::vector<Expr> operands;  // Binary: lhs, rhs; Call: arguments
  // Derived when the node is built, so that limits are checked without a walk.
  int64_t levels = 0;      // operators and calls on the deepest path; 0 for a leaf
  int64_t nodeCount = 1;   // nodes in the tree, saturating at INT64_MAX
  bool wellFormed = true;  // Binary and Call nodes have two non-empty, well-formed operands

  ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;
  // Releases the operand tree iteratively: a chain of any length is freed
  // without one stack frame per node.
  ~ExprNode();
};

class Expr {
 public:
  Expr() = default;                              // empty: no expression
  Expr(int64_t value) : Expr(literal(value)) {}  // NOLINT: builder convenience

  static Expr literal(int64_t value, SourceLoc loc = {});
  static Expr name(std::string name, SourceLoc loc = {});
  static Expr binary(BinaryOp op, Expr lhs, Expr rhs, SourceLoc loc = {});
  static Expr call(IntFunction fn, std::vector<Expr> args, SourceLoc loc = {});

  bool empty() const { return node_ == nullptr; }
  const ExprNode& node() const { return *node_; }
  ExprKind kind() const { return node_->kind; }
  SourceLoc loc() const { return node_ ? node_->loc : SourceLoc{}; }
  bool isName() const { return node_ && node_->kind == ExprKind::Name; }
  const std::string& nameValue() const { return node_->name; }
  std::optional<int64_t> literalValue() const;
  // Operators and calls on the deepest path (0 for a literal or a name or an empty expression).
  int64_t levels() const { return node_ ? node_->levels : 0; }
  // Nodes in the tree, shared subtrees counted once per use (0 when empty), saturating.
  int64_t nodeCount() const { return node_ ? node_->nodeCount : 0; }
  // Every operator and call has exactly two operands, none of them empty.
  bool wellFormed() const { return node_ && node_->wellFormed; }

  // Canonical text with the fewest parentheses that keep the tree.
  std::string toString() const;

  friend bool operator==(const Expr& a, const Expr& b);

 private:
  friend struct ExprNode;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  static Expr withOperands(std::shared_ptr<ExprNode> node, std::vector<Expr> operands);
  std::shared_ptr<const ExprNode> node_;
};

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr ceilDiv(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

// Every name the expression refers to, with its position.
void forEachName(const Expr& expr, const std::function<void(const std::string&, SourceLoc)>& visit);

// An error when the expression is deeper than kMaxExprLevels, has more than
// kMaxExprNodes nodes, or has an operator or call without its two operands
// (only C++ code can build those); positioned at the expression or `fallback`.
Status checkExprLimits(const Expr& expr, SourceLoc fallback = {});

// Looks up the integer a name stands for; nullopt when it is not an integer.
using IntLookup = std::function<std::optional<int64_t>(const std::string&)>;

// Evaluates with overflow, division-by-zero and negative-operand checks, after
// checkExprLimits; `fallback` positions errors of expressions that carry none.
Result<int64_t> evaluate(const Expr& expr, const IntLookup& lookup, SourceLoc fallback = {});

// ceildiv/min/max of two values, with the checks evaluate() makes; for
// `n = min(a, b)`, whose operands are evaluated on their own.
Result<int64_t> applyIntFunction(IntFunction fn, int64_t a, int64_t b, SourceLoc loc = {});

}  // namespace hostir
