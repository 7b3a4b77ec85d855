// The scoped name resolver (ir/names.h) the verifier and the evaluator
// share: builtins, scopes, shadowing, slots.
#include <gtest/gtest.h>

#include <string>

#include "ir/names.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace hostir {
namespace {

TEST(Names, BuiltinsAreOrdinaryIntegersInTheFirstSlots) {
  NameResolver names;
  const NameSlot* rank = names.lookup("rank");
  const NameSlot* world = names.lookup("world");
  ASSERT_NE(rank, nullptr);
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(rank->slot, kRankSlot);
  EXPECT_EQ(world->slot, kWorldSlot);
  EXPECT_EQ(rank->kind, ValueKind::Int);
  EXPECT_TRUE(names.isBuiltin(*rank));
  EXPECT_EQ(names.slotCount(), 2u);
  EXPECT_TRUE(isBuiltinName("rank"));
  EXPECT_FALSE(isBuiltinName("M"));
  // The parser refuses to define them.
  EXPECT_TRUE(isReservedName("rank") && isReservedName("world"));
}

TEST(Names, InnerScopesSeeOuterNamesAndForgetTheirOwn) {
  NameResolver names;
  EXPECT_EQ(names.define("M", ValueKind::Int).slot, 2);
  EXPECT_EQ(names.define("x", ValueKind::Tensor).slot, 3);
  names.openScope();
  EXPECT_EQ(names.define("i", ValueKind::Int).slot, 4);
  EXPECT_EQ(names.lookup("x")->slot, 3);
  EXPECT_EQ(names.lookup("x")->kind, ValueKind::Tensor);
  EXPECT_EQ(names.lookup("i")->slot, 4);
  names.closeScope();
  EXPECT_EQ(names.lookup("i"), nullptr);
  EXPECT_EQ(names.lookup("undefined"), nullptr);
  // Slots are never reused unless asked: the evaluator keeps every one.
  EXPECT_EQ(names.anonymousSlot(), 5);
  names.openScope();
  EXPECT_EQ(names.define("j", ValueKind::Int).slot, 6);
  names.closeScope(/*reuseSlots=*/true);
  EXPECT_EQ(names.slotCount(), 6u);
  EXPECT_EQ(names.define("k", ValueKind::Int).slot, 6);
}

// "" when the program verifies, else the diagnostic's message.
std::string verifyText(const std::string& text) {
  auto parsed = parseProgram(text);
  if (!parsed.ok()) return "parse error: " + parsed.error().message;
  Status status = verifyProgram(*parsed);
  return status ? status->message : "";
}

// The verifier reports names through the resolver with its usual messages.
TEST(Names, VerifierMessages) {
  EXPECT_EQ(verifyText("program p() {\n"
                       "  y = copy(z)\n"
                       "}\n"),
            "unknown name 'z'");
  EXPECT_EQ(verifyText("program p() {\n"
                       "  set_current_stream(rank)\n"
                       "}\n"),
            "'rank' is an integer, but operand 's' of 'set_current_stream' must be a stream");
  EXPECT_EQ(verifyText("program p() {\n"
                       "  y = allocate(f32[world * 2, rank + 1])\n"
                       "}\n"),
            "");
  EXPECT_EQ(verifyText("program p() {\n"
                       "  t = allocate(f32[4])\n"
                       "  for i in range(2) {\n"
                       "    t = allocate(f32[4])\n"
                       "  }\n"
                       "}\n"),
            "'t' is already defined at 2:3");
  EXPECT_EQ(verifyText("program p() {\n"
                       "  for i in range(2) {\n"
                       "    t = allocate(f32[4])\n"
                       "  }\n"
                       "  deallocate(t)\n"
                       "}\n"),
            "'t' is defined inside a loop at 3:5 and is not visible here");
}

// A program built in C++ cannot redefine a builtin either.
TEST(Names, BuiltinsCannotBeRedefined) {
  Program program;
  program.name = "p";
  program.params.push_back(Param{"rank", 3, {}});
  Status status = verifyStructure(program);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->message, "'rank' is a builtin name and cannot be defined");
}

}  // namespace
}  // namespace hostir
