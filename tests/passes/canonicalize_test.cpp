// canonicalize removes the synchronizations the race check proves implied
// and only those (every one it keeps is needed), the events and captures
// left unused, the stream switches that change no statement's stream and the
// loops left empty, without changing what the program computes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analysis/race_check.h"
#include "cli_runner.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/canonicalize.h"
#include "passes/pass_manager.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// As `hostir opt --passes canonicalize` runs it: one rank unless told, 4
// worker streams, the race check proving each removal.
Program canonicalize(Program p, const Bindings& bindings = {}, std::vector<Remark>* remarks = nullptr) {
  PassContext context = testing::raceCheckedContext(p, bindings, 4, remarks);
  auto error = CanonicalizePass().run(p, context);
  EXPECT_FALSE(error.has_value()) << error->message;
  return p;
}

Program assignStreams(Program p, const Bindings& bindings = {}) {
  auto error = AssignStreamsPass().run(p, testing::raceCheckedContext(p, bindings));
  EXPECT_FALSE(error.has_value()) << error->message;
  return p;
}

std::vector<std::string> messages(const std::vector<Remark>& remarks) {
  std::vector<std::string> out;
  for (const Remark& r : remarks) out.push_back(r.message);
  return out;
}

// The body of a program, as printed: what the tests compare.
std::string printedBody(const Program& p) {
  std::string text = printProgram(p);
  size_t lastDecl = text.find("\n\n");
  return lastDecl == std::string::npos ? text : text.substr(lastDecl + 2);
}

bool isSynchronization(const Statement& s) {
  return s.isOp() &&
         (s.op().kind == OpKind::Synchronize || s.op().kind == OpKind::Wait || s.op().kind == OpKind::WaitEvent);
}

// Where a statement is: for each enclosing block, its index and which of its
// bodies holds the rest (an if's else branch is 1), then its own index.
using Path = std::vector<std::pair<size_t, size_t>>;

// Every synchronization of `p`, by its position.
std::vector<Path> synchronizations(const std::vector<Statement>& body, Path prefix = {}) {
  std::vector<Path> out;
  for (size_t k = 0; k < body.size(); ++k) {
    Path path = prefix;
    path.emplace_back(k, 0);
    if (isSynchronization(body[k])) out.push_back(path);
    auto nested = body[k].nestedBodies();
    for (size_t b = 0; b < nested.size(); ++b) {
      path.back().second = b;
      for (auto& inner : synchronizations(nested[b], path)) out.push_back(inner);
    }
  }
  return out;
}

Program without(Program p, const Path& path) {
  std::vector<Statement>* list = &p.body;
  for (size_t depth = 0; depth + 1 < path.size(); ++depth)
    list = &(*list)[path[depth].first].nestedBodies()[path[depth].second];
  list->erase(list->begin() + static_cast<std::ptrdiff_t>(path.back().first));
  return p;
}

// Section 4's form of the row-parallel linear: what assign-streams makes of
// examples/row_parallel_linear.hir.
std::string rowParallelStreams() { return testing::testProgramText("passes/programs/row_parallel_streams.hir"); }

TEST(Canonicalize, RowParallelKeepsOnlyTheSynchronizeThatOrdersTheAllocation) {
  std::vector<Remark> remarks;
  Program p = canonicalize(testing::parseOrDie(rowParallelStreams()), {}, &remarks);
  // The join orders nothing the end of the program does not; wait(c) is
  // on the allreduce's own stream; synchronize(main) orders the allocation
  // of y on the main stream before the workers write it.
  EXPECT_EQ(printedBody(p),
            "  y = allocate(f32[M, N])\n"
            "  main = get_current_stream()\n"
            "  for i in range(S) {\n"
            "    with stream(i) {\n"
            "      synchronize(main)\n"
            "      xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
            "      yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
            "      linear(xi, w, out=yi)\n"
            "      c = allreduce(yi, op=sum)\n"
            "    }\n"
            "  }\n"
            "}\n");
  auto said = messages(remarks);
  EXPECT_THAT(said, Contains(HasSubstr("removed synchronize(stream(j)): nothing is issued after it, and the executor "
                                       "waits for every stream at the end")));
  EXPECT_THAT(said, Contains(HasSubstr("removed wait(c): implied")));
  EXPECT_THAT(said, Contains(HasSubstr("removed for j in range(S): its body is empty")));
  EXPECT_THAT(said, Contains(HasSubstr("kept synchronize(main): without it there would be a race on 'y'")));
}

TEST(Canonicalize, KeepsExactlyTheJoinThatWorkAfterTheLoopNeeds) {
  // The copy after the loops reads y on the main stream: one join is
  // needed, and the second one is implied by the first.
  std::vector<Remark> remarks;
  Program p = canonicalize(
      testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_needed_join.hir")), {}, &remarks);
  EXPECT_EQ(printedBody(p),
            "  y = allocate(f32[M, N])\n"
            "  main = get_current_stream()\n"
            "  for i in range(S) {\n"
            "    set_current_stream(stream(i))\n"
            "    synchronize(main)\n"
            "    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
            "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
            "    linear(xi, w, out=yi)\n"
            "  }\n"
            "  set_current_stream(main)\n"
            "  for j in range(S) {\n"
            "    synchronize(stream(j))\n"
            "  }\n"
            "  z = allocate(f32[M, N])\n"
            "  copy(y, out=z)\n"
            "}\n");
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("kept synchronize(stream(j)): without it there would be a race")));
}

TEST(Canonicalize, RemovesSwitchesThatChangeNoStatementsStream) {
  std::vector<Remark> remarks;
  Program p =
      canonicalize(testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_redundant_switches.hir")),
                   {}, &remarks);
  // The switch to stream(1) and the one back to main then form a with
  // block, which leaves the capture of main unused.
  EXPECT_EQ(printedBody(p),
            "  with stream(1) {\n"
            "    a = allocate(f32[N])\n"
            "    copy(x, out=a)\n"
            "    copy(x, out=a)\n"
            "  }\n"
            "  n = max(N, 1)\n"
            "  y = allocate(f32[N])\n"
            "  copy(x, out=y)\n"
            "  set_current_stream(stream(1))\n"
            "  b = allocate(f32[N])\n"
            "  copy(x, out=b)\n"
            "}\n");
  auto said = messages(remarks);
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(stream(0)): the switch at 7:3 overrides it")));
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(stream(1)): stream(1) is already the current")));
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(main): main is already the current stream")));
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(stream(2)): nothing is issued after it")));
}

TEST(Canonicalize, RemovesASwitchThatALoopOverridesBeforeUsingIt) {
  // Every iteration switches before it issues, and after the loop (or
  // without any iteration) the next switch comes first: stream(1) is unused.
  Program p =
      testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_switch_overridden_by_loop.hir"));
  ASSERT_FALSE(CanonicalizePass().run(p).has_value());
  EXPECT_EQ(printedBody(p),
            "  main = get_current_stream()\n"
            "  y = allocate(f32[N])\n"
            "  for i in range(S) {\n"
            "    set_current_stream(stream(i))\n"
            "    a = allocate(f32[N])\n"
            "    copy(x, out=a)\n"
            "  }\n"
            "  set_current_stream(main)\n"
            "  copy(x, out=y)\n"
            "  for i in range(S) {\n"
            "    set_current_stream(stream(i))\n"
            "    b = allocate(f32[N])\n"
            "  }\n"
            "}\n");
}

TEST(Canonicalize, SwitchesInLoopsAndAfterLoopsThatSwitchStay) {
  // After a loop that switches, the current stream is not evident; a switch
  // at the end of a loop body chooses the next iteration's stream.
  const std::string text = testing::testProgramText("passes/programs/canonicalize_switches_in_loops.hir");
  Program before = testing::parseOrDie(text);
  PassContext noOracle;
  Program p = before;
  EXPECT_FALSE(CanonicalizePass().run(p, noOracle).has_value());
  EXPECT_EQ(p, before) << printProgram(p);
}

TEST(Canonicalize, RemovesUnusedEventsAndKeepsTheNeededWaitEvent) {
  std::vector<Remark> remarks;
  Program p = canonicalize(
      testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_unused_events.hir")), {}, &remarks);
  EXPECT_EQ(printedBody(p),
            "  main = get_current_stream()\n"
            "  y = allocate(f32[N])\n"
            "  with stream(0) {\n"
            "    synchronize(main)\n"
            "    copy(x, out=y)\n"
            "    ready = record_event()\n"
            "  }\n"
            "  wait_event(ready)\n"
            "  z = allocate(f32[N])\n"
            "  copy(y, out=z)\n"
            "}\n");
  auto said = messages(remarks);
  EXPECT_THAT(said, Contains(HasSubstr("removed wait_event(same): implied")));
  EXPECT_THAT(said, Contains(HasSubstr("removed unused = record_event(): no wait_event waits for it")));
  EXPECT_THAT(said, Contains(HasSubstr("removed same = record_event(): no wait_event waits for it")));
  EXPECT_THAT(said, Contains(HasSubstr("kept wait_event(ready): without it there would be a race on 'y'")));
}

TEST(Canonicalize, RemovesCapturesLeftUnused) {
  // Once the join goes, nothing names `main` any more.
  Program p =
      canonicalize(testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_unused_capture.hir")));
  EXPECT_EQ(printedBody(p),
            "  y = allocate(f32[N])\n"
            "  copy(x, out=y)\n"
            "  main = get_current_stream()\n"
            "  set_current_stream(stream(0))\n"
            "  synchronize(main)\n"
            "  a = allocate(f32[N])\n"
            "  copy(y, out=a)\n"
            "}\n");
  Program q =
      canonicalize(testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_switch_to_current.hir")));
  EXPECT_EQ(printedBody(q),
            "  y = allocate(f32[N])\n"
            "  copy(x, out=y)\n"
            "}\n");
}

TEST(Canonicalize, WithoutARaceOracleKeepsSynchronizationsAndRemovesRedundantSwitches) {
  std::string text = rowParallelStreams();
  // A switch the with block's end overrides before anything is issued, and
  // a trailing one.
  text.replace(text.find("      wait(c)\n") + 14, 0, "      set_current_stream(stream(7))\n");
  text.replace(text.rfind("}"), 0, "  set_current_stream(stream(1))\n");
  Program p = testing::parseOrDie(text);
  std::vector<Remark> remarks;
  PassContext context;
  context.remarks = [&](const Remark& r) { remarks.push_back(r); };
  ASSERT_FALSE(CanonicalizePass().run(p, context).has_value());
  EXPECT_EQ(p, testing::parseOrDie(rowParallelStreams())) << printProgram(p);
  auto said = messages(remarks);
  EXPECT_THAT(said, Contains(HasSubstr("synchronizations kept: no race check is available")));
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(stream(7)): nothing is issued after it before the "
                                       "with block gives the stream back")));
  EXPECT_THAT(said, Contains(HasSubstr("removed set_current_stream(stream(1))")));
}

TEST(Canonicalize, LeavesAProgramThatDoesNotVerifyAsItIs) {
  // K = 512 is not divisible among 3 ranks.
  Program before = testing::parseOrDie(rowParallelStreams());
  Program p = before;
  std::vector<Remark> remarks;
  PassContext context;
  context.bindings.world = 3;
  context.remarks = [&](const Remark& r) { remarks.push_back(r); };
  ASSERT_FALSE(CanonicalizePass().run(p, context).has_value());
  EXPECT_EQ(p, before);
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("program left as it is: it does not verify")));
}

// Every shipped program (the doc's, examples/, the golden inputs) after
// assign-streams, and the hand-written ones above: canonicalize adds no race,
// and each synchronization it keeps is needed: without it alone there is a
// new race (or the program no longer verifies).
TEST(Canonicalize, KeepsOnlyNeededSynchronizationsAndAddsNoRace) {
  std::vector<std::pair<std::string, std::string>> programs = testing::shippedPrograms();
  programs.emplace_back("row parallel, section 4", rowParallelStreams());
  int kept = 0, removed = 0;
  for (const auto& [name, text] : programs) {
    SCOPED_TRACE(name);
    const Bindings bindings{{}, 2};
    Program input = assignStreams(testing::parseOrDie(text, name), bindings);
    PassContext context = testing::raceCheckedContext(input, bindings);
    std::vector<RaceFinding> racesBefore = context.raceCheck(input);
    Program p = input;
    ASSERT_FALSE(CanonicalizePass().run(p, context).has_value());
    ASSERT_FALSE(verifyProgram(p, bindings).has_value()) << printProgram(p);
    std::vector<RaceFinding> races = context.raceCheck(p);
    EXPECT_TRUE(racesBefore.empty()) << printProgram(input);
    EXPECT_TRUE(races.empty()) << printProgram(p);
    auto kepts = synchronizations(p.body);
    kept += static_cast<int>(kepts.size());
    removed += static_cast<int>(synchronizations(input.body).size() - kepts.size());
    for (const auto& path : kepts) {
      Program mutant = without(p, path);
      if (verifyProgram(mutant, bindings)) continue;
      EXPECT_FALSE(newRaces(races, context.raceCheck(mutant)).empty()) << "an implied synchronization was kept:\n"
                                                                       << printProgram(p) << "\nit can go:\n"
                                                                       << printProgram(mutant);
    }
    // Nothing is left to remove: canonicalize is idempotent.
    Program again = p;
    ASSERT_FALSE(CanonicalizePass().run(again, context).has_value());
    EXPECT_EQ(again, p) << printProgram(again);
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(removed, 0);
}

TEST(Canonicalize, RunsInThePipelineAfterAssignStreams) {
  Program p = testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples" / "row_parallel_linear.hir"));
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams,canonicalize").has_value());
  auto error = pm.run(p, testing::raceCheckedContext(p));
  ASSERT_FALSE(error.has_value()) << error->message;
  ASSERT_TRUE(p.provedFor.has_value());  // the pipeline records the team; a pass alone does not
  EXPECT_EQ(*p.provedFor, (ProvedFor{1, 4, {}}));
  p.provedFor.reset();
  EXPECT_EQ(p, canonicalize(testing::parseOrDie(rowParallelStreams()))) << printProgram(p);
}

class CanonicalizeRun : public testing::CliTest {};

// The reproducer: canonicalize on the default one rank removes the ring's
// waits, which only one rank can do without. The output says so in its
// proved_for clause; run on two ranks proves it again and refuses it with
// a note, --unchecked refuses to skip that proof, and on one rank it runs.
TEST_F(CanonicalizeRun, AProgramProvedForOneTeamIsProvedAgainOrRefusedOnAnother) {
  std::string rewritten = (dir_ / "ring.hir").string();
  auto opt = run("opt " + example("ring_all_gather_linear_overlapped.hir") + " --passes canonicalize -o " + rewritten);
  ASSERT_EQ(opt.exitCode, 0) << opt.err;
  EXPECT_THAT(testing::slurp(rewritten), HasSubstr(") proved_for(world = 1, streams = 4) {"));

  auto checked = run("run " + rewritten + " --ranks 2");
  EXPECT_EQ(checked.exitCode, 1);
  EXPECT_THAT(checked.err, HasSubstr("error: race on"));
  EXPECT_THAT(checked.err, HasSubstr("note: the program was proved for 1 rank and 4 worker streams, not for 2 ranks "
                                     "and 4 worker streams (its proved_for clause)"));
  auto unchecked = run("run " + rewritten + " --ranks 2 --unchecked");
  EXPECT_EQ(unchecked.exitCode, 1);
  EXPECT_THAT(unchecked.err, HasSubstr("--unchecked cannot skip the proof for another team"));
  auto otherPool = run("run " + rewritten + " --ranks 1 --streams 2 --unchecked");
  EXPECT_EQ(otherPool.exitCode, 1);
  auto same = run("run " + rewritten + " --unchecked --check");
  EXPECT_EQ(same.exitCode, 0) << same.err;
  EXPECT_THAT(same.out, HasSubstr("check: ok"));
}

// The pass manager records the team when the passes changed the program and
// it is race-free there; it drops a clause the rewrite no longer honours,
// and leaves an unchanged program as it came.
TEST(ProvedFor, ThePipelineRecordsTheTeamItProvedTheRewriteFor) {
  Program p = testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples" / "row_parallel_linear.hir"));
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams").has_value());
  ASSERT_FALSE(pm.run(p, testing::raceCheckedContext(p, Bindings{{}, 2}, 3)).has_value());
  ASSERT_TRUE(p.provedFor.has_value());
  EXPECT_EQ(*p.provedFor, (ProvedFor{2, 3, {}}));
  // Printed and parsed back alike.
  EXPECT_EQ(testing::parseOrDie(printProgram(p)), p);
  // Nothing left to rewrite: the clause stays what it was.
  Program again = p;
  ASSERT_FALSE(pm.run(again, testing::raceCheckedContext(again, Bindings{{}, 4}, 4)).has_value());
  EXPECT_EQ(again, p);
  // Without a race check nothing is proved: a rewrite drops the clause.
  Program unproved =
      testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples" / "row_parallel_linear.hir"));
  unproved.provedFor = ProvedFor{8, 8, {}};
  PassManager strip;
  ASSERT_FALSE(strip.addPipeline("strip-communication").has_value());
  ASSERT_FALSE(strip.run(unproved).has_value());
  EXPECT_FALSE(unproved.provedFor.has_value());
}

// The real executor on two ranks computes the same outputs before and after,
// both matching the serial reference.
TEST_F(CanonicalizeRun, ComputesTheSameOutputsAsBefore) {
  for (const char* example : {"row_parallel_linear.hir", "events.hir"}) {
    SCOPED_TRACE(example);
    Program before = assignStreams(testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples" / example)));
    Program after = canonicalize(before, Bindings{{}, 2});
    ASSERT_NE(after, before);
    std::string beforeFile = write("before.hir", printProgram(before));
    std::string afterFile = write("after.hir", printProgram(after));
    std::string beforeOutput = (dir_ / "before.npy").string(), afterOutput = (dir_ / "after.npy").string();
    auto b = run(fmt::format("run {} --ranks 2 --check --seed 3 --output y={}", beforeFile, beforeOutput));
    ASSERT_EQ(b.exitCode, 0) << b.out << b.err;
    EXPECT_THAT(b.out, HasSubstr("check: ok"));
    auto a = run(fmt::format("run {} --ranks 2 --check --seed 3 --output y={}", afterFile, afterOutput));
    ASSERT_EQ(a.exitCode, 0) << a.out << a.err;
    EXPECT_THAT(a.out, HasSubstr("check: ok"));
    EXPECT_EQ(testing::slurp(afterOutput), testing::slurp(beforeOutput));
  }
}

// The fewest stream switches, as with blocks: a switch and the switch back
// to the captured stream become one block, the next block on the same
// stream merges into it (the view between them moves in), a block on the
// stream already current gives way to its body, an empty block goes.
TEST(Canonicalize, WritesSwitchesAsTheFewestWithBlocks) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_fewest_with_blocks.hir"));
  std::vector<Remark> remarks;
  PassContext noOracle;
  noOracle.remarks = [&](const Remark& r) { remarks.push_back(r); };
  ASSERT_FALSE(CanonicalizePass().run(p, noOracle).has_value());
  EXPECT_EQ(printedBody(p),
            "  main = get_current_stream()\n"
            "  y = allocate(f32[N])\n"
            "  with stream(1) {\n"
            "    synchronize(main)\n"
            "    a = copy(x)\n"
            "    v = shard_by_stream(y, axis=0, index=0, chunks=2)\n"
            "    b = copy(a)\n"
            "    c = copy(b)\n"
            "  }\n"
            "  copy(x, out=y)\n"
            "}\n");
  auto said = messages(remarks);
  EXPECT_THAT(said, Contains(HasSubstr("set_current_stream(stream(1)) and set_current_stream(main) at 10:3 became "
                                       "with stream(1): main was the current stream before")));
  EXPECT_THAT(said, Contains(HasSubstr("merged with stream(1) into the block at 7:3")));
  EXPECT_THAT(said, Contains(HasSubstr("removed with stream(1): stream(1) is already the current stream")));
  EXPECT_THAT(said, Contains(HasSubstr("removed with main: main is already the current stream")));
  EXPECT_THAT(said, Contains(HasSubstr("removed with stream(2): its body is empty")));
  // The same program, race-checked: the rewrites keep it race-free.
  EXPECT_TRUE(checkRaces(p, *bindParams(p, {}), 1, 4).empty());
}

// A switch back to a stream that is not known to be current before the
// first switch stays a switch; one that is becomes a block, nested or not.
TEST(Canonicalize, PairsOnlySwitchesBackToTheStreamCurrentBefore) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_switch_back_pairs.hir"));
  PassContext noOracle;
  ASSERT_FALSE(CanonicalizePass().run(p, noOracle).has_value());
  EXPECT_EQ(printedBody(p),
            "  set_current_stream(stream(1))\n"
            "  a = copy(x)\n"
            "  with stream(2) {\n"
            "    synchronize(stream(1))\n"
            "    b = copy(a)\n"
            "  }\n"
            "  synchronize(stream(2))\n"
            "  c = copy(b)\n"
            "}\n");
}

// A block whose body switches at its own level gives back a stream the
// body did not end on: it is neither dropped nor merged. Blocks with work
// between them on another stream stay apart.
TEST(Canonicalize, KeepsBlocksWhoseRemovalWouldChangeAStream) {
  const std::string text = testing::testProgramText("passes/programs/canonicalize_blocks_that_stay.hir");
  Program before = testing::parseOrDie(text);
  Program p = before;
  PassContext noOracle;
  ASSERT_FALSE(CanonicalizePass().run(p, noOracle).has_value());
  EXPECT_EQ(p, before) << printProgram(p);
}

// Each rewrite in a loop body and after assign-streams: the row-parallel
// program's blocks stay, and every remaining synchronization is needed.
TEST(Canonicalize, KeepsAssignStreamsBlocksAndTheirNeededSynchronization) {
  Program p = canonicalize(
      assignStreams(testing::parseOrDie(testing::readFile(testing::sourceDir() / "examples/row_parallel_linear.hir"))));
  std::string printed = printedBody(p);
  EXPECT_THAT(printed, HasSubstr("  for i in range(S) {\n"
                                 "    with stream(i) {\n"
                                 "      synchronize(main)\n"));
  EXPECT_THAT(printed, ::testing::Not(HasSubstr("set_current_stream")));
  EXPECT_TRUE(checkRaces(p, *bindParams(p, {}), 1, 4).empty());
}

}  // namespace
}  // namespace hostir

namespace hostir {
namespace {

// A synchronization in a branch only rank 1 takes is needed on two ranks
// (rank 1 races without it) and removable on one (no rank takes the
// branch); canonicalize proves each with the team it is given.
TEST(Canonicalize, ProvesSynchronizationsInBranchesForTheRanksThatTakeThem) {
  const std::string text = testing::testProgramText("passes/programs/canonicalize_sync_in_branch.hir");
  Program input = testing::parseOrDie(text);
  Program onTwo = canonicalize(input, Bindings{{}, 2});
  EXPECT_EQ(onTwo, input) << printProgram(onTwo);
  std::vector<Remark> remarks;
  Program onOne = canonicalize(input, Bindings{{}, 1}, &remarks);
  EXPECT_THAT(printProgram(onOne), Not(HasSubstr("synchronize(stream(0))")));
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("removed synchronize(stream(0))")));
  PassContext context = testing::raceCheckedContext(onOne, Bindings{{}, 2});
  EXPECT_FALSE(context.raceCheck(onOne).empty()) << "the one-rank rewrite races on two ranks";
}

// Switches in branches: a pair becomes a with block when the stream before
// the if is known, a switch to the current stream goes, an emptied then
// branch turns the condition round, and an emptied if goes.
TEST(Canonicalize, WritesBranchSwitchesAsWithBlocksAndDropsEmptiedIfs) {
  Program p = testing::parseOrDie(testing::testProgramText("passes/programs/canonicalize_branch_switches.hir"));
  std::vector<Remark> remarks;
  Program out = canonicalize(p, {}, &remarks);
  EXPECT_EQ(printedBody(out), R"(  y = allocate(f32[M], zero=true)
  main = get_current_stream()
  if S > 1 {
    with stream(1) {
      synchronize(main)
      add(y, x, out=y)
    }
    synchronize(stream(1))
    add(y, x, out=y)
  }
  if not S == 2 {
    add(y, x, out=y)
  }
}
)");
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("removed set_current_stream(main): main is already the current "
                                                    "stream")));
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("if S == 2 became if not S == 2: its then branch is empty")));
  EXPECT_THAT(messages(remarks), Contains(HasSubstr("removed if M < S: its body is empty")));
}

}  // namespace
}  // namespace hostir
