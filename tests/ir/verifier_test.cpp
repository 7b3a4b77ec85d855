// The verifier on well-formed programs: every operation verifies where the
// shapes divide, for teams of 1 to 4 ranks; params, integer bindings, rank-
// dependent expressions and loop scopes behave as the language doc says.
//
// The error cases written as text (this source, these settings, this error
// at this position) live in tests/diagnostics/*.hir; see its README.md. Here
// stay the programs that verify (their texts in tests/ir/programs/), and the
// errors of programs built in C++ or generated.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/strip_compute.h"
#include "test_files.h"

namespace {

using namespace hostir;
using hostir::testing::testProgramText;

Program parse(const std::string& text) {
  auto parsed = parseProgram(text);
  EXPECT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "t.hir", text);
  return parsed.ok() ? *parsed : Program{};
}

// "" when the program verifies, else the rendered first line of the diagnostic.
std::string verifyText(const std::string& text, int64_t world = 1, std::map<std::string, int64_t> params = {}) {
  auto parsed = parseProgram(text);
  if (!parsed.ok()) return "parse error: " + renderDiagnostic(parsed.error(), "t.hir", text);
  Status status = verifyProgram(*parsed, Bindings{std::move(params), world});
  if (!status) return "";
  std::string rendered = renderDiagnostic(*status, "t.hir", text);
  return rendered.substr(0, rendered.find('\n'));
}

std::string error(const std::string& where, const std::string& message) {
  return "t.hir:" + where + ": error: " + message;
}

// ---------------------------------------------------------------------------
// Every operation of the language in a valid program.

struct OpProgram {
  std::string name;
  std::string source;
};

void PrintTo(const OpProgram& p, std::ostream* os) { *os << p.name; }

std::vector<OpProgram> opPrograms() {
  return {
      {"allocate", testProgramText("ir/programs/allocate.hir")},
      {"deallocate", testProgramText("ir/programs/deallocate.hir")},
      {"shard_by_stream", testProgramText("ir/programs/shard_by_stream.hir")},
      {"linear", testProgramText("ir/programs/linear.hir")},
      {"matmul", testProgramText("ir/programs/matmul.hir")},
      {"copy_and_add", testProgramText("ir/programs/copy_and_add.hir")},
      {"elementwise", testProgramText("ir/programs/elementwise.hir")},
      {"rows", testProgramText("ir/programs/rows.hir")},
      {"attention", testProgramText("ir/programs/attention.hir")},
      {"gather_scatter_rows", testProgramText("ir/programs/gather_scatter_rows.hir")},
      {"matmul_transposed_batched", testProgramText("ir/programs/matmul_transposed_batched.hir")},
      {"cast", testProgramText("ir/programs/cast.hir")},
      {"allreduce", testProgramText("ir/programs/allreduce.hir")},
      {"allgather", testProgramText("ir/programs/allgather.hir")},
      {"reduce_scatter", testProgramText("ir/programs/reduce_scatter.hir")},
      {"all_to_all", testProgramText("ir/programs/all_to_all.hir")},
      {"broadcast", testProgramText("ir/programs/broadcast.hir")},
      {"sendrecv", testProgramText("ir/programs/sendrecv.hir")},
      {"streams", testProgramText("ir/programs/streams.hir")},
      {"events", testProgramText("ir/programs/events.hir")},
      {"integer_bindings", testProgramText("ir/programs/integer_bindings.hir")},
      {"row_parallel_linear", testProgramText("ir/programs/row_parallel_linear.hir")},
      {"unary_math", testProgramText("ir/programs/unary_math.hir")},
      {"binary_math", testProgramText("ir/programs/binary_math.hir")},
      {"layer_ops", testProgramText("ir/programs/layer_ops.hir")},
  };
}

class VerifierOps : public ::testing::TestWithParam<OpProgram> {};

TEST_P(VerifierOps, VerifiesForWorldsOneToFour) {
  Program p = parse(GetParam().source);
  EXPECT_EQ(verifyStructure(p), std::nullopt);
  for (int64_t world = 1; world <= 4; ++world) {
    Status status = verifyProgram(p, Bindings{{}, world});
    EXPECT_FALSE(status.has_value()) << "world " << world << ": "
                                     << renderDiagnostic(*status, "t.hir", GetParam().source);
  }
}

INSTANTIATE_TEST_SUITE_P(Verifier, VerifierOps, ::testing::ValuesIn(opPrograms()),
                         [](const ::testing::TestParamInfo<OpProgram>& info) { return info.param.name; });

TEST(VerifierOpsCoverage, EveryOperationAppears) {
  std::set<OpKind> kinds;
  std::set<IntFunction> functions;
  for (const OpProgram& p : opPrograms()) {
    Program program = parse(p.source);
    walkStatements(program.body, [&](const Statement& stmt) {
      if (!stmt.isOp()) return;
      kinds.insert(stmt.op().kind);
      if (stmt.op().kind != OpKind::IntValue) return;
      const Expr& value = stmt.op().operands[operands::IntValue::value]->expr;
      if (value.kind() == ExprKind::Call) functions.insert(value.node().function);
    });
  }
  for (int k = 0; k <= static_cast<int>(OpKind::IntValue); ++k)
    EXPECT_TRUE(kinds.count(static_cast<OpKind>(k))) << "no program uses " << signatureOf(static_cast<OpKind>(k)).name;
  EXPECT_EQ(functions.size(), 3u);
}

// ---------------------------------------------------------------------------
// Shapes the verifier computes, observed through output declarations.

TEST(VerifierShapes, ShardByStreamChunks) {
  // Extent 10 in 4 chunks: 3, 3, 3, 1.
  const std::string text = testProgramText("ir/programs/shard_by_stream_chunks.hir");
  for (int64_t index : {0, 1, 2}) EXPECT_EQ(verifyText(text, 1, {{"I", index}}), "") << index;
  // Extent 12: 3 each.
  EXPECT_EQ(verifyText(text, 1, {{"I", 3}, {"E", 12}}), "");
  // The last chunk [1, 2] (I=3), and an empty one [0, 2] (E=2, I=2): outputs.hir.
}

TEST(VerifierShapes, ViewOfAShardedInput) {
  const std::string text = testProgramText("ir/programs/view_of_a_sharded_input.hir");
  EXPECT_EQ(verifyText(text, 2), "");
  // One and three ranks: shapes.hir.
}

TEST(VerifierShapes, LinearAndMatmulResults) {
  const std::string text = testProgramText("ir/programs/linear_and_matmul_results.hir");
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"M", 7}, {"N", 7}}), "");
  EXPECT_EQ(verifyText(text, 1, {{"K", 7}}), "");
}

// The shapes of the computations' results, observed through output declarations.
TEST(VerifierShapes, ResultsOfTheComputations) {
  const std::string text = testProgramText("ir/programs/results_of_the_computations.hir");
  EXPECT_EQ(verifyText(text), "");
  // Indices of rank 7 and rows of rank 2 make a result of 9 dimensions, one too many.
  std::string tooDeep = text;
  tooDeep.replace(tooDeep.find("i32[M, N]"), 9, "i32[1, 1, 1, 1, 1, M, N]");
  EXPECT_EQ(verifyText(tooDeep), error("20:7",
                                       "the result of 'gather_rows', [1, 1, 1, 1, 1, 4, 6, 2, 3], has 9 dimensions; "
                                       "tensors have at most 8"));
}

// strip-compute replaces each computation's result by an allocation of its
// symbolic type (ir/symbolic_types): the stripped program must verify too,
// with the outputs' declared shapes and dtypes.
TEST(VerifierShapes, SymbolicTypesOfTheComputationsMatchTheVerifier) {
  const std::string text = testProgramText("ir/programs/symbolic_types.hir");
  Program program = parse(text);
  ASSERT_EQ(verifyProgram(program, Bindings{{}, 2}), std::nullopt);
  StripComputePass strip;
  ASSERT_EQ(strip.run(program, PassContext{}), std::nullopt);
  for (const Statement& stmt : program.body) EXPECT_EQ(stmt.op().kind, OpKind::Allocate) << printProgram(program);
  Status status = verifyProgram(program, Bindings{{}, 2});
  EXPECT_FALSE(status.has_value()) << renderDiagnostic(*status, "stripped.hir", printProgram(program));
}

TEST(VerifierShapes, ShapesAreNotStructural) {
  const std::string text = testProgramText("ir/programs/shapes_are_not_structural.hir");
  EXPECT_EQ(verifyStructure(parse(text)), std::nullopt) << "shapes are not a structural matter";
  // With the defaults 'matmul' contracts [4, 5] with [4, 6]: shapes.hir.
  EXPECT_EQ(verifyText(text, 1, {{"N", 4}}), "");
}

// ---------------------------------------------------------------------------
// Teams: every rank is checked; rank and world feed the integers.

TEST(VerifierWorlds, DocExampleNeedsKToDivide) {
  const std::string text = testProgramText("ir/programs/row_parallel_linear_doc.hir");
  for (int64_t world : {1, 2, 4, 8}) EXPECT_EQ(verifyText(text, world), "") << world;
  EXPECT_EQ(verifyText(text, 3, {{"K", 510}}), "");
  // K=512 over 3 ranks and K=510 over 4: collectives.hir.
}

TEST(VerifierWorlds, EveryRankIsChecked) {
  const std::string text =
      "program p(M = 12) {\n"
      "  input x : f32[M]\n"
      "  v = shard_by_stream(x, axis=0, index=rank, chunks=3)\n"
      "}\n";
  for (int64_t world : {1, 2, 3}) EXPECT_EQ(verifyText(text, world), "") << world;
  // Rank 3 of 4 asks for chunk 3 of 3: shapes.hir.
}

TEST(VerifierWorlds, RankDependentShapes) {
  const std::string text = testProgramText("ir/programs/rank_dependent_shapes.hir");
  EXPECT_EQ(verifyText(text, 1), "");
  // Rank 1 of 2 defines [5]: outputs.hir.
}

TEST(VerifierWorlds, BroadcastRootFromTheLoopIndex) {
  const std::string wrapped = testProgramText("ir/programs/broadcast_root_wrapped.hir");
  const std::string raw = testProgramText("ir/programs/broadcast_root_raw_index.hir");
  for (int64_t world = 1; world <= 4; ++world) EXPECT_EQ(verifyText(wrapped, world), "") << world;
  EXPECT_EQ(verifyText(raw, 4), "");
  // The raw index over 3 ranks, and over 4 with S=5: collectives.hir.
}

TEST(VerifierWorlds, LargeWorlds) {
  // A world of 0 or -2 ranks is an error: bindings.hir.
  EXPECT_EQ(verifyText("program p() {\n}\n", 64), "");
}

// ---------------------------------------------------------------------------
// Params and `--set` overrides.

TEST(VerifierParams, OverridesChangeShapes) {
  const std::string text =
      "program p(M = 8, N = 3) {\n"
      "  input x : f32[M, N]\n"
      "  output y : f32[8, 3]\n"
      "  y = copy(x)\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"M", 8}}), "");
  // M=6, M=6 N=4 (outputs.hir), M=-1 (integers.hir) and an unknown Q (bindings.hir) are errors.
}

TEST(VerifierParams, OverridesChangeLoopCounts) {
  const std::string text = testProgramText("ir/programs/loop_count_param.hir");
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"S", 2}}), "");
  EXPECT_EQ(verifyText(text, 1, {{"S", 0}}), "");
  // S=4 asks for chunk 3 of 3: shapes.hir.
}

TEST(VerifierParams, BindParams) {
  Program p = parse("program p(M = 8, N = 3) {\n}\n");
  auto values = bindParams(p, Bindings{{{"N", 5}}, 1});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::map<std::string, int64_t>{{"M", 8}, {"N", 5}}));
  auto defaults = bindParams(p, Bindings{});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(*defaults, (std::map<std::string, int64_t>{{"M", 8}, {"N", 3}}));
  auto unknown = bindParams(p, Bindings{{{"K", 5}}, 1});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "program 'p' has no parameter 'K' (its parameters: M, N)");
  auto none = bindParams(parse("program q() {\n}\n"), Bindings{{{"K", 5}}, 1});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "program 'q' has no parameter 'K' (its parameters: none)");
}

// ---------------------------------------------------------------------------
// Integer bindings: ceildiv, min, max.

TEST(VerifierIntegers, BindingsFeedShapes) {
  const std::string text = testProgramText("ir/programs/integer_bindings_feed_shapes.hir");
  EXPECT_EQ(verifyText(text), "");
  // M=13 and M=2 change the output's shape (outputs.hir); S=0 divides by zero (integers.hir).
}

TEST(VerifierIntegers, ChainedAndInLoops) {
  const std::string text = testProgramText("ir/programs/integer_bindings_in_loops.hir");
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 2), "");
  // M = 12 keeps k = 6.
  EXPECT_EQ(verifyText(text, 1, {{"M", 12}}), "");
  // M = 8 makes n = 2 chunks, but the index c still reaches 2 (shapes.hir); M = 4,
  // S = 2 keeps the indices in range and makes k = 4 (outputs.hir).
}

// ---------------------------------------------------------------------------
// Scopes.

TEST(VerifierScopes, SiblingLoopsReuseNames) {
  const std::string text = testProgramText("ir/programs/sibling_loops_reuse_names.hir");
  EXPECT_EQ(verifyStructure(parse(text)), std::nullopt);
  for (int64_t world = 1; world <= 4; ++world) EXPECT_EQ(verifyText(text, world), "") << world;
}

TEST(VerifierScopes, EachIterationHasItsOwnTensors) {
  // Deallocating iteration 0's t leaves iteration 1's t alive.
  const std::string text = testProgramText("ir/programs/each_iteration_own_tensors.hir");
  EXPECT_EQ(verifyText(text), "");
}

TEST(VerifierScopes, LoopRangeMayUseOuterIndex) {
  const std::string text = testProgramText("ir/programs/loop_range_outer_index.hir");
  EXPECT_EQ(verifyText(text), "");
  // A later loop's range cannot use an earlier loop's index: scopes.hir, with
  // shadowing and the names a loop leaves behind.
}

// ---------------------------------------------------------------------------
// Limits for programs built in C++: they bypass the parser, so the structure
// check refuses what the parser would (depth, size, nesting, rank, operands).

// The verifier's message, or "" when the program verifies.
std::string messageOf(const Program& p, int64_t world = 1, std::map<std::string, int64_t> params = {}) {
  Status status = verifyProgram(p, Bindings{std::move(params), world});
  return status ? status->message : "";
}

// 1 + 0 + 0 + ... with `levels` operators, left- or right-leaning: value 1.
Expr chainOfLevels(int levels, bool rightLeaning) {
  Expr e = Expr(1);
  for (int k = 0; k < levels; ++k) e = rightLeaning ? Expr(0) + e : e + Expr(0);
  return e;
}

// A program with `e` (whose value is 1) in one place where expressions stand.
struct BuiltPosition {
  std::string name;
  std::function<void(ProgramBuilder&, Expr)> build;
};

std::vector<BuiltPosition> builtPositions() {
  return {
      {"input_dim",
       [](ProgramBuilder& b, Expr e) {
         b.input("x", DType::F32, {4, e});
       }},
      {"output_dim",
       [](ProgramBuilder& b, Expr e) {
         b.output("y", DType::F32, {e});
         b.allocate(DType::F32, {1}, "y");
       }},
      {"allocate_dim",
       [](ProgramBuilder& b, Expr e) {
         b.allocate(DType::F32, {e, 2});
       }},
      {"loop_end", [](ProgramBuilder& b, Expr e) { b.forLoop("i", e, [](Expr) {}); }},
      {"loop_start", [](ProgramBuilder& b, Expr e) { b.forLoop("i", e, 3, [](Expr) {}); }},
      {"nested_loop_end",
       [](ProgramBuilder& b, Expr e) { b.forLoop("i", 2, [&](Expr) { b.forLoop("j", e, [](Expr) {}); }); }},
      {"shard_index",
       [](ProgramBuilder& b, Expr e) {
         Value x = b.input("x", DType::F32, {4});
         b.shardByStream(x, 0, e, 2);
       }},
      {"broadcast_root",
       [](ProgramBuilder& b, Expr e) {
         Value x = b.input("x", DType::F32, {4});
         b.broadcast(x, e);
       }},
      {"stream_number", [](ProgramBuilder& b, Expr e) { b.setCurrentStream(StreamRef::worker(e)); }},
      {"synchronize", [](ProgramBuilder& b, Expr e) { b.synchronize(StreamRef::worker(e)); }},
      {"int_value", [](ProgramBuilder& b, Expr e) { b.intValue(e); }},
  };
}

Program buildWith(const BuiltPosition& position, Expr e) {
  ProgramBuilder b("p");
  position.build(b, std::move(e));
  return b.build();
}

TEST(VerifierLimits, DeepExpressionsBuiltInCppAreErrorsEverywhere) {
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    // At the limit: verifies, and prints to text the parser accepts.
    Program atLimit = buildWith(position, chainOfLevels(kMaxExprLevels, true));
    EXPECT_EQ(messageOf(atLimit, 2), "");
    auto reparsed = parseProgram(printProgram(atLimit));
    ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
    EXPECT_EQ(*reparsed, atLimit);
    // 200,000 levels either way: an error from the structure check, no stack overflow.
    for (bool right : {false, true}) {
      Program deep = buildWith(position, chainOfLevels(200'000, right));
      Status structure = verifyStructure(deep);
      ASSERT_TRUE(structure.has_value());
      EXPECT_EQ(
          structure->message,
          "expression nested too deeply: 200000 levels of operators and calls; an expression may have at most 256");
      EXPECT_EQ(messageOf(deep, 2), structure->message);
    }
    Program overLimit = buildWith(position, chainOfLevels(kMaxExprLevels + 1, false));
    EXPECT_EQ(messageOf(overLimit, 2),
              "expression nested too deeply: 257 levels of operators and calls; an expression may have at most 256");
  }
}

TEST(VerifierLimits, SharedSubtreesBuiltInCppAreRefusedQuickly) {
  // `e = e + e` 64 times: a small object that stands for 2^65 nodes.
  Expr e = Expr(1);
  for (int k = 0; k < 64; ++k) e = e + e;
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(messageOf(buildWith(position, e)),
              "expression too large: more than 1048576 terms; an expression may have at most 1048576");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  }
}

TEST(VerifierLimits, MalformedExpressionsBuiltInCppAreErrors) {
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    EXPECT_EQ(messageOf(buildWith(position, Expr() + Expr(1))),
              "malformed expression: an operator or call without its two operands");
    EXPECT_EQ(messageOf(buildWith(position, Expr::call(IntFunction::Min, {Expr(1)}))),
              "malformed expression: an operator or call without its two operands");
  }
  ProgramBuilder b("p");
  b.allocate(DType::F32, {Expr()});
  EXPECT_EQ(messageOf(b.build()), "missing integer expression");
}

// `depth` nested loops around one statement, built without recursion.
Program loopNest(int depth) {
  Operation event(OpKind::RecordEvent);
  event.results.push_back(NameDef{"e", {}});
  std::vector<Statement> body{Statement(event)};
  for (int k = depth; k-- > 0;) {
    ForLoop loop;
    loop.index = NameDef{"j" + std::to_string(k), {}};
    loop.end = Expr(1);
    loop.body = std::move(body);
    body = {Statement(std::move(loop))};
  }
  Program p;
  p.name = "p";
  p.body = std::move(body);
  return p;
}

TEST(VerifierLimits, LoopNestsBuiltInCppAreLimited) {
  EXPECT_EQ(messageOf(loopNest(kMaxLoopNesting)), "");
  EXPECT_EQ(messageOf(loopNest(kMaxLoopNesting + 1)),
            "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  EXPECT_EQ(messageOf(loopNest(1000)), "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  // The printed nest at the limit parses back; one more loop does not.
  auto reparsed = parseProgram(printProgram(loopNest(kMaxLoopNesting)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
  EXPECT_EQ(*reparsed, loopNest(kMaxLoopNesting));
  auto over = parseProgram(printProgram(loopNest(kMaxLoopNesting + 1)));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  EXPECT_EQ(over.error().loc, (SourceLoc{66, 131}));
}

// Loops and with blocks count together towards the nesting limit; with
// blocks alone too.
TEST(VerifierLimits, WithBlocksCountTowardsTheNestingLimit) {
  auto nest = [](int loops, int withs) {
    Program p = loopNest(loops);
    std::vector<Statement> body = std::move(p.body);
    for (int k = 0; k < withs; ++k) {
      WithBlock with;
      with.stream = Arg::stream(Expr(k));
      with.body = std::move(body);
      body = {Statement(std::move(with))};
    }
    p.body = std::move(body);
    return p;
  };
  const std::string tooDeep = "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'";
  EXPECT_EQ(messageOf(nest(32, 32)), "");
  EXPECT_EQ(messageOf(nest(32, 33)), tooDeep);
  EXPECT_EQ(messageOf(nest(0, 65)), tooDeep);
  auto reparsed = parseProgram(printProgram(nest(32, 32)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
  EXPECT_EQ(*reparsed, nest(32, 32));
  auto over = parseProgram(printProgram(nest(0, 65)));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, tooDeep);
}

// What the parser refuses in text, the structure check refuses in a with
// block built in C++: a stream that is not a stream, a tensor as the stream.
TEST(Verifier, WithBlocksBuiltInCppNeedAStream) {
  auto withStream = [](Arg stream) {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {Expr(4)});
    Program p = b.build();
    WithBlock with;
    with.stream = std::move(stream);
    p.body.push_back(Statement(std::move(with)));
    (void)x;
    return p;
  };
  EXPECT_EQ(messageOf(withStream(Arg::boolean(true))), "the stream of 'with' must be a captured stream or stream(e)");
  EXPECT_EQ(messageOf(withStream(Arg::integer(Expr(1)))),
            "the stream of 'with' must be a captured stream or stream(e)");
  EXPECT_EQ(messageOf(withStream(Arg::name("x"))), "'x' is a tensor, but the stream of 'with' must be a stream");
  EXPECT_EQ(messageOf(withStream(Arg::stream(Expr(2)))), "");
}

TEST(VerifierLimits, TensorRankAndShardAxisBuiltInCpp) {
  std::vector<Expr> eight(8, Expr(1)), nine(9, Expr(1));
  {
    ProgramBuilder b("p");
    b.input("x", DType::F32, eight, 7);
    b.allocate(DType::F64, eight);
    EXPECT_EQ(messageOf(b.build()), "");
  }
  {
    ProgramBuilder b("p");
    b.input("x", DType::F32, nine);
    EXPECT_EQ(messageOf(b.build()), "this tensor type has 9 dimensions; tensors have at most 8");
  }
  {
    ProgramBuilder b("p");
    b.allocate(DType::BF16, nine);
    EXPECT_EQ(messageOf(b.build()), "this tensor type has 9 dimensions; tensors have at most 8");
  }
  for (int64_t axis : {2, -1, 100}) {
    ProgramBuilder b("p");
    b.input("x", DType::F32, {4, 4}, axis);
    EXPECT_EQ(messageOf(b.build(), 2), fmt::format("shard axis {} is out of range for a tensor of rank 2", axis));
  }
}

TEST(VerifierLimits, HandBuiltOperationsMeetTheirSignatures) {
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Allocate);
    op.results.push_back(NameDef{"t", {}});
    b.append(op);  // no type
    EXPECT_EQ(messageOf(b.build()), "'allocate' is missing its operand 'type'");
  }
  {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {4, 4});
    Operation op(OpKind::Linear);
    op.operand("x") = Arg::integer(Expr(3));
    op.operand("w") = x.arg();
    op.results.push_back(NameDef{"y", {}});
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "operand 'x' of 'linear' must be a tensor");
  }
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Wait);
    op.kind = OpKind::Linear;  // one operand slot for a signature of four
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "malformed 'linear': 1 operand slots for a signature of 4");
  }
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Allocate);
    op.operand("type") = Arg::ofType(TensorType{DType::F32, {4}, {}, {}});
    b.append(op);  // no result
    EXPECT_EQ(messageOf(b.build()), "'allocate' defines 0 names here, which its signature does not allow");
  }
  {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {4});
    Operation op(OpKind::Allreduce);
    op.operand("t") = x.arg();
    op.operand("op") = Arg::name("median");
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "operand 'op' of 'allreduce' must be one of sum, prod, min, max, avg");
  }
}

// ---------------------------------------------------------------------------
// Byte sizes: element count x dtype size must fit in int64.

TEST(VerifierSizes, EveryDtypeAtItsLargestExtent) {
  const std::string text =
      "program p(E = 1) {\n"
      "  input x : DT[E] shard(0)\n"
      "  t = allocate(DT[E])\n"
      "  v = shard_by_stream(t, axis=0, index=1, chunks=2)\n"
      "}\n";
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    std::string source = text;
    for (size_t at; (at = source.find("DT")) != std::string::npos;) source.replace(at, 2, dtypeName(dtype));
    SCOPED_TRACE(source);
    const int64_t largest = INT64_MAX / static_cast<int64_t>(dtypeSize(dtype));
    EXPECT_EQ(verifyText(source, 1, {{"E", largest}}), "");
    EXPECT_EQ(verifyText(source, 2, {{"E", largest - largest % 2}}), "");  // sharded over two ranks
    EXPECT_EQ(verifyText(source, 1, {{"E", largest + 1}}),
              error("2:13", fmt::format("{}[{}] needs more than 8 EiB; a tensor's byte size must fit in 63 bits",
                                        dtypeName(dtype), largest + 1)));
    // The same for an allocation alone.
    std::string allocation = "program p(E = 1) {\n  t = allocate(" + std::string(dtypeName(dtype)) + "[2, E])\n}\n";
    EXPECT_EQ(verifyText(allocation, 1, {{"E", largest / 2}}), "");
    EXPECT_EQ(verifyText(allocation, 1, {{"E", largest / 2 + 1}}),
              error("2:16", fmt::format("{}[2, {}] needs more than 8 EiB; a tensor's byte size must fit in 63 bits",
                                        dtypeName(dtype), largest / 2 + 1)));
  }
}

TEST(VerifierSizes, DerivedResultShapes) {
  // linear and matmul build [M, N] from [M, 1] and [1, N]: with M = 2^31 each
  // operand is 8 GiB, the result 2^64 bytes (byte_sizes.hir).
  // copy and add keep their operand's shape: the largest operand gives the largest result.
  const std::string same =
      "program p(M = 4) {\n  input a : f16[M]\n  input b : f16[M]\n  c = copy(a)\n  d = add(a, b)\n}\n";
  EXPECT_EQ(verifyText(same, 1, {{"M", 1}}), "");
  EXPECT_EQ(verifyText(same, 1, {{"M", INT64_MAX / 2}}), "");
  // The smallest shapes at which linear and matmul overflow, and the largest at which they do not.
  const std::string gemm =
      "program p(M = 4, N = 4) {\n  input a : f64[M, 1]\n  input b : f64[1, N]\n  c = matmul(a, b)\n}\n";
  EXPECT_EQ(verifyText(gemm, 1, {{"M", int64_t{1} << 30}, {"N", (int64_t{1} << 30) - 1}}), "");
  // N = 2^30 is one too many: byte_sizes.hir.
}

TEST(VerifierSizes, GatheredShapes) {
  // Every rank's 4 EiB gathered over two ranks is 8 EiB, one byte too many: byte_sizes.hir.
  EXPECT_EQ(verifyText("program p() {\n  input x : f32[4]\n  o = allocate(f32[8])\n  h = allgather(x, out=o)\n}\n", 2),
            "");
}

TEST(VerifierLimits, HugeExpressionsInLongLoopsAreRefusedQuickly) {
  // 10,000 terms in each of a million iterations: 10^10 evaluations. Refused
  // at the loop before unrolling it.
  std::string group = "(0";
  for (int k = 1; k < 100; ++k) group += " + 0";
  group += ")";
  std::string sum = group;
  for (int k = 1; k < 100; ++k) sum += " + " + group;
  const std::string text = "program p() {\n  for i in range(1000000) {\n    n = max(" + sum + ", i)\n  }\n}\n";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(verifyText(text),
            error("2:3",
                  "the program evaluates more than 100000000 expression terms with these parameters; too large "
                  "to verify"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // A thousand iterations are fine.
  std::string small = text;
  small.replace(small.find("1000000"), 7, "1000");
  EXPECT_EQ(verifyText(small), "");
}

}  // namespace
