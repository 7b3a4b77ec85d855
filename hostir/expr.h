// Integer expressions: literals, names (params, loop indices, integer
// bindings, `rank`, `world`), + - * / % and ceildiv/min/max. Immutable and
// cheap to copy; equality is structural and ignores source positions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hostir/diagnostic.h"

namespace hostir {

class Expr;

enum class ExprKind { Literal, Name, Binary, Call };
enum class BinaryOp { Add, Sub, Mul, Div, Mod };
enum class IntFunction { CeilDiv, Min, Max };

std::string_view binaryOpSymbol(BinaryOp op);
std::string_view intFunctionName(IntFunction fn);
std::optional<IntFunction> parseIntFunction(std::string_view name);

struct ExprNode {
  ExprKind kind;
  SourceLoc loc;
  int64_t value = 0;            // Literal
  std::string name;             // Name
  BinaryOp binaryOp{};          // Binary
  IntFunction function{};       // Call
  std::vector<Expr> operands;   // Binary: lhs, rhs; Call: arguments
};

class Expr {
 public:
  Expr() = default;  // empty: no expression
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

  // Canonical text with the fewest parentheses that keep the tree.
  std::string toString() const;

  friend bool operator==(const Expr& a, const Expr& b);

 private:
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
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
void forEachName(const Expr& expr,
                 const std::function<void(const std::string&, SourceLoc)>& visit);

// Looks up the integer a name stands for; nullopt when it is not an integer.
using IntLookup = std::function<std::optional<int64_t>(const std::string&)>;

// Evaluates with overflow, division-by-zero and negative-operand checks;
// `fallback` positions errors of expressions that carry none.
Result<int64_t> evaluate(const Expr& expr, const IntLookup& lookup, SourceLoc fallback = {});

}  // namespace hostir
