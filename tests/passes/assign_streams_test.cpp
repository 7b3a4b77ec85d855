// assign-streams gives exactly the shape of section 4 of the language doc,
// on the loops whose iterations are independent, and leaves the others as
// they are with a remark that says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analysis/race_check.h"
#include "cli_runner.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/pass_manager.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

// As `hostir opt --passes assign-streams` runs it: default params, one
// rank, 4 worker streams, the race check proving each rewrite.
Program assignStreams(Program p, const Bindings& bindings = {}, std::vector<Remark>* remarks = nullptr) {
  PassContext context = testing::raceCheckedContext(p, bindings, 4, remarks);
  auto error = AssignStreamsPass().run(p, context);
  EXPECT_FALSE(error.has_value());
  return p;
}

// Golden inputs whose loops all depend on themselves: none is rewritten.
bool allLoopsDependent(const std::string& file) {
  return file == "tests/golden/dependent_loops.hir" || file == "tests/golden/value_forms.hir";
}

// The documented stream of iteration `index` of a loop from `start`:
// stream(index - start), folded for literal starts.
Arg iterationStream(const std::string& index, const Expr& start) {
  Expr i = Expr::name(index);
  auto value = start.empty() ? std::optional<int64_t>(0) : start.literalValue();
  if (value && *value == 0) return Arg::stream(i);
  if (value && *value < 0) return Arg::stream(i + Expr::literal(-*value));
  if (value) return Arg::stream(i - Expr::literal(*value));
  return Arg::stream(i - start);
}

bool isStreamOp(const Statement& s, OpKind kind, const Arg& stream) {
  return s.isOp() && s.op().kind == kind && s.op().operand("s") == stream;
}

bool switchesOutsideWithBlocks(const std::vector<Statement>& body) {
  for (const Statement& s : body) {
    if (s.isOp() && s.op().kind == OpKind::SetCurrentStream) return true;
    if (s.isFor() && switchesOutsideWithBlocks(s.loop().body)) return true;
  }
  return false;
}

// Checks `after` against `before` statement by statement: every loop the
// pass applies to becomes capture (unless reused), loop whose body is one
// with block (the iteration's stream, the entry synchronization, the
// original body), join; everything else is unchanged.
void expectSectionFourShape(const Program& before, const Program& after) {
  ASSERT_EQ(after.params, before.params);
  ASSERT_EQ(after.decls, before.decls);
  size_t k = 0;
  std::optional<std::string> main;
  for (const Statement& stmt : before.body) {
    ASSERT_LT(k, after.body.size());
    if (!stmt.isFor() || !assignStreamsApplies(stmt.loop())) {
      EXPECT_EQ(after.body[k++], stmt);
      if (stmt.isOp() && stmt.op().kind == OpKind::SetCurrentStream) main.reset();
      // A loop may switch streams inside; a with block gives the stream
      // back, so a capture before it stays valid.
      if (stmt.isFor() && switchesOutsideWithBlocks(stmt.loop().body)) main.reset();
      continue;
    }
    const ForLoop& original = stmt.loop();
    if (after.body[k].isOp() && after.body[k].op().kind == OpKind::GetCurrentStream) {
      main = after.body[k].op().results[0].name;
      ++k;
    }
    ASSERT_TRUE(main.has_value()) << "no captured main stream before the loop";
    ASSERT_LT(k + 1, after.body.size());
    ASSERT_TRUE(after.body[k].isFor());
    const ForLoop& loop = after.body[k].loop();
    EXPECT_EQ(loop.index, original.index);
    EXPECT_EQ(loop.start, original.start);
    EXPECT_EQ(loop.end, original.end);
    ASSERT_EQ(loop.body.size(), 1u);
    ASSERT_TRUE(loop.body[0].isWith());
    const WithBlock& onWorker = loop.body[0].with();
    EXPECT_EQ(onWorker.stream, iterationStream(original.index.name, original.start));
    ASSERT_EQ(onWorker.body.size(), original.body.size() + 1);
    EXPECT_TRUE(isStreamOp(onWorker.body[0], OpKind::Synchronize, Arg::name(*main)));
    for (size_t s = 0; s < original.body.size(); ++s) EXPECT_EQ(onWorker.body[s + 1], original.body[s]);
    ASSERT_TRUE(after.body[k + 1].isFor());
    const ForLoop& join = after.body[k + 1].loop();
    EXPECT_EQ(join.start, original.start);
    EXPECT_EQ(join.end, original.end);
    ASSERT_EQ(join.body.size(), 1u);
    EXPECT_TRUE(isStreamOp(join.body[0], OpKind::Synchronize, iterationStream(join.index.name, original.start)));
    EXPECT_EQ(before.findParam(join.index.name), nullptr);
    EXPECT_EQ(before.findDecl(join.index.name), nullptr);
    k += 2;
  }
  EXPECT_EQ(k, after.body.size());
}

TEST(AssignStreams, EveryShippedProgramGetsTheSectionFourShape) {
  int rewrittenLoops = 0;
  for (const auto& [name, text] : testing::shippedPrograms()) {
    SCOPED_TRACE(name);
    Program before = testing::parseOrDie(text, name);
    Program after = assignStreams(before);
    if (allLoopsDependent(name)) {
      EXPECT_EQ(after, before) << printProgram(after);
      continue;
    }
    expectSectionFourShape(before, after);
    for (const Statement& s : before.body) rewrittenLoops += s.isFor() && assignStreamsApplies(s.loop());
    for (int64_t world : {1, 2, 4}) {
      auto error = verifyProgram(after, Bindings{{}, world});
      EXPECT_FALSE(error.has_value()) << "world " << world << ": " << error->message << "\n" << printProgram(after);
    }
  }
  EXPECT_GE(rewrittenLoops, 10);
}

TEST(AssignStreams, MatchesTheSectionFourListing) {
  // Section 4's listing, with the original body of the doc's program in place.
  std::string doc = testing::readFile(testing::sourceDir() / "docs" / "hostir-language.md");
  Program p = assignStreams(testing::parseOrDie(testing::programBlocks(doc)[0]));
  std::string printed = printProgram(p);
  const char* expected =
      "  main = get_current_stream()\n"
      "  for i in range(S) {\n"
      "    with stream(i) {\n"
      "      synchronize(main)\n"
      "      xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
      "      yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
      "      linear(xi, w, out=yi)\n"
      "      c = allreduce(yi, op=sum)\n"
      "      wait(c)\n"
      "    }\n"
      "  }\n"
      "  for j in range(S) {\n"
      "    synchronize(stream(j))\n"
      "  }\n"
      "}\n";
  EXPECT_NE(printed.find(expected), std::string::npos) << printed;
}

TEST(AssignStreams, IsIdempotent) {
  for (const auto& [name, text] : testing::shippedPrograms()) {
    SCOPED_TRACE(name);
    Program once = assignStreams(testing::parseOrDie(text, name));
    Program twice = assignStreams(once);
    EXPECT_EQ(twice, once) << printProgram(twice);
  }
}

TEST(AssignStreams, LeavesLoopsWithoutWorkOrWithTheirOwnStreamsAndSaysWhy) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_loops_left.hir"));
  std::vector<Remark> remarks;
  EXPECT_EQ(assignStreams(p, {}, &remarks), p);
  ASSERT_EQ(remarks.size(), 3u);
  for (const Remark& r : remarks) EXPECT_EQ(r.pass, "assign-streams");
  EXPECT_EQ(remarks[0].loc, (SourceLoc{3, 3}));
  EXPECT_THAT(remarks[0].message, HasSubstr("issues no computation or communication"));
  EXPECT_EQ(remarks[1].loc, (SourceLoc{7, 3}));
  EXPECT_THAT(remarks[1].message, HasSubstr("chooses its own streams"));
  EXPECT_EQ(remarks[2].loc, (SourceLoc{14, 3}));
  EXPECT_THAT(remarks[2].message, HasSubstr("issues no computation or communication"));
}

TEST(AssignStreams, NewCaptureAfterTheProgramSwitchesStreams) {
  Program p =
      testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_recapture_after_switch.hir"));
  Program after = assignStreams(p);
  std::string printed = printProgram(after);
  EXPECT_NE(printed.find("main = get_current_stream()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("main_1 = get_current_stream()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("synchronize(main_1)"), std::string::npos) << printed;
  expectSectionFourShape(p, after);
}

TEST(PassManager, RejectsUnknownAndEmptyPassNames) {
  PassManager pm;
  auto unknown = pm.addPipeline("assign-streams,fuse-everything");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_NE(unknown->message.find("unknown pass 'fuse-everything'"), std::string::npos);
  EXPECT_NE(unknown->message.find("assign-streams"), std::string::npos) << "lists the known passes";
  PassManager pm2;
  EXPECT_TRUE(pm2.addPipeline("assign-streams,,").has_value());
  PassManager pm3;
  EXPECT_FALSE(pm3.addPipeline("assign-streams, assign-streams").has_value());
  EXPECT_EQ(pm3.size(), 2u);
}

TEST(PassManager, DumpsIrAfterTheNamedPassAndVerifies) {
  std::ostringstream dump;
  int verified = 0;
  PassManagerOptions options;
  options.printIrAfter = {"assign-streams"};
  options.irDump = &dump;
  options.verifyAfterEach = [&](const Program& p) {
    ++verified;
    return verifyProgram(p);
  };
  PassManager pm(options);
  ASSERT_FALSE(pm.addPipeline("assign-streams").has_value());
  Program p = testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples/row_parallel_linear.hir"));
  const Program input = p;
  ASSERT_FALSE(pm.run(p, testing::raceCheckedContext(p)).has_value());
  EXPECT_NE(p, input) << "the loop was rewritten";
  EXPECT_EQ(verified, 1);
  // The dump shows the program as the pass left it; the team it was proved
  // for is recorded once the whole pipeline has run.
  ASSERT_TRUE(p.provedFor.has_value());
  Program dumped = p;
  dumped.provedFor.reset();
  EXPECT_EQ(dump.str(), "# -----// IR Dump After assign-streams //----- #\n" + printProgram(dumped) + "\n");
}

TEST(PassManager, ReportsWhichPassBrokeTheProgram) {
  PassManagerOptions options;
  options.verifyAfterEach = [](const Program&) { return Status(Diagnostic{{3, 4}, "boom"}); };
  PassManager pm(options);
  ASSERT_FALSE(pm.addPipeline("assign-streams").has_value());
  Program p = testing::parseOrDie("program p() {\n}\n");
  auto error = pm.run(p);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "pass 'assign-streams' produced an invalid program: boom");
  EXPECT_EQ(error->loc, (SourceLoc{3, 4}));
}

// The four ways a loop's iterations depend on each other
// (tests/golden/dependent_loops.hir): each loop is left as it is, and the
// remark names the race the rewrite would have made, with both positions.
TEST(AssignStreams, LeavesLoopsWhoseIterationsDependOnEachOtherAndNamesTheRace) {
  std::string text = testing::readFile(testing::sourceDir() / "tests/golden/dependent_loops.hir");
  Program p = testing::parseOrDie(text);
  for (int64_t world : {1, 2}) {
    SCOPED_TRACE(world);
    std::vector<Remark> remarks;
    EXPECT_EQ(assignStreams(p, Bindings{{}, world}, &remarks), p);
    struct Expected {
      SourceLoc loop;
      const char* buffer;
      SourceLoc racing, other;
    };
    const Expected expected[] = {
        {{12, 3}, "'acc'", {14, 5}, {14, 5}},      // accumulates into one buffer
        {{22, 3}, "'y'", {26, 5}, {26, 5}},        // reads the previous iteration's chunk
        {{32, 3}, "'scratch'", {35, 5}, {36, 9}},  // stages in one scratch buffer
        {{43, 3}, "'w'", {46, 5}, {47, 9}},        // updates the whole buffer in place
    };
    ASSERT_EQ(remarks.size(), std::size(expected));
    for (size_t k = 0; k < remarks.size(); ++k) {
      SCOPED_TRACE(remarks[k].message);
      EXPECT_EQ(remarks[k].loc, expected[k].loop);
      EXPECT_THAT(remarks[k].message, HasSubstr("loop left as it is: its iterations are not independent"));
      EXPECT_THAT(remarks[k].message, HasSubstr(std::string("race on ") + expected[k].buffer));
      ASSERT_EQ(remarks[k].notes.size(), 2u);
      EXPECT_EQ(remarks[k].notes[0].loc, expected[k].racing);
      EXPECT_EQ(remarks[k].notes[1].loc, expected[k].other);
    }
  }
}

// Only the loops that depend on themselves stay; one capture of the main
// stream serves the independent loops on either side.
TEST(AssignStreams, RewritesTheIndependentLoopsAroundADependentOne) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_around_dependent_loop.hir"));
  std::vector<Remark> remarks;
  Program after = assignStreams(p, {}, &remarks);
  std::string printed = printProgram(after);
  EXPECT_NE(printed.find("  main = get_current_stream()\n"
                         "  for i in range(S) {\n"
                         "    with stream(i) {\n"
                         "      synchronize(main)\n"
                         "      xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("  for i in range(S) {\n"
                         "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
                         "    add(acc, yi, out=acc)\n"
                         "  }\n"
                         "  for i in range(S) {\n"
                         "    with stream(i) {\n"
                         "      synchronize(main)\n"),
            std::string::npos)
      << "the dependent loop is left as it is:\n"
      << printed;
  EXPECT_EQ(printed.find("main_1"), std::string::npos) << printed;
  ASSERT_EQ(remarks.size(), 3u);
  EXPECT_THAT(remarks[0].message, HasSubstr("iteration i runs on stream(i)"));
  EXPECT_THAT(remarks[1].message, HasSubstr("race on 'acc'"));
  EXPECT_THAT(remarks[2].message, HasSubstr("iteration i runs on stream(i)"));
  EXPECT_TRUE(checkRaces(after, *bindParams(after, {}), 1, 4).empty());
}

// Without a race check nothing proves the iterations independent: the pass
// rewrites nothing, and says so.
TEST(AssignStreams, WithoutARaceCheckLeavesEveryLoopAndSaysWhy) {
  std::string text = testing::readFile(testing::sourceDir() / "examples/row_parallel_linear.hir");
  Program p = testing::parseOrDie(text);
  Program after = p;
  std::vector<Remark> remarks;
  PassContext context;
  context.remarks = [&](const Remark& r) { remarks.push_back(r); };
  ASSERT_FALSE(AssignStreamsPass().run(after, context));
  EXPECT_EQ(after, p);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_THAT(remarks[0].message, HasSubstr("no race check"));
}

// Iteration i of range(a, b) runs on stream(i - a) and the join
// synchronizes the same streams, for literal, negative and expression
// starts; the result verifies and is race-free for other bindings too.
TEST(AssignStreams, LoopsNotStartingAtZeroUseStreamsFromZero) {
  struct Case {
    const char* range;
    const char* chunk;  // the chunk index of iteration i
    const char* loopStream;
    const char* joinStream;
  };
  const Case cases[] = {
      {"range(2, 5)", "i - 2", "stream(i - 2)", "stream(j - 2)"},
      {"range(-1, 2)", "i + 1", "stream(i + 1)", "stream(j + 1)"},
      {"range(0, 3)", "i", "stream(i)", "stream(j)"},
      {"range(A, A + 3)", "i - A", "stream(i - A)", "stream(j - A)"},
      {"range(A * 2 - 1, A * 2 + 2)", "i - A * 2 + 1", "stream(i - (A * 2 - 1))", "stream(j - (A * 2 - 1))"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.range);
    std::string text = fmt::format(R"(program p(M = 48, N = 8, A = 4) {{
  input x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in {} {{
    xi = shard_by_stream(x, axis=0, index={}, chunks=3)
    yi = shard_by_stream(y, axis=0, index={}, chunks=3)
    add(xi, xi, out=yi)
  }}
}}
)",
                                   c.range, c.chunk, c.chunk);
    Program p = testing::parseOrDie(text);
    std::vector<Remark> remarks;
    Program after = assignStreams(p, {}, &remarks);
    std::string printed = printProgram(after);
    EXPECT_THAT(printed, HasSubstr(fmt::format("    with {} {{\n      synchronize(main)\n", c.loopStream)));
    EXPECT_THAT(printed,
                HasSubstr(fmt::format("  for j in {} {{\n    synchronize({})\n  }}\n", c.range, c.joinStream)));
    ASSERT_EQ(remarks.size(), 1u);
    EXPECT_THAT(remarks[0].message, HasSubstr(fmt::format("runs on {}", c.loopStream)));
    expectSectionFourShape(p, after);
    for (int64_t a : {0, 1, 7}) {
      for (int64_t world : {1, 2}) {
        Bindings bindings{{{"A", a}}, world};
        ASSERT_FALSE(verifyProgram(after, bindings)) << printed;
        EXPECT_TRUE(checkRaces(after, *bindParams(after, bindings), world, 4).empty()) << printed;
      }
    }
  }
}

// A loop inside a top-level with block runs on the block's stream, and a
// loop holding a with block chooses its streams: both stay, with a remark.
// The capture before a with block serves the loop after it, since the
// block gives the stream back.
TEST(AssignStreams, LeavesLoopsInOrHoldingWithBlocksAndReusesTheCaptureAcrossOne) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_with_blocks.hir"));
  std::vector<Remark> remarks;
  Program after = assignStreams(p, {}, &remarks);
  ASSERT_EQ(remarks.size(), 4u);
  EXPECT_THAT(remarks[0].message, HasSubstr("iteration i runs on stream(i)"));
  EXPECT_EQ(remarks[1].loc, (SourceLoc{11, 5}));
  EXPECT_THAT(remarks[1].message, HasSubstr("loop left as it is: it is inside 'with stream(3)'"));
  EXPECT_EQ(remarks[2].loc, (SourceLoc{16, 3}));
  EXPECT_THAT(remarks[2].message, HasSubstr("chooses its own streams (set_current_stream or with)"));
  EXPECT_THAT(remarks[3].message, HasSubstr("iteration i runs on stream(i)"));
  std::string printed = printProgram(after);
  EXPECT_EQ(printed.find("main_1"), std::string::npos) << "one capture serves both loops:\n" << printed;
  EXPECT_EQ(printed.find("set_current_stream"), std::string::npos) << printed;
  expectSectionFourShape(p, after);
  EXPECT_FALSE(verifyProgram(after).has_value());
}

}  // namespace
}  // namespace hostir

namespace hostir {
namespace {

// A loop whose if reads the chunk the previous iteration's branch wrote: the
// race check of the branches each iteration takes finds the dependence, and
// the remark names the race with both statements.
TEST(AssignStreams, LeavesALoopWhoseBranchesDependOnEachOtherAndNamesTheRace) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_dependent_branches.hir"));
  std::vector<Remark> remarks;
  EXPECT_EQ(assignStreams(p, {}, &remarks), p);
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_EQ(remarks[0].loc, (SourceLoc{4, 3}));
  EXPECT_THAT(remarks[0].message, HasSubstr("its iterations are not independent"));
  EXPECT_THAT(remarks[0].message, HasSubstr("race on 'z'"));
  ASSERT_EQ(remarks[0].notes.size(), 2u);
  // Iteration 2's add reads chunk 1, which iteration 1's copy wrote.
  EXPECT_EQ(remarks[0].notes[0].loc, (SourceLoc{8, 7}));
  EXPECT_EQ(remarks[0].notes[1].loc, (SourceLoc{12, 7}));
}

// Only top-level loops move: a loop inside a top-level if stays, with a
// remark. A branch that switches streams makes the next loop capture the
// current stream afresh; one that does not leaves the capture valid.
TEST(AssignStreams, LeavesLoopsInIfBranchesAndRecapturesAfterABranchSwitches) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/assign_streams_loops_in_branches.hir"));
  std::vector<Remark> remarks;
  Program after = assignStreams(p, {}, &remarks);
  std::string printed = printProgram(after);
  // One capture serves the first two loops; the third captures afresh.
  EXPECT_EQ(printed.find("main = get_current_stream()"), printed.rfind("main = get_current_stream()")) << printed;
  EXPECT_NE(printed.find("main_1 = get_current_stream()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("synchronize(main_1)"), std::string::npos) << printed;
  expectSectionFourShape(p, after);
  bool remarked = false;
  for (const Remark& r : remarks)
    remarked |= r.loc == SourceLoc{9, 5} && r.message.find("inside an 'if' branch") != std::string::npos;
  EXPECT_TRUE(remarked) << "no remark on the loop inside the if";
}

class IfCli : public testing::CliTest {};

// hostir opt and check on programs with if blocks, through the CLI.
TEST_F(IfCli, OptAndCheckHandleIfBlocks) {
  auto opt = run("opt " + golden("if_branches.hir") + " --passes assign-streams");
  ASSERT_EQ(opt.exitCode, 0) << opt.err;
  EXPECT_EQ(opt.out, testing::readFile(golden("if_branches.assign-streams.hir")));
  auto check = run("check " + golden("if_branches.hir") + " --ranks 2");
  EXPECT_EQ(check.exitCode, 0) << check.err;

  std::string mismatch =
      write("mismatch.hir", testing::testProgramText("passes/programs/ranks_mismatched_allreduce.hir"));
  auto found = run("check " + mismatch + " --ranks 2");
  EXPECT_EQ(found.exitCode, 1);
  EXPECT_THAT(found.err, HasSubstr("mismatch.hir:5:9: error: ranks issue different communications"));
  EXPECT_THAT(found.err, HasSubstr("mismatch.hir:8:9: note: rank 1 issues its communication #1 here"));

  std::string typo = write("typo.hir", "program p(N = 4) {\n  input x : f32[N]\n  y = mul2(x, x)\n}\n");
  auto unknown = run("check " + typo);
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_THAT(unknown.err, HasSubstr("typo.hir:3:7: error: unknown operation 'mul2'; did you mean 'mul'?"));
}

// A ring whose first rank starts from its input: run on three ranks, the
// outputs match the serial reference. Each rank's row of y is its own, so
// y is sharded: ranks that hold different values must not share an output.
TEST_F(IfCli, ARingWhoseFirstRankDiffersRunsAndChecks) {
  std::string ring = write("ring.hir", testing::testProgramText("passes/programs/ring_first_rank_differs.hir"));
  auto r = run("run " + ring + " --ranks 3 --check");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
}

}  // namespace
}  // namespace hostir
