#include "ir/condition.h"

#include <fmt/format.h>

#include <algorithm>

namespace hostir {

std::string_view compareOpSymbol(CompareOp op) {
  switch (op) {
    case CompareOp::Equal: return "==";
    case CompareOp::NotEqual: return "!=";
    case CompareOp::Less: return "<";
    case CompareOp::LessEqual: return "<=";
    case CompareOp::Greater: return ">";
    case CompareOp::GreaterEqual: return ">=";
  }
  return "?";
}

namespace {

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

}  // namespace

ConditionNode::~ConditionNode() {
  // As ~ExprNode: empty every solely owned node before it dies, so no
  // destructor runs inside another. Expressions free themselves the same way.
  std::vector<Condition> pending = std::move(operands);
  while (!pending.empty()) {
    Condition last = std::move(pending.back());
    pending.pop_back();
    if (last.node_ && last.node_.use_count() == 1) {
      auto& node = const_cast<ConditionNode&>(*last.node_);
      for (Condition& operand : node.operands) pending.push_back(std::move(operand));
      node.operands.clear();
    }
  }
}

Condition Condition::compare(CompareOp op, Expr lhs, Expr rhs, SourceLoc loc) {
  auto node = std::make_shared<ConditionNode>();
  node->kind = ConditionKind::Compare;
  node->loc = loc;
  node->compare = op;
  node->levels = 1 + std::max(lhs.levels(), rhs.levels());
  node->nodeCount = saturatingAdd(1, saturatingAdd(lhs.nodeCount(), rhs.nodeCount()));
  node->wellFormed = lhs.wellFormed() && rhs.wellFormed();
  node->lhs = std::move(lhs);
  node->rhs = std::move(rhs);
  return Condition(std::move(node));
}

Condition Condition::logical(ConditionKind kind, std::vector<Condition> operands, SourceLoc loc) {
  auto node = std::make_shared<ConditionNode>();
  node->kind = kind;
  node->loc = loc;
  node->wellFormed = operands.size() == (kind == ConditionKind::Not ? 1u : 2u);
  for (const Condition& operand : operands) {
    node->levels = std::max(node->levels, operand.levels() + 1);
    node->nodeCount = saturatingAdd(node->nodeCount, operand.nodeCount());
    node->wellFormed = node->wellFormed && operand.wellFormed();
  }
  node->operands = std::move(operands);
  return Condition(std::move(node));
}

Condition Condition::logicalAnd(Condition lhs, Condition rhs, SourceLoc loc) {
  std::vector<Condition> operands;
  operands.reserve(2);
  operands.push_back(std::move(lhs));
  operands.push_back(std::move(rhs));
  return logical(ConditionKind::And, std::move(operands), loc);
}

Condition Condition::logicalOr(Condition lhs, Condition rhs, SourceLoc loc) {
  std::vector<Condition> operands;
  operands.reserve(2);
  operands.push_back(std::move(lhs));
  operands.push_back(std::move(rhs));
  return logical(ConditionKind::Or, std::move(operands), loc);
}

Condition Condition::logicalNot(Condition operand, SourceLoc loc) {
  std::vector<Condition> operands;
  operands.push_back(std::move(operand));
  return logical(ConditionKind::Not, std::move(operands), loc);
}

Condition eq(Expr a, Expr b) { return Condition::compare(CompareOp::Equal, std::move(a), std::move(b)); }
Condition ne(Expr a, Expr b) { return Condition::compare(CompareOp::NotEqual, std::move(a), std::move(b)); }
Condition lt(Expr a, Expr b) { return Condition::compare(CompareOp::Less, std::move(a), std::move(b)); }
Condition le(Expr a, Expr b) { return Condition::compare(CompareOp::LessEqual, std::move(a), std::move(b)); }
Condition gt(Expr a, Expr b) { return Condition::compare(CompareOp::Greater, std::move(a), std::move(b)); }
Condition ge(Expr a, Expr b) { return Condition::compare(CompareOp::GreaterEqual, std::move(a), std::move(b)); }

bool operator==(const Condition& a, const Condition& b) {
  // An explicit stack: comparing never recurses, however deep the trees.
  std::vector<std::pair<const Condition*, const Condition*>> pending{{&a, &b}};
  while (!pending.empty()) {
    auto [left, right] = pending.back();
    pending.pop_back();
    if (left->node_ == right->node_) continue;
    if (!left->node_ || !right->node_) return false;
    const ConditionNode& x = *left->node_;
    const ConditionNode& y = *right->node_;
    if (x.kind != y.kind || x.operands.size() != y.operands.size()) return false;
    if (x.kind == ConditionKind::Compare && (x.compare != y.compare || !(x.lhs == y.lhs) || !(x.rhs == y.rhs)))
      return false;
    for (size_t i = x.operands.size(); i-- > 0;) pending.emplace_back(&x.operands[i], &y.operands[i]);
  }
  return true;
}

namespace {

// Binding strength as an operand: or < and < not < a comparison.
int strength(const Condition& c) {
  if (c.empty()) return 4;
  switch (c.kind()) {
    case ConditionKind::Or: return 1;
    case ConditionKind::And: return 2;
    case ConditionKind::Not: return 3;
    case ConditionKind::Compare: return 4;
  }
  return 4;
}

// Writes the text with an explicit stack of what is left to write (last
// first), so printing never recurses, however deep the tree.
void print(const Condition& root, std::string& out) {
  struct Piece {
    const Condition* cond;  // a condition to print, or null for `text`
    std::string_view text;  // static punctuation
  };
  std::vector<Piece> pending{{&root, {}}};
  auto text = [&](std::string_view t) { pending.push_back({nullptr, t}); };
  auto cond = [&](const Condition& c, bool parens) {
    if (parens) text(")");
    pending.push_back({&c, {}});
    if (parens) text("(");
  };
  while (!pending.empty()) {
    Piece piece = pending.back();
    pending.pop_back();
    if (!piece.cond) {
      out += piece.text;
      continue;
    }
    // Only C++ code can build empty or malformed nodes; show them rather than crash.
    if (piece.cond->empty()) {
      out += "<missing>";
      continue;
    }
    const ConditionNode& n = piece.cond->node();
    if (n.operands.size() != (n.kind == ConditionKind::Compare ? 0u : n.kind == ConditionKind::Not ? 1u : 2u)) {
      out += "<malformed>";
      continue;
    }
    switch (n.kind) {
      case ConditionKind::Compare:
        out += fmt::format("{} {} {}", n.lhs.empty() ? "<missing>" : n.lhs.toString(), compareOpSymbol(n.compare),
                           n.rhs.empty() ? "<missing>" : n.rhs.toString());
        break;
      case ConditionKind::Not:
        out += "not ";
        cond(n.operands[0], strength(n.operands[0]) < 3);
        break;
      case ConditionKind::And:
      case ConditionKind::Or: {
        // Left-associative: a right operand of equal strength needs parentheses.
        int own = strength(*piece.cond);
        cond(n.operands[1], strength(n.operands[1]) <= own);
        text(n.kind == ConditionKind::And ? " and " : " or ");
        cond(n.operands[0], strength(n.operands[0]) < own);
        break;
      }
    }
  }
}

bool compareValues(CompareOp op, int64_t a, int64_t b) {
  switch (op) {
    case CompareOp::Equal: return a == b;
    case CompareOp::NotEqual: return a != b;
    case CompareOp::Less: return a < b;
    case CompareOp::LessEqual: return a <= b;
    case CompareOp::Greater: return a > b;
    case CompareOp::GreaterEqual: return a >= b;
  }
  return false;
}

// Recurses once per level; checkConditionLimits bounds the depth first.
bool evalOrFail(const Condition& c, const IntLookup& lookup, SourceLoc fallback) {
  const ConditionNode& n = c.node();
  SourceLoc loc = n.loc.valid() ? n.loc : fallback;
  switch (n.kind) {
    case ConditionKind::Compare: {
      auto value = [&](const Expr& e) {
        Result<int64_t> v = evaluate(e, lookup, loc);
        if (!v) throw DiagnosticError{v.error()};
        return *v;
      };
      int64_t a = value(n.lhs);
      int64_t b = value(n.rhs);
      return compareValues(n.compare, a, b);
    }
    case ConditionKind::Not: return !evalOrFail(n.operands[0], lookup, loc);
    case ConditionKind::And: return evalOrFail(n.operands[0], lookup, loc) && evalOrFail(n.operands[1], lookup, loc);
    case ConditionKind::Or: return evalOrFail(n.operands[0], lookup, loc) || evalOrFail(n.operands[1], lookup, loc);
  }
  fail(loc, "malformed condition");
}

}  // namespace

std::string Condition::toString() const {
  if (!node_) return "";
  std::string out;
  print(*this, out);
  return out;
}

void forEachExpr(const Condition& cond, const std::function<void(const Expr&)>& visit) {
  // Left to right, with an explicit stack.
  std::vector<const Condition*> pending{&cond};
  while (!pending.empty()) {
    const Condition* c = pending.back();
    pending.pop_back();
    if (c->empty()) continue;
    const ConditionNode& n = c->node();
    if (n.kind == ConditionKind::Compare) {
      visit(n.lhs);
      visit(n.rhs);
    }
    for (size_t i = n.operands.size(); i-- > 0;) pending.push_back(&n.operands[i]);
  }
}

void forEachName(const Condition& cond, const std::function<void(const std::string&, SourceLoc)>& visit) {
  forEachExpr(cond, [&](const Expr& e) {
    if (!e.empty()) forEachName(e, visit);
  });
}

Status checkConditionLimits(const Condition& cond, SourceLoc fallback) {
  SourceLoc loc = cond.loc().valid() ? cond.loc() : fallback;
  if (cond.empty()) return Diagnostic{loc, "missing condition"};
  if (cond.levels() > kMaxExprLevels)
    return Diagnostic{loc, fmt::format("condition nested too deeply: {} levels of comparisons, 'and', 'or', 'not' "
                                       "and operators; a condition may have at most {}",
                                       cond.levels(), kMaxExprLevels)};
  if (cond.nodeCount() > kMaxExprNodes)
    return Diagnostic{loc, fmt::format("condition too large: more than {} terms; a condition may have at most {}",
                                       kMaxExprNodes, kMaxExprNodes)};
  if (!cond.wellFormed())
    return Diagnostic{loc,
                      "malformed condition: a comparison without its two expressions, or 'and', 'or' or 'not' "
                      "without its operands"};
  return std::nullopt;
}

Result<bool> evaluate(const Condition& cond, const IntLookup& lookup, SourceLoc fallback) {
  if (auto error = checkConditionLimits(cond, fallback)) return *error;
  try {
    return evalOrFail(cond, lookup, fallback);
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
}

}  // namespace hostir
