#include "hostir/expr.h"

#include <fmt/format.h>

namespace hostir {

std::string_view binaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
  }
  return "?";
}

std::string_view intFunctionName(IntFunction fn) {
  switch (fn) {
    case IntFunction::CeilDiv: return "ceildiv";
    case IntFunction::Min: return "min";
    case IntFunction::Max: return "max";
  }
  return "?";
}

std::optional<IntFunction> parseIntFunction(std::string_view name) {
  for (IntFunction fn : {IntFunction::CeilDiv, IntFunction::Min, IntFunction::Max})
    if (intFunctionName(fn) == name) return fn;
  return std::nullopt;
}

Expr Expr::literal(int64_t value, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Literal;
  node->loc = loc;
  node->value = value;
  return Expr(std::move(node));
}

Expr Expr::name(std::string name, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Name;
  node->loc = loc;
  node->name = std::move(name);
  return Expr(std::move(node));
}

Expr Expr::binary(BinaryOp op, Expr lhs, Expr rhs, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Binary;
  node->loc = loc;
  node->binaryOp = op;
  node->operands = {std::move(lhs), std::move(rhs)};
  return Expr(std::move(node));
}

Expr Expr::call(IntFunction fn, std::vector<Expr> args, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Call;
  node->loc = loc;
  node->function = fn;
  node->operands = std::move(args);
  return Expr(std::move(node));
}

std::optional<int64_t> Expr::literalValue() const {
  if (node_ && node_->kind == ExprKind::Literal) return node_->value;
  return std::nullopt;
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.node_ == b.node_) return true;
  if (!a.node_ || !b.node_) return false;
  const ExprNode& x = *a.node_;
  const ExprNode& y = *b.node_;
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case ExprKind::Literal: return x.value == y.value;
    case ExprKind::Name: return x.name == y.name;
    case ExprKind::Binary: return x.binaryOp == y.binaryOp && x.operands == y.operands;
    case ExprKind::Call: return x.function == y.function && x.operands == y.operands;
  }
  return false;
}

namespace {

int precedence(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub ? 1 : 2;
}

// Binding strength of an expression as an operand; atoms bind tightest.
int strength(const Expr& e) {
  return e.kind() == ExprKind::Binary ? precedence(e.node().binaryOp) : 3;
}

void print(const Expr& e, std::string& out) {
  const ExprNode& n = e.node();
  switch (n.kind) {
    case ExprKind::Literal: out += std::to_string(n.value); return;
    case ExprKind::Name: out += n.name; return;
    case ExprKind::Call: {
      out += intFunctionName(n.function);
      out += '(';
      for (size_t i = 0; i < n.operands.size(); ++i) {
        if (i) out += ", ";
        print(n.operands[i], out);
      }
      out += ')';
      return;
    }
    case ExprKind::Binary: {
      int p = precedence(n.binaryOp);
      // Operators are left-associative: a right operand of equal strength needs parentheses.
      bool lhsParens = strength(n.operands[0]) < p;
      bool rhsParens = strength(n.operands[1]) <= p;
      if (lhsParens) out += '(';
      print(n.operands[0], out);
      if (lhsParens) out += ')';
      out += ' ';
      out += binaryOpSymbol(n.binaryOp);
      out += ' ';
      if (rhsParens) out += '(';
      print(n.operands[1], out);
      if (rhsParens) out += ')';
      return;
    }
  }
}

int64_t evalOrFail(const Expr& e, const IntLookup& lookup, SourceLoc fallback) {
  const ExprNode& n = e.node();
  SourceLoc loc = n.loc.valid() ? n.loc : fallback;
  switch (n.kind) {
    case ExprKind::Literal: return n.value;
    case ExprKind::Name: {
      auto v = lookup(n.name);
      if (!v) fail(loc, fmt::format("'{}' is not an integer here", n.name));
      return *v;
    }
    case ExprKind::Call: {
      int64_t a = evalOrFail(n.operands[0], lookup, loc);
      int64_t b = evalOrFail(n.operands[1], lookup, loc);
      switch (n.function) {
        case IntFunction::Min: return std::min(a, b);
        case IntFunction::Max: return std::max(a, b);
        case IntFunction::CeilDiv:
          if (b == 0) fail(loc, "division by zero in ceildiv");
          if (a < 0 || b < 0)
            fail(loc, fmt::format("ceildiv({}, {}) needs non-negative operands", a, b));
          return a / b + (a % b != 0);
      }
      break;
    }
    case ExprKind::Binary: {
      int64_t a = evalOrFail(n.operands[0], lookup, loc);
      int64_t b = evalOrFail(n.operands[1], lookup, loc);
      int64_t r = 0;
      auto sym = binaryOpSymbol(n.binaryOp);
      switch (n.binaryOp) {
        case BinaryOp::Add:
          if (__builtin_add_overflow(a, b, &r)) fail(loc, fmt::format("integer overflow in {} {} {}", a, sym, b));
          return r;
        case BinaryOp::Sub:
          if (__builtin_sub_overflow(a, b, &r)) fail(loc, fmt::format("integer overflow in {} {} {}", a, sym, b));
          return r;
        case BinaryOp::Mul:
          if (__builtin_mul_overflow(a, b, &r)) fail(loc, fmt::format("integer overflow in {} {} {}", a, sym, b));
          return r;
        case BinaryOp::Div:
        case BinaryOp::Mod:
          if (b == 0) fail(loc, fmt::format("division by zero in {} {} {}", a, sym, b));
          // Floor division and modulo are defined on non-negative values only.
          if (a < 0 || b < 0)
            fail(loc, fmt::format("'{}' needs non-negative operands, got {} {} {}", sym, a, sym, b));
          return n.binaryOp == BinaryOp::Div ? a / b : a % b;
      }
      break;
    }
  }
  fail(loc, "malformed expression");
}

}  // namespace

std::string Expr::toString() const {
  if (!node_) return "";
  std::string out;
  print(*this, out);
  return out;
}

Expr operator+(Expr a, Expr b) { return Expr::binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Expr::binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return Expr::binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return Expr::binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return Expr::binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr ceilDiv(Expr a, Expr b) { return Expr::call(IntFunction::CeilDiv, {std::move(a), std::move(b)}); }
Expr min(Expr a, Expr b) { return Expr::call(IntFunction::Min, {std::move(a), std::move(b)}); }
Expr max(Expr a, Expr b) { return Expr::call(IntFunction::Max, {std::move(a), std::move(b)}); }

void forEachName(const Expr& expr,
                 const std::function<void(const std::string&, SourceLoc)>& visit) {
  if (expr.empty()) return;
  const ExprNode& n = expr.node();
  if (n.kind == ExprKind::Name) visit(n.name, n.loc);
  for (const Expr& operand : n.operands) forEachName(operand, visit);
}

Result<int64_t> evaluate(const Expr& expr, const IntLookup& lookup, SourceLoc fallback) {
  if (expr.empty()) return Diagnostic{fallback, "missing expression"};
  try {
    return evalOrFail(expr, lookup, fallback);
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
}

}  // namespace hostir
