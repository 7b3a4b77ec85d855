#include "ir/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "ir/shapes.h"

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

ExprNode::~ExprNode() {
  // Take over the operands of every node this one solely owns, and clear
  // them before that node dies, so no destructor runs inside another.
  std::vector<Expr> pending = std::move(operands);
  while (!pending.empty()) {
    Expr last = std::move(pending.back());
    pending.pop_back();
    if (last.node_ && last.node_.use_count() == 1) {
      // The only owner: nothing else can read the node while it is emptied.
      auto& node = const_cast<ExprNode&>(*last.node_);
      for (Expr& operand : node.operands) pending.push_back(std::move(operand));
      node.operands.clear();
    }
  }
}

Expr Expr::withOperands(std::shared_ptr<ExprNode> node, std::vector<Expr> operands) {
  node->levels = 0;
  node->nodeCount = 1;
  node->wellFormed = operands.size() == 2;
  for (const Expr& operand : operands) {
    node->levels = std::max(node->levels, operand.levels() + 1);
    if (__builtin_add_overflow(node->nodeCount, operand.nodeCount(), &node->nodeCount)) node->nodeCount = INT64_MAX;
    node->wellFormed = node->wellFormed && operand.wellFormed();
  }
  node->operands = std::move(operands);
  return Expr(std::move(node));
}

Expr Expr::binary(BinaryOp op, Expr lhs, Expr rhs, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Binary;
  node->loc = loc;
  node->binaryOp = op;
  std::vector<Expr> operands;
  operands.reserve(2);
  operands.push_back(std::move(lhs));
  operands.push_back(std::move(rhs));
  return withOperands(std::move(node), std::move(operands));
}

Expr Expr::call(IntFunction fn, std::vector<Expr> args, SourceLoc loc) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Call;
  node->loc = loc;
  node->function = fn;
  return withOperands(std::move(node), std::move(args));
}

std::optional<int64_t> Expr::literalValue() const {
  if (node_ && node_->kind == ExprKind::Literal) return node_->value;
  return std::nullopt;
}

bool operator==(const Expr& a, const Expr& b) {
  // An explicit stack: comparing never recurses, however deep the trees.
  std::vector<std::pair<const Expr*, const Expr*>> pending{{&a, &b}};
  while (!pending.empty()) {
    auto [left, right] = pending.back();
    pending.pop_back();
    if (left->node_ == right->node_) continue;
    if (!left->node_ || !right->node_) return false;
    const ExprNode& x = *left->node_;
    const ExprNode& y = *right->node_;
    if (x.kind != y.kind || x.operands.size() != y.operands.size()) return false;
    switch (x.kind) {
      case ExprKind::Literal:
        if (x.value != y.value) return false;
        break;
      case ExprKind::Name:
        if (x.name != y.name) return false;
        break;
      case ExprKind::Binary:
        if (x.binaryOp != y.binaryOp) return false;
        break;
      case ExprKind::Call:
        if (x.function != y.function) return false;
        break;
    }
    for (size_t i = x.operands.size(); i-- > 0;) pending.emplace_back(&x.operands[i], &y.operands[i]);
  }
  return true;
}

namespace {

int precedence(BinaryOp op) { return op == BinaryOp::Add || op == BinaryOp::Sub ? 1 : 2; }

// Binding strength of an expression as an operand; atoms bind tightest.
int strength(const Expr& e) { return !e.empty() && e.kind() == ExprKind::Binary ? precedence(e.node().binaryOp) : 3; }

std::string_view spacedSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return " + ";
    case BinaryOp::Sub: return " - ";
    case BinaryOp::Mul: return " * ";
    case BinaryOp::Div: return " / ";
    case BinaryOp::Mod: return " % ";
  }
  return " ? ";
}

// Writes the text with an explicit stack of what is left to write (last
// first), so printing never recurses, however deep the tree.
void print(const Expr& root, std::string& out) {
  struct Piece {
    const Expr* expr;       // an expression to print, or null for `text`
    std::string_view text;  // static punctuation
  };
  std::vector<Piece> pending{{&root, {}}};
  auto text = [&](std::string_view t) { pending.push_back({nullptr, t}); };
  auto expr = [&](const Expr& e) { pending.push_back({&e, {}}); };
  while (!pending.empty()) {
    Piece piece = pending.back();
    pending.pop_back();
    if (!piece.expr) {
      out += piece.text;
      continue;
    }
    // Only C++ code can build empty or malformed nodes; show them rather than crash.
    if (piece.expr->empty()) {
      out += "<missing>";
      continue;
    }
    const ExprNode& n = piece.expr->node();
    switch (n.kind) {
      case ExprKind::Literal: out += std::to_string(n.value); break;
      case ExprKind::Name: out += n.name; break;
      case ExprKind::Call: {
        out += intFunctionName(n.function);
        out += '(';
        text(")");
        for (size_t i = n.operands.size(); i-- > 0;) {
          expr(n.operands[i]);
          if (i) text(", ");
        }
        break;
      }
      case ExprKind::Binary: {
        if (n.operands.size() != 2) {
          out += "<malformed>";
          break;
        }
        int p = precedence(n.binaryOp);
        // Operators are left-associative: a right operand of equal strength needs parentheses.
        bool lhsParens = strength(n.operands[0]) < p;
        bool rhsParens = strength(n.operands[1]) <= p;
        if (rhsParens) text(")");
        expr(n.operands[1]);
        if (rhsParens) text("(");
        text(spacedSymbol(n.binaryOp));
        if (lhsParens) text(")");
        expr(n.operands[0]);
        if (lhsParens) out += '(';
        break;
      }
    }
  }
}

int64_t callOrFail(IntFunction fn, int64_t a, int64_t b, SourceLoc loc) {
  switch (fn) {
    case IntFunction::Min: return std::min(a, b);
    case IntFunction::Max: return std::max(a, b);
    case IntFunction::CeilDiv:
      if (b == 0) fail(loc, "division by zero in ceildiv");
      if (a < 0 || b < 0) fail(loc, fmt::format("ceildiv({}, {}) needs non-negative operands", a, b));
      return ceilDiv(a, b);
  }
  fail(loc, "malformed expression");
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
      return callOrFail(n.function, a, b, loc);
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
          if (a < 0 || b < 0) fail(loc, fmt::format("'{}' needs non-negative operands, got {} {} {}", sym, a, sym, b));
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

void forEachName(const Expr& expr, const std::function<void(const std::string&, SourceLoc)>& visit) {
  // Left to right, with an explicit stack: the first name reported is the leftmost.
  std::vector<const Expr*> pending{&expr};
  while (!pending.empty()) {
    const Expr* e = pending.back();
    pending.pop_back();
    if (e->empty()) continue;
    const ExprNode& n = e->node();
    if (n.kind == ExprKind::Name) visit(n.name, n.loc);
    for (size_t i = n.operands.size(); i-- > 0;) pending.push_back(&n.operands[i]);
  }
}

Status checkExprLimits(const Expr& expr, SourceLoc fallback) {
  SourceLoc loc = expr.loc().valid() ? expr.loc() : fallback;
  if (expr.levels() > kMaxExprLevels)
    return Diagnostic{loc, fmt::format("expression nested too deeply: {} levels of operators and calls; "
                                       "an expression may have at most {}",
                                       expr.levels(), kMaxExprLevels)};
  if (expr.nodeCount() > kMaxExprNodes)
    return Diagnostic{loc, fmt::format("expression too large: more than {} terms; an expression may have at most {}",
                                       kMaxExprNodes, kMaxExprNodes)};
  if (!expr.empty() && !expr.wellFormed())
    return Diagnostic{loc, "malformed expression: an operator or call without its two operands"};
  return std::nullopt;
}

Result<int64_t> applyIntFunction(IntFunction fn, int64_t a, int64_t b, SourceLoc loc) {
  try {
    return callOrFail(fn, a, b, loc);
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
}

Result<int64_t> evaluate(const Expr& expr, const IntLookup& lookup, SourceLoc fallback) {
  if (expr.empty()) return Diagnostic{fallback, "missing expression"};
  // evalOrFail recurses once per level: the limits bound its stack.
  if (auto error = checkExprLimits(expr, fallback)) return *error;
  try {
    return evalOrFail(expr, lookup, fallback);
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
}

}  // namespace hostir
