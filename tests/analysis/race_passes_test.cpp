// Every pass keeps the program race-free: the output of every registered
// pass on every shipped program (the language doc's, examples/*.hir and the
// golden inputs tests/golden/X.hir) is proved race-free for teams of 1, 2
// and 4 ranks and pools of 1, 2 and 4 worker streams, wherever the program
// verifies for that team. The inputs themselves are race-free too (they
// run on the main stream or order their streams by hand). The pass manager
// checks the same for every pipeline the tools run: a pass that makes races
// the program did not have is an error naming it.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analysis/race_check.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/strip_work.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

std::string describe(const std::vector<RaceReport>& races, const std::string& file, const std::string& text) {
  std::string out;
  for (const RaceReport& r : races) out += formatRace(r, file, text);
  return out;
}

TEST(RacePasses, EveryPassOutputOnEveryShippedProgramIsRaceFree) {
  int checked = 0, rewritten = 0;
  for (const auto& [file, text] : testing::shippedPrograms()) {
    Program input = testing::parseOrDie(text, file);
    for (const PassInfo& info : registeredPasses()) {
      for (int64_t world : {1, 2, 4}) {
        Bindings bindings{{}, world};
        if (verifyProgram(input, bindings)) continue;  // does not divide over this team
        auto params = *bindParams(input, bindings);
        for (int64_t pool : {1, 2, 4}) {
          SCOPED_TRACE(fmt::format("{} after {}, world {}, {} worker streams", file, info.name, world, pool));
          // The input itself first.
          auto before = checkRaces(input, params, world, pool);
          EXPECT_TRUE(before.empty()) << describe(before, file, text);
          // The pass proves what it does for this team and pool, as `hostir opt` would.
          Program output = input;
          ASSERT_FALSE(info.create()->run(output, testing::raceCheckedContext(input, bindings, pool)));
          rewritten += output != input;
          std::string printed = printProgram(output);
          // Reparsed, so that the reports point into the printed program.
          Program reparsed = testing::parseOrDie(printed, file);
          ASSERT_FALSE(verifyProgram(reparsed, bindings)) << printed;
          auto races = checkRaces(reparsed, params, world, pool);
          ++checked;
          EXPECT_TRUE(races.empty()) << describe(races, file + " (printed)", printed);
        }
      }
    }
  }
  // 1 doc program, 5 examples, 10 golden inputs; most verify for every team.
  EXPECT_GE(checked, 16 * 2 * 3);
  EXPECT_GE(rewritten, 16 * 2);
}

// The same for the race-free golden outputs the repository ships
// (tests/golden/X.assign-streams.hir), as files.
TEST(RacePasses, GoldenAssignStreamsOutputsAreRaceFree) {
  int checked = 0;
  for (const auto& path : testing::hirFiles(testing::sourceDir() / "tests" / "golden")) {
    if (path.filename().string().find(".assign-streams.") == std::string::npos) continue;
    std::string text = testing::readFile(path);
    Program program = testing::parseOrDie(text, path.string());
    for (int64_t world : {1, 2, 4}) {
      Bindings bindings{{}, world};
      if (verifyProgram(program, bindings)) continue;
      auto params = *bindParams(program, bindings);
      for (int64_t pool : {1, 2, 4}) {
        SCOPED_TRACE(fmt::format("{}, world {}, {} worker streams", path.string(), world, pool));
        auto races = checkRaces(program, params, world, pool);
        EXPECT_TRUE(races.empty()) << describe(races, path.string(), text);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 6 * 3);
}

TEST(RacePasses, AssignStreamsOnCanonicalFormsIsRaceFree) {
  std::string text = testing::readFile(testing::sourceDir() / "tests" / "golden" / "canonical_forms.hir");
  Program program = testing::parseOrDie(text);
  const Program input = program;
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams"));
  ASSERT_FALSE(pm.run(program, testing::raceCheckedContext(program)));
  EXPECT_NE(program, input);
  EXPECT_TRUE(checkRaces(program, *bindParams(program, {}), 1, 4).empty());
}

// canonical_forms once broadcast the whole of y in every iteration: its
// iterations depended on each other, and running them on worker streams
// raced. The pass now proves the opposite before it rewrites, and leaves
// such a loop as it is.
TEST(RacePasses, AssignStreamsLeavesAWholeBufferBroadcastPerIterationAlone) {
  std::string text = testing::testProgramText("analysis/check_programs/broadcast_whole_buffer_per_iteration.hir");
  Program program = testing::parseOrDie(text);
  const Program input = program;
  for (int64_t world : {1, 2}) {
    std::vector<Remark> remarks;
    PassManager pm;
    ASSERT_FALSE(pm.addPipeline("assign-streams"));
    ASSERT_FALSE(pm.run(program, testing::raceCheckedContext(program, {{}, world}, 4, &remarks)));
    EXPECT_EQ(program, input) << printProgram(program);
    ASSERT_EQ(remarks.size(), 1u);
    EXPECT_EQ(remarks[0].loc, (SourceLoc{6, 3}));
    EXPECT_NE(remarks[0].message.find("race on 'y'"), std::string::npos) << remarks[0].message;
  }
}

// A pass that makes a race-free program racy is an error that names the
// pass and both statements; this test-only pass deletes every synchronize.
class DeleteSynchronizePass : public Pass {
 public:
  std::string_view name() const override { return "delete-synchronize"; }
  std::string_view summary() const override { return "test only: deletes every synchronize"; }
  using Pass::run;
  Status run(Program& program, const PassContext&) override {
    eraseOperationsIf(program.body, [](const Operation& op) { return op.kind == OpKind::Synchronize; });
    return std::nullopt;
  }
};

TEST(RacePasses, PassManagerReportsAPassThatMakesTheProgramRacy) {
  const std::string file = "tests/golden/row_parallel_linear.assign-streams.hir";
  std::string text = testing::readFile(testing::sourceDir() / file);
  Program program = testing::parseOrDie(text);
  PassManager pm;
  pm.addPass(std::make_unique<DeleteSynchronizePass>());
  auto error = pm.run(program, testing::raceCheckedContext(program, {{}, 2}));
  ASSERT_TRUE(error.has_value());
  // y's allocate on the main stream (6:7) against iteration 0's linear on stream(0) (13:7).
  EXPECT_EQ(error->loc, (SourceLoc{13, 7}));
  EXPECT_EQ(error->message.rfind(
                "pass 'delete-synchronize' made the program racy: race on 'y'[0:64, 0:128]: linear on stream(0) "
                "writes it while allocate at 6:7 on the main stream writes it, unordered (rank 0) (and ",
                0),
            0u)
      << error->message;
  ASSERT_EQ(error->notes.size(), 1u);
  EXPECT_EQ(error->notes[0].loc, (SourceLoc{6, 7}));
  // What `hostir opt` prints: both positions with their lines.
  std::string rendered = renderDiagnostic(*error, file, text);
  EXPECT_EQ(rendered.rfind(file + ":13:7: error: pass 'delete-synchronize' made the program racy: race on 'y'", 0), 0u)
      << rendered;
  EXPECT_NE(rendered.find(file + ":6:7: note: the other access: allocate on the main stream writes 'y'\n"
                                 "  y = allocate(f32[M, N])\n"),
            std::string::npos)
      << rendered;
}

// Races the input already had are not the passes' doing: the pipeline goes
// on, and assign-streams still rewrites the independent loop.
TEST(RacePasses, PassManagerAcceptsRacesTheInputAlreadyHad) {
  std::string text = testing::testProgramText("analysis/check_programs/races_the_input_had.hir");
  Program program = testing::parseOrDie(text);
  const Program input = program;
  // The copy on stream(0) is ordered neither after y's allocate nor before the add.
  const size_t inputRaces = checkRaces(program, *bindParams(program, {}), 1, 4).size();
  ASSERT_EQ(inputRaces, 2u);
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams"));
  pm.addPass(std::make_unique<DeleteSynchronizePass>());
  auto error = pm.run(program, testing::raceCheckedContext(program));
  ASSERT_TRUE(error.has_value()) << "deleting the synchronizes assign-streams inserted makes new races";
  EXPECT_NE(error->message.find("pass 'delete-synchronize' made the program racy: race on 'z'"), std::string::npos)
      << error->message;

  program = input;
  PassManager assignOnly;
  ASSERT_FALSE(assignOnly.addPipeline("assign-streams"));
  EXPECT_FALSE(assignOnly.run(program, testing::raceCheckedContext(program)));
  EXPECT_NE(program, input) << "the loop is rewritten";
  EXPECT_EQ(checkRaces(program, *bindParams(program, {}), 1, 4).size(), inputRaces) << printProgram(program);
}

}  // namespace
}  // namespace hostir
