// hostir::Expr: evaluation and its error checks, canonical printing with the
// fewest parentheses, and print/parse round trips of random trees.
#include <gtest/gtest.h>

#include <cctype>
#include <climits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/parser.h"

namespace {

using namespace hostir;

// Integers the test expressions may name.
std::optional<int64_t> lookupName(const std::string& name) {
  static const std::map<std::string, int64_t> values = {{"a", 7}, {"b", 2},    {"c", 3},    {"d", 5},    {"M", 256},
                                                        {"i", 5}, {"zero", 0}, {"rank", 2}, {"world", 4}};
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Expr parsed(const std::string& text) {
  auto e = parseExpr(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message);
  return e.ok() ? *e : Expr{};
}

Expr a() { return Expr::name("a"); }
Expr b() { return Expr::name("b"); }
Expr c() { return Expr::name("c"); }
Expr d() { return Expr::name("d"); }

// ---------------------------------------------------------------------------
// Evaluation

struct EvalCase {
  std::string text;
  int64_t value;
};

TEST(ExprEvaluate, Values) {
  const std::vector<EvalCase> cases = {
      {"42", 42},
      {"-3", -3},
      {"7 / 2", 3},
      {"6 / 3", 2},
      {"0 / 5", 0},
      {"7 % 3", 1},
      {"6 % 3", 0},
      {"0 % 7", 0},
      {"ceildiv(7, 2)", 4},
      {"ceildiv(8, 2)", 4},
      {"ceildiv(0, 3)", 0},
      {"ceildiv(1, 1000)", 1},
      {"ceildiv(9223372036854775807, 2)", 4611686018427387904},
      {"min(3, -4)", -4},
      {"max(3, -4)", 3},
      {"min(a, b)", 2},
      {"max(a, b)", 7},
      {"2 + 3 * 4", 14},
      {"(2 + 3) * 4", 20},
      {"10 - 3 - 2", 5},
      {"10 - (3 - 2)", 9},
      {"100 / 10 / 5", 2},
      {"100 / (10 / 5)", 50},
      {"17 % 5 * 2", 4},
      {"-3 + 5", 2},
      {"5 - -3", 8},
      {"2 * -3", -6},
      {"rank * 10 + world", 24},
      {"M / world", 64},
      {"ceildiv(M, 3)", 86},
      {"i % world", 1},
      {"ceildiv(a + b, c) * min(d, max(a, b))", 15},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"9223372036854775806 + 1", INT64_MAX},
      {"-9223372036854775807 - 1", INT64_MIN},
      {"3037000499 * 3037000499", 9223372030926249001},
  };
  for (const EvalCase& c : cases) {
    Expr e = parsed(c.text);
    auto v = evaluate(e, lookupName);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.error().message;
    EXPECT_EQ(*v, c.value) << c.text;
  }
}

TEST(ExprEvaluate, RankAndWorldComeFromTheLookup) {
  Expr e = parsed("rank + world * 100");
  for (int64_t world = 1; world <= 4; ++world)
    for (int64_t rank = 0; rank < world; ++rank) {
      auto v = evaluate(e, [&](const std::string& name) -> std::optional<int64_t> {
        if (name == "rank") return rank;
        if (name == "world") return world;
        return std::nullopt;
      });
      ASSERT_TRUE(v.ok());
      EXPECT_EQ(*v, rank + world * 100);
    }
}

struct EvalErrorCase {
  std::string text;
  uint32_t col;  // on line 1
  std::string message;
};

TEST(ExprEvaluate, Errors) {
  const std::vector<EvalErrorCase> cases = {
      {"9223372036854775807 + 1", 21, "integer overflow in 9223372036854775807 + 1"},
      {"-9223372036854775808 - 1", 22, "integer overflow in -9223372036854775808 - 1"},
      {"4294967296 * 4294967296", 12, "integer overflow in 4294967296 * 4294967296"},
      {"-9223372036854775808 * -1", 22, "integer overflow in -9223372036854775808 * -1"},
      {"1 / 0", 3, "division by zero in 1 / 0"},
      {"5 % (a - a)", 3, "division by zero in 5 % 0"},
      {"ceildiv(4, 0)", 1, "division by zero in ceildiv"},
      {"1 + ceildiv(4, zero)", 5, "division by zero in ceildiv"},
      {"-7 / 2", 4, "'/' needs non-negative operands, got -7 / 2"},
      {"7 % -2", 3, "'%' needs non-negative operands, got 7 % -2"},
      {"(a - 8) % 3", 9, "'%' needs non-negative operands, got -1 % 3"},
      {"ceildiv(-1, 2)", 1, "ceildiv(-1, 2) needs non-negative operands"},
      {"ceildiv(3, -1)", 1, "ceildiv(3, -1) needs non-negative operands"},
      {"zz + 1", 1, "'zz' is not an integer here"},
      {"1 + 2 * (3 / (b - 2))", 12, "division by zero in 3 / 0"},
      {"min(1, 9223372036854775807 * 2)", 28, "integer overflow"},
  };
  for (const EvalErrorCase& c : cases) {
    Expr e = parsed(c.text);
    auto v = evaluate(e, lookupName);
    ASSERT_FALSE(v.ok()) << c.text << " evaluated to " << *v;
    EXPECT_EQ(v.error().loc, (SourceLoc{1, c.col})) << c.text << ": " << v.error().message;
    EXPECT_NE(v.error().message.find(c.message), std::string::npos) << c.text << ": " << v.error().message;
  }
}

TEST(ExprEvaluate, ErrorsWithoutPositionsUseTheFallback) {
  SourceLoc fallback{5, 6};
  auto v = evaluate(Expr(1) / Expr(0), lookupName, fallback);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().loc, fallback);
  EXPECT_EQ(v.error().message, "division by zero in 1 / 0");

  v = evaluate(Expr(INT64_MAX) + Expr(1), lookupName);
  ASSERT_FALSE(v.ok());
  EXPECT_FALSE(v.error().loc.valid());

  v = evaluate(Expr{}, lookupName, fallback);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().loc, fallback);
  EXPECT_EQ(v.error().message, "missing expression");

  // A positionless operand inside a positioned expression reports at its parent.
  Expr inner = Expr(1) / Expr(0);
  v = evaluate(Expr::binary(BinaryOp::Add, Expr(1), inner, SourceLoc{2, 9}), lookupName, fallback);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().loc, (SourceLoc{2, 9}));

  v = evaluate(Expr::name("nope"), lookupName, fallback);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().loc, fallback);
}

TEST(ExprEvaluate, OperatorsBuildTheSameTreesAsTheParser) {
  EXPECT_EQ(a() + b() * Expr(2), parsed("a + b * 2"));
  EXPECT_EQ((a() + b()) * Expr(2), parsed("(a + b) * 2"));
  EXPECT_EQ(a() - b() - c(), parsed("a - b - c"));
  EXPECT_EQ(a() / b() % c(), parsed("a / b % c"));
  EXPECT_EQ(ceilDiv(a(), Expr(4)), parsed("ceildiv(a, 4)"));
  EXPECT_EQ(min(a(), max(b(), Expr(-1))), parsed("min(a, max(b, -1))"));
  EXPECT_EQ(*evaluate(ceilDiv(a(), b()) + min(c(), d()) * max(c(), d()), lookupName), 4 + 15);
}

// ---------------------------------------------------------------------------
// Equality, names, literals

TEST(ExprEquality, IgnoresPositionsButNotStructure) {
  EXPECT_EQ(parsed("a+b"), parsed("  a  +\n b"));
  EXPECT_EQ(parsed("((a)) + (b)"), a() + b());
  EXPECT_EQ(Expr::name("a", SourceLoc{3, 4}), a());
  EXPECT_FALSE(parsed("a + b") == parsed("b + a"));
  EXPECT_FALSE(parsed("a + b") == parsed("a - b"));
  EXPECT_FALSE(parsed("a - (b - c)") == parsed("a - b - c"));
  EXPECT_FALSE(parsed("min(a, b)") == parsed("max(a, b)"));
  EXPECT_FALSE(parsed("1") == parsed("a"));
  EXPECT_FALSE(parsed("1") == parsed("2"));
  EXPECT_FALSE(parsed("a") == Expr{});
  EXPECT_TRUE(Expr{} == Expr{});
}

TEST(ExprEquality, LiteralsAndNames) {
  Expr lit = parsed("-3");
  ASSERT_EQ(lit.kind(), ExprKind::Literal);
  EXPECT_EQ(lit.literalValue(), -3);
  EXPECT_EQ(lit, Expr(-3));
  EXPECT_EQ(parsed("- 3"), Expr(-3));
  EXPECT_EQ(lit.toString(), "-3");
  EXPECT_FALSE(lit.isName());
  Expr name = parsed("world");
  EXPECT_TRUE(name.isName());
  EXPECT_EQ(name.nameValue(), "world");
  EXPECT_EQ(name.literalValue(), std::nullopt);
  EXPECT_TRUE(Expr{}.empty());
  EXPECT_FALSE(Expr{}.loc().valid());
}

TEST(ExprNames, VisitsEveryNameWithItsPosition) {
  std::vector<std::pair<std::string, SourceLoc>> seen;
  forEachName(parsed("a + min(b, rank) * a"),
              [&](const std::string& name, SourceLoc loc) { seen.emplace_back(name, loc); });
  std::vector<std::pair<std::string, SourceLoc>> want = {
      {"a", {1, 1}}, {"b", {1, 9}}, {"rank", {1, 12}}, {"a", {1, 20}}};
  EXPECT_EQ(seen, want);
  seen.clear();
  forEachName(parsed("1 + 2"), [&](const std::string& name, SourceLoc loc) { seen.emplace_back(name, loc); });
  EXPECT_TRUE(seen.empty());
  forEachName(Expr{}, [&](const std::string& name, SourceLoc loc) { seen.emplace_back(name, loc); });
  EXPECT_TRUE(seen.empty());
}

// ---------------------------------------------------------------------------
// Printing

struct PrintCase {
  Expr tree;
  std::string text;
};

TEST(ExprPrint, MinimalParentheses) {
  const std::vector<PrintCase> cases = {
      {a() + b() * c(), "a + b * c"},
      {(a() + b()) * c(), "(a + b) * c"},
      {a() - (b() - c()), "a - (b - c)"},
      {(a() - b()) - c(), "a - b - c"},
      {a() - (b() + c()), "a - (b + c)"},
      {a() + (b() + c()), "a + (b + c)"},
      {(a() + b()) + c(), "a + b + c"},
      {a() * (b() / c()), "a * (b / c)"},
      {(a() * b()) / c(), "a * b / c"},
      {a() / (b() * c()), "a / (b * c)"},
      {a() % (b() % c()), "a % (b % c)"},
      {a() * b() + c() * d(), "a * b + c * d"},
      {(a() + b()) * (c() - d()), "(a + b) * (c - d)"},
      {a() * b() - (c() + d()), "a * b - (c + d)"},
      {ceilDiv(a() + b(), c() * Expr(2)), "ceildiv(a + b, c * 2)"},
      {min(a(), max(b(), Expr(3))) * Expr(2), "min(a, max(b, 3)) * 2"},
      {ceilDiv(a(), b()) - min(c(), d()), "ceildiv(a, b) - min(c, d)"},
      {Expr(-3), "-3"},
      {a() - Expr(-3), "a - -3"},
      {Expr(-3) * a(), "-3 * a"},
      {a() * Expr(-3), "a * -3"},
      {Expr(INT64_MIN), "-9223372036854775808"},
      {Expr(INT64_MAX), "9223372036854775807"},
      {Expr(0), "0"},
      {Expr{}, ""},
  };
  for (const PrintCase& c : cases) {
    EXPECT_EQ(c.tree.toString(), c.text);
    if (c.tree.empty()) continue;
    auto back = parseExpr(c.text);
    ASSERT_TRUE(back.ok()) << c.text << ": " << back.error().message;
    EXPECT_EQ(*back, c.tree) << c.text;
  }
}

TEST(ExprPrint, CanonicalisesWrittenText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"((a))", "a"},
      {"(a+b)*c", "(a + b) * c"},
      {"(a*b)+(c*d)", "a * b + c * d"},
      {"((a - b) - c)", "a - b - c"},
      {"ceildiv( a , (b) )", "ceildiv(a, b)"},
      {"-3*(a)", "-3 * a"},
      {"a--3", "a - -3"},
      {"(((((7)))))", "7"},
  };
  for (const auto& [text, canonical] : cases) {
    Expr e = parsed(text);
    EXPECT_EQ(e.toString(), canonical) << text;
    EXPECT_EQ(parsed(canonical), e) << text;
    EXPECT_EQ(parsed(canonical).toString(), canonical) << text;
  }
}

TEST(ExprParse, Errors) {
  const std::vector<EvalErrorCase> cases = {
      {"", 1, "expected an expression, found end of file"},
      {"1 +", 4, "expected an expression, found end of file"},
      {"foo(1)", 1, "'foo' is not an integer function; expected ceildiv, min or max"},
      {"min(1)", 1, "'min' takes 2 arguments, got 1"},
      {"max(1, 2, 3)", 1, "'max' takes 2 arguments, got 3"},
      {"-a", 1, "'-' must be followed by an integer literal here"},
      {"--3", 1, "'-' must be followed by an integer literal here"},
      {"1 2", 3, "unexpected '2' after the expression"},
      {"(1", 3, "expected ')' to close the parenthesis, found end of file"},
      {"1)", 2, "unexpected ')' after the expression"},
      {"9223372036854775808", 1, "integer literal 9223372036854775808 does not fit in 64 bits"},
      {"-9223372036854775809", 2, "does not fit in 64 bits"},
      {"a + @", 5, "unexpected character '@'"},
      {"3x", 2, "unexpected 'x' after a number"},
      {"a = 1", 3, "unexpected '=' after the expression"},
  };
  for (const EvalErrorCase& c : cases) {
    auto e = parseExpr(c.text);
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_EQ(e.error().loc, (SourceLoc{1, c.col})) << c.text << ": " << e.error().message;
    EXPECT_NE(e.error().message.find(c.message), std::string::npos) << c.text << ": " << e.error().message;
  }
}

// ---------------------------------------------------------------------------
// Property: random trees round-trip through text.

class RandomExprs {
 public:
  explicit RandomExprs(uint32_t seed) : rng_(seed) {}

  Expr tree(int depth) {
    if (depth == 0 || rng_() % 4 == 0) return leaf();
    // Locals keep the draws in a fixed order.
    bool call = rng_() % 5 == 0;
    uint32_t which = rng_();
    Expr lhs = tree(depth - 1);
    Expr rhs = tree(depth - 1);
    if (call) {
      static const IntFunction fns[] = {IntFunction::CeilDiv, IntFunction::Min, IntFunction::Max};
      return Expr::call(fns[which % 3], {lhs, rhs});
    }
    static const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod};
    return Expr::binary(ops[which % 5], lhs, rhs);
  }

 private:
  Expr leaf() {
    static const std::vector<std::string> names = {"a", "b", "c", "d", "M", "i", "zero", "rank", "world", "n_2"};
    static const std::vector<int64_t> literals = {
        0, 1, 2, 3, 7, 10, 42, -1, -3, -100, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 4294967296};
    switch (rng_() % 3) {
      case 0: return Expr::name(names[rng_() % names.size()]);
      case 1: return Expr(literals[rng_() % literals.size()]);
      default: {
        uint64_t high = rng_();
        uint64_t bits = (high << 32) | rng_();
        int64_t v = static_cast<int64_t>(bits >> (1 + rng_() % 63));
        return Expr(rng_() % 2 ? v : -v);
      }
    }
  }

  std::mt19937 rng_;
};

// An evaluator on 128-bit integers with the language's rules, to check the
// overflow, division and sign checks of `evaluate`.
__extension__ typedef __int128 Wide;

std::optional<int64_t> reference(const Expr& e) {
  const ExprNode& n = e.node();
  auto fits = [](Wide v) -> std::optional<int64_t> {
    if (v < INT64_MIN || v > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(v);
  };
  switch (n.kind) {
    case ExprKind::Literal: return n.value;
    case ExprKind::Name: return lookupName(n.name);
    case ExprKind::Call:
    case ExprKind::Binary: {
      auto x = reference(n.operands[0]);
      auto y = reference(n.operands[1]);
      if (!x || !y) return std::nullopt;
      Wide p = *x, q = *y;
      if (n.kind == ExprKind::Call) {
        switch (n.function) {
          case IntFunction::Min: return std::min(*x, *y);
          case IntFunction::Max: return std::max(*x, *y);
          case IntFunction::CeilDiv:
            if (q <= 0 || p < 0) return std::nullopt;
            return fits((p + q - 1) / q);
        }
      }
      switch (n.binaryOp) {
        case BinaryOp::Add: return fits(p + q);
        case BinaryOp::Sub: return fits(p - q);
        case BinaryOp::Mul: return fits(p * q);
        case BinaryOp::Div: return q <= 0 || p < 0 ? std::nullopt : fits(p / q);
        case BinaryOp::Mod: return q <= 0 || p < 0 ? std::nullopt : fits(p % q);
      }
    }
  }
  return std::nullopt;
}

// Removes the grouping parenthesis opening at `open` and its partner.
std::string withoutParens(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t k = open; k < text.size(); ++k) {
    depth += text[k] == '(';
    depth -= text[k] == ')';
    if (depth == 0) return text.substr(0, open) + text.substr(open + 1, k - open - 1) + text.substr(k + 1);
  }
  return text;
}

TEST(ExprProperty, RandomTreesRoundTripThroughText) {
  RandomExprs gen(20240601);
  int evaluated = 0, failed = 0, paren = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Expr e = gen.tree(1 + iter % 6);
    std::string text = e.toString();
    auto back = parseExpr(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.error().message;
    ASSERT_EQ(*back, e) << text;
    ASSERT_EQ(back->toString(), text) << "printing is not idempotent";

    // The parsed tree has positions; evaluation agrees with the reference.
    auto v = evaluate(*back, lookupName);
    auto want = reference(e);
    ASSERT_EQ(v.ok(), want.has_value()) << text << (v.ok() ? "" : ": " + v.error().message);
    if (v.ok()) {
      ++evaluated;
      ASSERT_EQ(*v, *want) << text;
    } else {
      ++failed;
      ASSERT_TRUE(v.error().loc.valid()) << text;
      ASSERT_EQ(v.error().loc.line, 1u);
      ASSERT_LE(v.error().loc.col, text.size());
    }

    // Minimal: dropping any one pair of grouping parentheses changes the tree.
    for (size_t k = 0; k < text.size(); ++k) {
      if (text[k] != '(' || (k > 0 && std::isalpha(static_cast<unsigned char>(text[k - 1])))) continue;
      ++paren;
      std::string loose = withoutParens(text, k);
      auto other = parseExpr(loose);
      ASSERT_TRUE(!other.ok() || !(*other == e)) << "parentheses at " << k << " of '" << text << "' are redundant";
    }
  }
  // The generator reaches both outcomes and parenthesised forms.
  EXPECT_GT(evaluated, 300);
  EXPECT_GT(failed, 300);
  EXPECT_GT(paren, 300);
}

TEST(ExprProperty, DeepTreesWithinTheNestingLimit) {
  // A right-leaning chain needs one parenthesis per level: 256 levels print
  // to text that parses back.
  Expr e = Expr(1);
  for (int k = 0; k < kMaxExprLevels; ++k) e = Expr::binary(BinaryOp::Sub, a(), e);
  EXPECT_EQ(e.levels(), kMaxExprLevels);
  std::string text = e.toString();
  auto back = parseExpr(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, e);
  // A left-leaning chain needs none.
  Expr f = Expr(1);
  for (int k = 0; k < kMaxExprLevels; ++k) f = f + a();
  auto flat = parseExpr(f.toString());
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(*flat, f);
  EXPECT_EQ(f.toString().find('('), std::string::npos);
  // Beyond the limit: an error, not a stack overflow.
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
  auto tooDeep = parseExpr(deep);
  ASSERT_FALSE(tooDeep.ok());
  EXPECT_EQ(tooDeep.error().message,
            "expression nested too deeply: more than 256 levels of operators, parentheses and calls");
  EXPECT_EQ(tooDeep.error().loc, (SourceLoc{1, 257}));
}

// ---------------------------------------------------------------------------
// Limits: depth and size, whatever builds the tree.

TEST(ExprLimits, LevelsAndNodeCountAreDerivedWhenBuilt) {
  EXPECT_EQ(Expr().levels(), 0);
  EXPECT_EQ(Expr().nodeCount(), 0);
  EXPECT_EQ(Expr(3).levels(), 0);
  EXPECT_EQ(Expr(3).nodeCount(), 1);
  EXPECT_EQ((a() + b()).levels(), 1);
  EXPECT_EQ((a() + b()).nodeCount(), 3);
  EXPECT_EQ(((a() + b()) * c()).levels(), 2);
  EXPECT_EQ(min(a(), b() + c() * d()).levels(), 3);
  EXPECT_EQ(min(a(), b() + c() * d()).nodeCount(), 7);
  // The parser builds the same trees: parentheses are not nodes.
  EXPECT_EQ(parsed("((a)) + (b * (c))").levels(), 2);
  EXPECT_EQ(parsed("((a)) + (b * (c))").nodeCount(), 5);
}

std::string chainText(const std::string& op, int operators) {
  std::string text = "1";
  for (int k = 0; k < operators; ++k) text += " " + op + " 1";
  return text;
}

TEST(ExprLimits, ParserRefusesTheLevelPastTheLimitForEveryOperator) {
  for (std::string op : {"+", "-", "*", "/", "%"}) {
    SCOPED_TRACE(op);
    auto atLimit = parseExpr(chainText(op, kMaxExprLevels));
    ASSERT_TRUE(atLimit.ok()) << atLimit.error().message;
    EXPECT_EQ(atLimit->levels(), kMaxExprLevels);
    EXPECT_TRUE(evaluate(*atLimit, lookupName).ok());
    // 60,000 terms: refused at the 257th operator, column 4 * 256 + 3.
    auto over = parseExpr(chainText(op, 60000));
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.error().loc, (SourceLoc{1, 4 * kMaxExprLevels + 3}));
    EXPECT_EQ(over.error().message,
              "expression nested too deeply: more than 256 levels of operators, parentheses and calls");
  }
  // Parentheses, calls and operators add up on one path.
  std::string mixed = std::string(100, '(') + chainText("+", 100) + std::string(100, ')');
  EXPECT_TRUE(parseExpr("min(1, " + mixed + ")").ok());
  std::string tooMuch = "min(1, " + std::string(100, '(') + chainText("+", 156) + std::string(100, ')') + ")";
  auto refused = parseExpr(tooMuch);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("nested too deeply"), std::string::npos);
  std::string calls;
  for (int k = 0; k < 60000; ++k) calls += "max(1, ";
  auto deepCalls = parseExpr(calls + "1" + std::string(60000, ')'));
  ASSERT_FALSE(deepCalls.ok());
  EXPECT_EQ(deepCalls.error().loc, (SourceLoc{1, 7 * kMaxExprLevels + 1}));
}

TEST(ExprLimits, DeepTreesBuiltInCppNeverRecurse) {
  // A million levels, as a C++ loop can build them: destroying, comparing,
  // visiting and printing use no stack per level; evaluation refuses.
  constexpr int kLevels = 1'000'000;
  Expr left = Expr::name("n");
  Expr right = Expr::name("n");
  for (int k = 0; k < kLevels; ++k) {
    left = left + Expr(1);
    right = Expr(1) - right;
  }
  EXPECT_EQ(left.levels(), kLevels);
  EXPECT_EQ(right.nodeCount(), 2 * kLevels + 1);
  EXPECT_FALSE(left == right);
  Expr copy = left;
  EXPECT_TRUE(copy == left);
  int names = 0;
  forEachName(left, [&](const std::string& name, SourceLoc) { names += name == "n"; });
  EXPECT_EQ(names, 1);
  std::string text = left.toString();
  EXPECT_EQ(text.size(), 1 + 4 * static_cast<size_t>(kLevels));
  EXPECT_EQ(right.toString().substr(0, 12), "1 - (1 - (1 ");
  auto value = evaluate(
      left, [](const std::string&) { return std::optional<int64_t>(0); }, SourceLoc{3, 4});
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().loc, (SourceLoc{3, 4}));
  EXPECT_EQ(value.error().message,
            "expression nested too deeply: 1000000 levels of operators and calls; an expression may have at most 256");
  left = Expr();
  right = Expr();
  copy = Expr();  // the last owner frees a million nodes without recursing
  // Calls too.
  Expr call = Expr(1);
  for (int k = 0; k < kLevels; ++k) call = max(call, Expr(2));
  EXPECT_EQ(call.levels(), kLevels);
  EXPECT_TRUE(checkExprLimits(call).has_value());
}

TEST(ExprLimits, SharedSubtreesCountOncePerUse) {
  // `e = e + e` 64 times: 64 levels but 2^65 - 1 nodes to walk. Refused at
  // once instead of walking them.
  Expr e = a();
  for (int k = 0; k < 64; ++k) e = e + e;
  EXPECT_EQ(e.levels(), 64);
  EXPECT_EQ(e.nodeCount(), INT64_MAX);
  auto value = evaluate(e, lookupName);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message,
            "expression too large: more than 1048576 terms; an expression may have at most 1048576");
  // Just within the limit it evaluates: 2^19 uses of `a`.
  Expr f = a();
  for (int k = 0; k < 19; ++k) f = f + f;
  EXPECT_EQ(f.nodeCount(), (int64_t{1} << 20) - 1);
  auto sum = evaluate(f, lookupName);
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  EXPECT_EQ(*sum, 7 * (int64_t{1} << 19));
}

TEST(ExprLimits, MalformedTreesAreErrorsNotCrashes) {
  // Only C++ can build these: an empty operand, a call with one argument.
  Expr missing = Expr() + Expr(1);
  EXPECT_FALSE(missing.wellFormed());
  EXPECT_EQ(missing.toString(), "<missing> + 1");
  auto v = evaluate(missing, lookupName, SourceLoc{2, 5});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().loc, (SourceLoc{2, 5}));
  EXPECT_EQ(v.error().message, "malformed expression: an operator or call without its two operands");
  Expr oneArgument = Expr::call(IntFunction::Min, {Expr(1)});
  EXPECT_FALSE(oneArgument.wellFormed());
  EXPECT_EQ(oneArgument.toString(), "min(1)");
  EXPECT_FALSE(evaluate(oneArgument, lookupName).ok());
  EXPECT_FALSE(evaluate(Expr(2) * oneArgument, lookupName).ok());
  EXPECT_TRUE((Expr(2) * Expr(3)).wellFormed());
  EXPECT_FALSE(Expr().wellFormed());
}

TEST(ExprLimits, ApplyIntFunctionChecksLikeEvaluate) {
  EXPECT_EQ(*applyIntFunction(IntFunction::CeilDiv, 7, 2), 4);
  EXPECT_EQ(*applyIntFunction(IntFunction::Min, -3, 2), -3);
  EXPECT_EQ(*applyIntFunction(IntFunction::Max, -3, 2), 2);
  auto zero = applyIntFunction(IntFunction::CeilDiv, 7, 0, SourceLoc{4, 9});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().loc, (SourceLoc{4, 9}));
  EXPECT_EQ(zero.error().message, "division by zero in ceildiv");
}

}  // namespace
