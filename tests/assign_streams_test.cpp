// assign-streams gives exactly the shape of section 4 of the language doc.
#include <gtest/gtest.h>

#include "hostir/printer.h"
#include "hostir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/pass_manager.h"
#include "test_util.h"

namespace hostir {
namespace {

Program assignStreams(Program p) {
  auto error = AssignStreamsPass().run(p);
  EXPECT_FALSE(error.has_value());
  return p;
}

bool isStreamOp(const Statement& s, OpKind kind, const Arg& stream) {
  return s.isOp() && s.op().kind == kind && s.op().operand("s") == stream;
}

// Checks `after` against `before` statement by statement: every loop the
// pass applies to becomes capture (unless reused), loop with the entry
// prologue, switch back, join; everything else is unchanged.
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
      if (stmt.isFor()) main.reset();  // may switch streams inside
      continue;
    }
    const ForLoop& original = stmt.loop();
    if (after.body[k].isOp() && after.body[k].op().kind == OpKind::GetCurrentStream) {
      main = after.body[k].op().results[0].name;
      ++k;
    }
    ASSERT_TRUE(main.has_value()) << "no captured main stream before the loop";
    ASSERT_LT(k + 2, after.body.size());
    ASSERT_TRUE(after.body[k].isFor());
    const ForLoop& loop = after.body[k].loop();
    EXPECT_EQ(loop.index, original.index);
    EXPECT_EQ(loop.start, original.start);
    EXPECT_EQ(loop.end, original.end);
    ASSERT_EQ(loop.body.size(), original.body.size() + 2);
    EXPECT_TRUE(isStreamOp(loop.body[0], OpKind::SetCurrentStream, Arg::stream(Expr::name(original.index.name))));
    EXPECT_TRUE(isStreamOp(loop.body[1], OpKind::Synchronize, Arg::name(*main)));
    for (size_t s = 0; s < original.body.size(); ++s) EXPECT_EQ(loop.body[s + 2], original.body[s]);
    EXPECT_TRUE(isStreamOp(after.body[k + 1], OpKind::SetCurrentStream, Arg::name(*main)));
    ASSERT_TRUE(after.body[k + 2].isFor());
    const ForLoop& join = after.body[k + 2].loop();
    EXPECT_EQ(join.start, original.start);
    EXPECT_EQ(join.end, original.end);
    ASSERT_EQ(join.body.size(), 1u);
    EXPECT_TRUE(isStreamOp(join.body[0], OpKind::Synchronize, Arg::stream(Expr::name(join.index.name))));
    EXPECT_EQ(before.findParam(join.index.name), nullptr);
    EXPECT_EQ(before.findDecl(join.index.name), nullptr);
    k += 3;
  }
  EXPECT_EQ(k, after.body.size());
}

TEST(AssignStreams, EveryShippedProgramGetsTheSectionFourShape) {
  int rewrittenLoops = 0;
  for (const auto& [name, text] : testing::shippedPrograms()) {
    SCOPED_TRACE(name);
    Program before = testing::parseOrDie(text, name);
    Program after = assignStreams(before);
    expectSectionFourShape(before, after);
    for (const Statement& s : before.body) rewrittenLoops += s.isFor() && assignStreamsApplies(s.loop());
    for (int64_t world : {1, 2, 4}) {
      auto error = verifyProgram(after, Bindings{{}, world});
      EXPECT_FALSE(error.has_value()) << "world " << world << ": " << error->message << "\n" << printProgram(after);
    }
  }
  EXPECT_GE(rewrittenLoops, 8);
}

TEST(AssignStreams, MatchesTheSectionFourListing) {
  // Section 4's listing, with the original body of the doc's program in place.
  std::string doc = testing::readFile(testing::sourceDir() / "docs" / "hostir-language.md");
  Program p = assignStreams(testing::parseOrDie(testing::programBlocks(doc)[0]));
  std::string printed = printProgram(p);
  const char* expected =
      "  main = get_current_stream()\n"
      "  for i in range(S) {\n"
      "    set_current_stream(stream(i))\n"
      "    synchronize(main)\n"
      "    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
      "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
      "    linear(xi, w, out=yi)\n"
      "    c = allreduce(yi, op=sum)\n"
      "    wait(c)\n"
      "  }\n"
      "  set_current_stream(main)\n"
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

TEST(AssignStreams, LeavesLoopsWithoutWorkOrWithTheirOwnStreams) {
  Program p = testing::parseOrDie(R"(program p(S = 2) {
  input x : f32[8]
  for i in range(S) {
    v = shard_by_stream(x, axis=0, index=i, chunks=S)
    n = max(i, 1)
  }
  for i in range(S) {
    s = get_current_stream()
    set_current_stream(stream(i))
    h = allreduce(x)
    wait(h)
    set_current_stream(s)
  }
  for i in range(S) {
    ev = record_event()
    wait_event(ev)
  }
}
)");
  EXPECT_EQ(assignStreams(p), p);
}

TEST(AssignStreams, NewCaptureAfterTheProgramSwitchesStreams) {
  Program p = testing::parseOrDie(R"(program p(S = 2) {
  input x : f32[8]
  for i in range(S) {
    h = allreduce(x)
    wait(h)
  }
  set_current_stream(stream(7))
  for i in range(S) {
    h = allreduce(x)
    wait(h)
  }
}
)");
  Program after = assignStreams(p);
  std::string printed = printProgram(after);
  EXPECT_NE(printed.find("main = get_current_stream()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("main_1 = get_current_stream()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("set_current_stream(main_1)"), std::string::npos) << printed;
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
  Program p = testing::parseOrDie(testing::readFile(testing::sourceDir() / "tests/golden/row_parallel_linear.hir"));
  ASSERT_FALSE(pm.run(p).has_value());
  EXPECT_EQ(verified, 1);
  EXPECT_EQ(dump.str(), "# -----// IR Dump After assign-streams //----- #\n" + printProgram(p) + "\n");
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

}  // namespace
}  // namespace hostir
