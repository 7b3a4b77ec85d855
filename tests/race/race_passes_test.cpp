// Every pass keeps the program race-free: the output of every registered
// pass on every shipped program (the language doc's, examples/*.hir and the
// golden inputs tests/golden/X.hir) is proved race-free for teams of 1, 2
// and 4 ranks and pools of 1, 2 and 4 worker streams, wherever the program
// verifies for that team. The inputs themselves are race-free too (they
// run on the main stream or order their streams by hand).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "executor/race_check.h"
#include "hostir/parser.h"
#include "hostir/verifier.h"
#include "passes/pass_manager.h"
#include "test_util.h"

namespace hostir {
namespace {

std::string describe(const std::vector<RaceReport>& races, const std::string& file, const std::string& text) {
  std::string out;
  for (const RaceReport& r : races) out += formatRace(r, file, text);
  return out;
}

TEST(RacePasses, EveryPassOutputOnEveryShippedProgramIsRaceFree) {
  int checked = 0;
  for (const auto& [file, text] : testing::shippedPrograms()) {
    Program input = testing::parseOrDie(text, file);
    for (const PassInfo& info : registeredPasses()) {
      Program output = input;
      ASSERT_FALSE(info.create()->run(output)) << file;
      std::string printed = printProgram(output);
      // Reparsed, so that the reports point into the printed program.
      Program reparsed = testing::parseOrDie(printed, file);
      for (int64_t world : {1, 2, 4}) {
        Bindings bindings{{}, world};
        if (verifyProgram(input, bindings)) continue;  // does not divide over this team
        ASSERT_FALSE(verifyProgram(reparsed, bindings)) << file << " after " << info.name;
        auto params = *bindParams(reparsed, bindings);
        for (int64_t pool : {1, 2, 4}) {
          SCOPED_TRACE(fmt::format("{} after {}, world {}, {} worker streams", file, info.name, world, pool));
          // The input itself first.
          auto before = checkRaces(input, params, world, pool);
          EXPECT_TRUE(before.empty()) << describe(before, file, text);
          auto races = checkRaces(reparsed, params, world, pool);
          ++checked;
          EXPECT_TRUE(races.empty()) << describe(races, file + " (printed)", printed);
        }
      }
    }
  }
  // 1 doc program, 5 examples, 7 golden inputs; most verify for every team.
  EXPECT_GE(checked, 13 * 2 * 3);
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

// canonical_forms once broadcast the whole of y in every iteration, which
// assign-streams (it assumes independent iterations) turned into a race.
TEST(RacePasses, AssignStreamsOnCanonicalFormsIsRaceFree) {
  std::string text = testing::readFile(testing::sourceDir() / "tests" / "golden" / "canonical_forms.hir");
  Program program = testing::parseOrDie(text);
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams"));
  ASSERT_FALSE(pm.run(program));
  EXPECT_TRUE(checkRaces(program, *bindParams(program, {}), 1, 4).empty());
}

}  // namespace
}  // namespace hostir
