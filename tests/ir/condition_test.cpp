// Conditions of `if` (ir/condition.h): printing with the fewest parentheses
// that keep the tree, parsing back to the same tree, evaluation with
// short-circuit `and`/`or` against a reference written here, and the limits
// that keep every walk within a bounded stack.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <string>

#include "ir/condition.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace hostir {
namespace {

// The condition of the program's first statement, an if.
Condition parseCondition(const std::string& text) {
  auto program = parseProgram("program p(a = 1, b = 2, c = 3) {\n  if " + text + " {\n  }\n}\n");
  if (!program) throw std::runtime_error(text + ": " + program.error().message);
  return program->body.at(0).ifBlock().cond;
}

Expr a() { return Expr::name("a"); }
Expr b() { return Expr::name("b"); }
Expr c() { return Expr::name("c"); }

TEST(Condition, PrecedenceIsPythons) {
  // not > and > or.
  Condition cond = parseCondition("a == 1 or b == 2 and not c == 3");
  ASSERT_EQ(cond.kind(), ConditionKind::Or);
  const ConditionNode& rhs = cond.node().operands[1].node();
  ASSERT_EQ(rhs.kind, ConditionKind::And);
  EXPECT_EQ(rhs.operands[1].kind(), ConditionKind::Not);
  EXPECT_EQ(cond,
            Condition::logicalOr(eq(a(), 1), Condition::logicalAnd(eq(b(), 2), Condition::logicalNot(eq(c(), 3)))));
  // and and or chain to the left.
  EXPECT_EQ(parseCondition("a < 1 and b < 2 and c < 3"),
            Condition::logicalAnd(Condition::logicalAnd(lt(a(), 1), lt(b(), 2)), lt(c(), 3)));
}

TEST(Condition, ParenthesesGroupConditionsOrExpressions) {
  EXPECT_EQ(parseCondition("(a + 1) * 2 == b"), eq((a() + 1) * 2, b()));
  EXPECT_EQ(parseCondition("(a == 1 or b == 2) and c == 3"),
            Condition::logicalAnd(Condition::logicalOr(eq(a(), 1), eq(b(), 2)), eq(c(), 3)));
  EXPECT_EQ(parseCondition("((a == 1))"), eq(a(), 1));
  EXPECT_EQ(parseCondition("(min(a, b)) <= (c)"), le(min(a(), b()), c()));
  EXPECT_EQ(parseCondition("not (a != 1 or (b) >= (c - 1))"),
            Condition::logicalNot(Condition::logicalOr(ne(a(), 1), ge(b(), c() - 1))));
}

TEST(Condition, PrintsTheFewestParenthesesThatKeepTheTree) {
  EXPECT_EQ(
      Condition::logicalOr(eq(a(), 1), Condition::logicalAnd(eq(b(), 2), Condition::logicalNot(eq(c(), 3)))).toString(),
      "a == 1 or b == 2 and not c == 3");
  EXPECT_EQ(Condition::logicalAnd(Condition::logicalOr(eq(a(), 1), eq(b(), 2)), gt(c(), 3)).toString(),
            "(a == 1 or b == 2) and c > 3");
  EXPECT_EQ(Condition::logicalAnd(lt(a(), 1), Condition::logicalAnd(lt(b(), 2), lt(c(), 3))).toString(),
            "a < 1 and (b < 2 and c < 3)");
  EXPECT_EQ(Condition::logicalNot(Condition::logicalNot(ge(a() + b(), c() * 2))).toString(), "not not a + b >= c * 2");
  EXPECT_EQ(Condition::logicalNot(Condition::logicalAnd(eq(a(), 1), eq(b(), 2))).toString(), "not (a == 1 and b == 2)");
}

// A random condition over a, b and c, up to `depth` levels of and/or/not.
Condition randomCondition(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 0 ? 5 : 1);
  auto operand = [&] {
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0: return a();
      case 1: return b() + 1;
      case 2: return c() % 2;
      case 3: return min(a(), c());
      default: return Expr(std::uniform_int_distribution<int64_t>(0, 3)(rng));
    }
  };
  switch (pick(rng)) {
    case 0:
    case 1: {
      auto op = static_cast<CompareOp>(std::uniform_int_distribution<int>(0, 5)(rng));
      return Condition::compare(op, operand(), operand());
    }
    case 2:
    case 3: return Condition::logicalAnd(randomCondition(rng, depth - 1), randomCondition(rng, depth - 1));
    case 4: return Condition::logicalOr(randomCondition(rng, depth - 1), randomCondition(rng, depth - 1));
    default: return Condition::logicalNot(randomCondition(rng, depth - 1));
  }
}

// The reference: Python's meaning, written out on the tree.
bool reference(const Condition& cond, const std::map<std::string, int64_t>& values) {
  const ConditionNode& n = cond.node();
  auto value = [&](const Expr& e) {
    return *evaluate(e, [&](const std::string& name) -> std::optional<int64_t> { return values.at(name); });
  };
  switch (n.kind) {
    case ConditionKind::Not: return !reference(n.operands[0], values);
    case ConditionKind::And: return reference(n.operands[0], values) ? reference(n.operands[1], values) : false;
    case ConditionKind::Or: return reference(n.operands[0], values) ? true : reference(n.operands[1], values);
    case ConditionKind::Compare: {
      int64_t x = value(n.lhs), y = value(n.rhs);
      switch (n.compare) {
        case CompareOp::Equal: return x == y;
        case CompareOp::NotEqual: return x != y;
        case CompareOp::Less: return x < y;
        case CompareOp::LessEqual: return x <= y;
        case CompareOp::Greater: return x > y;
        case CompareOp::GreaterEqual: return x >= y;
      }
    }
  }
  return false;
}

TEST(Condition, RandomConditionsPrintParseAndEvaluateAsTheReference) {
  std::mt19937 rng(7);
  for (int k = 0; k < 500; ++k) {
    Condition cond = randomCondition(rng, 4);
    const std::string text = cond.toString();
    SCOPED_TRACE(text);
    Condition parsed = parseCondition(text);
    EXPECT_EQ(parsed, cond);
    EXPECT_EQ(parsed.toString(), text);
    for (int64_t av = 0; av < 3; ++av) {
      for (int64_t cv = 0; cv < 3; ++cv) {
        std::map<std::string, int64_t> values{{"a", av}, {"b", 1}, {"c", cv}};
        auto got = evaluate(cond, [&](const std::string& name) -> std::optional<int64_t> { return values.at(name); });
        ASSERT_TRUE(got) << got.error().message;
        EXPECT_EQ(*got, reference(cond, values));
      }
    }
  }
}

TEST(Condition, EvaluationShortCircuitsAndPositionsItsErrors) {
  auto lookup = [](const std::string& name) -> std::optional<int64_t> { return name == "a" ? 0 : 4; };
  // The right side would divide by zero; the left one decides.
  EXPECT_FALSE(*evaluate(Condition::logicalAnd(ne(a(), 0), eq(b() / a(), 1)), lookup));
  EXPECT_TRUE(*evaluate(Condition::logicalOr(eq(a(), 0), eq(b() / a(), 1)), lookup));
  // Reached, it is an error at its operator.
  Condition reached = parseCondition("a == 0 or b / (a - 1) == 2");
  auto error = evaluate(reached, [](const std::string& name) -> std::optional<int64_t> { return name == "a" ? 1 : 4; });
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message, "division by zero in 4 / 0");
  EXPECT_EQ(error.error().loc.line, 2);
  EXPECT_EQ(error.error().loc.col, 18);
}

TEST(Condition, VisitsEveryNameLeftToRight) {
  std::vector<std::string> names;
  forEachName(parseCondition("a == 1 or not (b < c and min(c, a) > 0)"),
              [&](const std::string& name, SourceLoc) { names.push_back(name); });
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "c", "a"}));
}

TEST(Condition, DeepConditionsBuiltInCppAreRefusedAndNeverOverflowTheStack) {
  // A chain far deeper than any walk's stack could recurse over: building,
  // comparing, printing and destroying it never recurse.
  Condition deep = eq(a(), 1);
  for (int k = 0; k < 200000; ++k) deep = k % 2 ? Condition::logicalNot(deep) : Condition::logicalAnd(deep, eq(b(), 2));
  EXPECT_EQ(deep.levels(), 200001);
  EXPECT_EQ(deep, deep);
  EXPECT_FALSE(deep.toString().empty());
  Status limit = checkConditionLimits(deep);
  ASSERT_TRUE(limit.has_value());
  EXPECT_NE(limit->message.find("condition nested too deeply: 200001 levels"), std::string::npos) << limit->message;
  EXPECT_FALSE(evaluate(deep, [](const std::string&) -> std::optional<int64_t> { return 1; }));

  // In a program, the verifier refuses it before any walk.
  Program p;
  p.name = "p";
  p.params.push_back(Param{"a", 1, {}});
  p.params.push_back(Param{"b", 2, {}});
  IfBlock block;
  block.cond = deep;
  p.body.push_back(std::move(block));
  Status error = verifyStructure(p);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("condition nested too deeply"), std::string::npos) << error->message;
}

TEST(Condition, TheLimitIsExactInTextAndInCpp) {
  // kMaxExprLevels levels are accepted; one more is refused, in text or built.
  std::string text = "a == 1";
  Condition built = eq(a(), 1);
  for (int k = 1; k < kMaxExprLevels; ++k) {
    text = "not " + text;
    built = Condition::logicalNot(built);
  }
  EXPECT_EQ(built.levels(), kMaxExprLevels);
  EXPECT_FALSE(checkConditionLimits(built).has_value());
  EXPECT_EQ(parseCondition(text), built);
  EXPECT_TRUE(checkConditionLimits(Condition::logicalNot(built)).has_value());
  auto tooDeep = parseProgram("program p(a = 1) {\n  if not " + text + " {\n  }\n}\n");
  ASSERT_FALSE(tooDeep);
  EXPECT_NE(tooDeep.error().message.find("condition nested too deeply"), std::string::npos) << tooDeep.error().message;
}

TEST(Condition, MalformedConditionsBuiltInCppAreRefused) {
  Program p;
  p.name = "p";
  IfBlock block;
  block.cond = Condition::compare(CompareOp::Equal, Expr(), Expr(1));
  p.body.push_back(std::move(block));
  Status error = verifyStructure(p);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("malformed condition"), std::string::npos) << error->message;
  EXPECT_EQ(p.body[0].ifBlock().cond.toString(), "<missing> == 1");

  IfBlock missing;  // no condition at all
  p.body[0] = Statement(std::move(missing));
  error = verifyStructure(p);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "missing condition");
}

}  // namespace
}  // namespace hostir
