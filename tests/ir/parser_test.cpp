// The parser and printer: canonical printing, round trips, positions.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hostir {
namespace {

using testing::parseOrDie;
using testing::testProgramUncommented;

TEST(Parser, LanguageDocHasTheRowParallelProgram) {
  auto blocks = testing::programBlocks(testing::readFile(testing::sourceDir() / "docs" / "hostir-language.md"));
  ASSERT_EQ(blocks.size(), 1u);
  Program p = parseOrDie(blocks[0]);
  EXPECT_EQ(p.name, "row_parallel_linear");
  ASSERT_EQ(p.params.size(), 4u);
  EXPECT_EQ(p.params[1].name, "K");
  EXPECT_EQ(p.params[1].value, 512);
  ASSERT_EQ(p.decls.size(), 3u);
  EXPECT_EQ(p.decls[0].shardAxis, 1);
  EXPECT_EQ(p.decls[2].kind, DeclKind::Output);
  EXPECT_FALSE(p.decls[2].shardAxis.has_value());
  ASSERT_EQ(p.body.size(), 2u);
  ASSERT_TRUE(p.body[1].isFor());
  EXPECT_EQ(p.body[1].loop().body.size(), 5u);
}

// FLOAT is digits with a '.' or an exponent, as in Python: `7.` and `.5`
// too; each reads as the number it spells and prints back to the same.
TEST(Parser, FloatsWithADigitOnOneSideOfThePointAreNumbers) {
  for (auto [text, value] : {std::pair{"7.", 7.0}, std::pair{".5", 0.5}, std::pair{"2.e-3", 2e-3},
                             std::pair{".25e1", 2.5}, std::pair{"0.125", 0.125}}) {
    SCOPED_TRACE(text);
    Program p = parseOrDie(std::string("program p() {\n  input x : f32[4]\n  y = scale(x, by=") + text + ")\n}\n");
    const Operation& scale = p.body[0].op();
    EXPECT_EQ(scale.operands[operands::Scale::by]->floatValue, value);
    EXPECT_EQ(parseOrDie(printProgram(p)), p);
  }
}

TEST(Parser, EveryShippedProgramRoundTripsCanonically) {
  auto programs = testing::shippedPrograms();
  EXPECT_GE(programs.size(), 8u);
  for (const auto& [name, text] : programs) {
    SCOPED_TRACE(name);
    Program p = parseOrDie(text, name);
    std::string printed = printProgram(p);
    Program again = parseOrDie(printed, name + " (printed)");
    EXPECT_EQ(again, p) << printed;
    EXPECT_EQ(printProgram(again), printed) << "printing must be idempotent";
  }
}

TEST(Parser, DocExamplePrintsAsWrittenWithoutItsComment) {
  std::string block =
      testing::programBlocks(testing::readFile(testing::sourceDir() / "docs" / "hostir-language.md"))[0];
  std::string withoutComment = block.substr(block.find("program "));
  EXPECT_EQ(printProgram(parseOrDie(block)), withoutComment);
}

TEST(Parser, RecordsTokenPositions) {
  Program p = parseOrDie("program p(S = 2) {\n  input x : f32[4]\n  for i in range(S) {\n    y = copy(x)\n  }\n}\n");
  EXPECT_EQ(p.loc, (SourceLoc{1, 1}));
  EXPECT_EQ(p.params[0].loc, (SourceLoc{1, 11}));
  EXPECT_EQ(p.decls[0].loc, (SourceLoc{2, 9}));
  const ForLoop& loop = p.body[0].loop();
  EXPECT_EQ(loop.loc, (SourceLoc{3, 3}));
  EXPECT_EQ(loop.index.loc, (SourceLoc{3, 7}));
  const Operation& op = loop.body[0].op();
  EXPECT_EQ(op.loc, (SourceLoc{4, 9}));
  EXPECT_EQ(op.results[0].loc, (SourceLoc{4, 5}));
  EXPECT_EQ(op.operand("src")->loc, (SourceLoc{4, 14}));
}

TEST(Parser, AcceptsSeparatorsCommentsAndCrlf) {
  std::string text =
      "# leading comment\r\n\r\nprogram p() { # after brace\r\n  input x : f64[2, 3]; output y : f64[2, 3]\r\n"
      "  y = allocate(f64[2, 3]) ; copy(x, out=y) # trailing\r\n\r\n}\r\n# after\r\n";
  Program p = parseOrDie(text);
  EXPECT_EQ(p.decls.size(), 2u);
  EXPECT_EQ(p.body.size(), 2u);
  EXPECT_EQ(p.decls[0].type.dtype, DType::F64);
}

TEST(Parser, PositionalAndKeywordOperandsGiveTheSameProgram) {
  Program a = parseOrDie("program p() {\n input x : f32[4, 4]\n v = shard_by_stream(x, 1, 0, 2)\n}\n");
  Program b =
      parseOrDie("program p() {\n input x : f32[4, 4]\n v = shard_by_stream(x, chunks=2, index=0, axis=1)\n}\n");
  EXPECT_EQ(a, b);
  EXPECT_EQ(printProgram(a), printProgram(b));
  EXPECT_NE(printProgram(a).find("shard_by_stream(x, axis=1, index=0, chunks=2)"), std::string::npos);
}

TEST(Parser, KeepsExplicitDefaultsAsWritten) {
  Program p = parseOrDie("program p() {\n input x : f32[4]\n h = allreduce(x, op=sum)\n g = allreduce(x)\n}\n");
  std::string printed = printProgram(p);
  EXPECT_NE(printed.find("h = allreduce(x, op=sum)"), std::string::npos);
  EXPECT_NE(printed.find("g = allreduce(x)"), std::string::npos);
}

TEST(Parser, EveryOperationRoundTrips) {
  const std::string text = testProgramUncommented("ir/programs/every_operation.hir");
  Program p = parseOrDie(text);
  EXPECT_EQ(printProgram(p), text);
  EXPECT_EQ(parseOrDie(printProgram(p)), p);
}

TEST(Parser, EqualityIgnoresPositionsButNotContent) {
  Program a = parseOrDie("program p(M = 4) {\n input x : f32[M]\n}\n");
  Program b = parseOrDie("\n\nprogram   p( M = 4 )  {  input x : f32[ M ] }");
  Program c = parseOrDie("program p(M = 5) {\n input x : f32[M]\n}\n");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Parser, ParsesStandaloneExpressions) {
  auto e = parseExpr("ceildiv(M, S) * (i + 1) - 3 % 2");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->toString(), "ceildiv(M, S) * (i + 1) - 3 % 2");
}

// with blocks in every position: captured and numbered streams, nested,
// inside loops and around them. The printer writes them as the language
// does, and parsing the print gives the program back.
TEST(Parser, WithBlocksRoundTrip) {
  const std::string text = testProgramUncommented("ir/programs/with_blocks.hir");
  Program p = parseOrDie(text);
  EXPECT_EQ(printProgram(p), text);
  EXPECT_EQ(parseOrDie(printProgram(p)), p);
  ASSERT_TRUE(p.body[1].isWith());
  const WithBlock& outer = p.body[1].with();
  EXPECT_EQ(outer.loc, (SourceLoc{6, 3}));
  EXPECT_EQ(outer.stream, Arg::stream(Expr::name("S") + Expr::literal(1)));
  ASSERT_EQ(outer.body.size(), 3u);
  ASSERT_TRUE(outer.body[2].isWith());
  EXPECT_EQ(outer.body[2].with().stream, Arg::name("main"));
  EXPECT_EQ(outer.body[2].with().stream.loc, (SourceLoc{9, 10}));
  const WithBlock& inLoop = p.body[2].loop().body[0].with();
  ASSERT_EQ(inLoop.body.size(), 3u);
  EXPECT_TRUE(inLoop.body[1].isFor());
  EXPECT_TRUE(inLoop.body[2].isWith());
  EXPECT_TRUE(inLoop.body[2].with().body.empty());
}

TEST(Parser, WithBlocksOnOneLineAndEqualityIgnoresTheirPositions) {
  Program a =
      parseOrDie("program p() {\n  s = get_current_stream()\n  with s { e = record_event() }; wait_event(e)\n}\n");
  Program b = parseOrDie(
      "program p() {\n  s = get_current_stream()\n\n  with s {\n    e = record_event()\n  }\n  wait_event(e)\n}\n");
  Program c = parseOrDie(
      "program p() {\n  s = get_current_stream()\n  with stream(0) { e = record_event() }; wait_event(e)\n}\n");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(printProgram(a), printProgram(b));
}

// Handle and event arrays: elements defined and waited with index
// expressions, in loops, branches and with blocks. The printer writes them
// as the language does, parsing the print gives the program back, and
// equality sees the index.
TEST(Parser, HandleAndEventArraysRoundTrip) {
  const std::string text = testProgramUncommented("ir/programs/handle_and_event_arrays.hir");
  Program p = parseOrDie(text);
  EXPECT_EQ(printProgram(p), text);
  EXPECT_EQ(parseOrDie(printProgram(p)), p);
  const NameDef& first = *p.body[1].op().result();
  EXPECT_EQ(first.name, "h");
  EXPECT_EQ(first.index, Expr::literal(0));
  EXPECT_EQ(first.loc, (SourceLoc{6, 3}));
  const Operation& wait = p.body[2].loop().body[1].op();
  const Arg& waited = *wait.operands[operands::Wait::h];
  EXPECT_TRUE(waited.isElement());
  EXPECT_FALSE(waited.isName());
  EXPECT_EQ(waited.nameValue(), "h");
  EXPECT_EQ(waited.index, Expr::name("i"));
  EXPECT_EQ(waited.loc, (SourceLoc{13, 10}));
  EXPECT_EQ(waited, Arg::element("h", Expr::name("i")));
  EXPECT_NE(waited, Arg::element("h", Expr::name("i") + Expr::literal(1)));
  EXPECT_NE(waited, Arg::name("h"));

  Program other = parseOrDie(text.substr(0, text.find("wait(h[i])")) + "wait(h[i + 0])" +
                             text.substr(text.find("wait(h[i])") + 10));
  EXPECT_NE(other, p) << "the index is part of the program";
  std::string renamed = text;
  renamed.replace(renamed.find("h[0]"), 4, "h[1]");
  EXPECT_NE(parseOrDie(renamed), p) << "a defined element's index is part of the program";
}

// if blocks with and without else, nested, in loops, with blocks and each
// other; conditions of every form. The printer writes them as the language
// does, and parsing the print gives the program back.
TEST(Parser, IfBlocksRoundTrip) {
  const std::string text = testProgramUncommented("ir/programs/if_blocks.hir");
  Program p = parseOrDie(text);
  EXPECT_EQ(printProgram(p), text);
  EXPECT_EQ(parseOrDie(printProgram(p)), p);
  ASSERT_TRUE(p.body[1].isIf());
  const IfBlock& first = p.body[1].ifBlock();
  EXPECT_EQ(first.loc, (SourceLoc{6, 3}));
  EXPECT_EQ(first.cond, eq(Expr::name("rank"), 0));
  EXPECT_EQ(first.cond.loc(), (SourceLoc{6, 11}));
  ASSERT_EQ(first.thenBody.size(), 1u);
  ASSERT_EQ(first.elseBody.size(), 1u);
  EXPECT_TRUE(first.elseBody[0].isIf());
  EXPECT_TRUE(first.elseBody[0].ifBlock().elseBody.empty());
  const IfBlock& inLoop = p.body[2].loop().body[0].ifBlock();
  const IfBlock& inWith = inLoop.thenBody[0].with().body[0].ifBlock();
  EXPECT_EQ(inWith.cond.kind(), ConditionKind::Or);
  ASSERT_EQ(inWith.elseBody.size(), 1u);
  EXPECT_TRUE(inWith.elseBody[0].isFor());
  // Every statement list is reached by walkStatements, else branches included.
  int statements = 0;
  walkStatements(p.body, [&](const Statement&) { ++statements; });
  EXPECT_EQ(statements, 11);
}

TEST(Parser, IfBlockLayoutsGiveTheSameProgram) {
  // One line, else on its own line, an empty else branch: the same program,
  // printed the one way. Positions do not count; branches do.
  Program oneLine = parseOrDie("program p() {\n  if 1 < 2 { n = 1 } else { m = 2 }; k = 3\n}\n");
  Program spread =
      parseOrDie("program p() {\n  if 1 < 2\n  {\n    n = 1\n  }\n  else\n  {\n    m = 2\n  }\n\n  k = 3\n}\n");
  Program swapped = parseOrDie("program p() {\n  if 1 < 2 { m = 2 } else { n = 1 }; k = 3\n}\n");
  EXPECT_EQ(oneLine, spread);
  EXPECT_NE(oneLine, swapped);
  EXPECT_EQ(printProgram(oneLine), printProgram(spread));
  EXPECT_EQ(printProgram(oneLine), "program p() {\n  if 1 < 2 {\n    n = 1\n  } else {\n    m = 2\n  }\n  k = 3\n}\n");
  Program emptyElse = parseOrDie("program p() {\n  if 1 < 2 {\n    n = 1\n  } else {\n  }\n}\n");
  EXPECT_EQ(printProgram(emptyElse), "program p() {\n  if 1 < 2 {\n    n = 1\n  }\n}\n");
  EXPECT_EQ(parseOrDie(printProgram(emptyElse)), emptyElse);
}

TEST(Parser, IfBlocksBuiltInCppPrintAsParsed) {
  ProgramBuilder b("p");
  Expr m = b.param("M", 8);
  Value x = b.input("x", DType::F32, {m});
  b.forLoop("i", 2, [&](Expr i) {
    b.ifElse(
        Condition::logicalOr(eq(Expr::name("rank"), 0), gt(i, 0)), [&] { b.copy(x, "a"); },
        [&] { b.ifElse(le(m, 4), [&] { b.copy(x, "c"); }); });
  });
  Program built = b.build();
  ASSERT_FALSE(verifyStructure(built).has_value());
  EXPECT_EQ(printProgram(built), testProgramUncommented("ir/programs/if_blocks_built_in_cpp.hir"));
  EXPECT_EQ(parseOrDie(printProgram(built)), built);
}

}  // namespace
}  // namespace hostir
