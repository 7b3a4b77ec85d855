// A cancelled program check stops within a second: checkProgram and the
// race check alone, on a program whose operations keep them busy for
// seconds, cancelled after 200 ms. A flag that is never set changes no
// finding.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>

#include "analysis/program_check.h"
#include "analysis/race_check.h"
#include "cancel_after.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hostir {
namespace {

// R GEMMs and adds, one after another on the main stream (9,000,000
// statements, under the verifier's limit): the program check takes about
// 4 s on them uncancelled on a 2-core machine.
std::string longLoop() { return testing::testProgramText("analysis/check_programs/long_loop.hir"); }

// A race on y and an uninitialized read of t, on every rank.
std::string racy() { return testing::testProgramText("analysis/check_programs/racy_loop.hir"); }

std::map<std::string, int64_t> boundParams(const Program& program) {
  auto params = bindParams(program, Bindings{});
  EXPECT_TRUE(params.ok());
  return params.ok() ? *params : std::map<std::string, int64_t>{};
}

TEST(CheckCancellation, TheProgramCheckStopsWithinASecondOfTheCancel) {
  const Program program = testing::parseOrDie(longLoop());
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  double latency = testing::cancelAfterAWhile(cancel, [&] { (void)checkProgram(program, params, 1, 4, &cancel); });
  EXPECT_LT(latency, testing::kCancelLatencyLimit.count()) << "stopped " << latency << " s late";
}

TEST(CheckCancellation, TheRaceCheckStopsWithinASecondOfTheCancel) {
  const Program program = testing::parseOrDie(longLoop());
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  double latency = testing::cancelAfterAWhile(cancel, [&] { (void)checkRaces(program, params, 1, 4, &cancel); });
  EXPECT_LT(latency, testing::kCancelLatencyLimit.count()) << "stopped " << latency << " s late";
}

TEST(CheckCancellation, ACancelBeforeTheCheckChecksNothing) {
  const Program program = testing::parseOrDie(racy());
  std::atomic<bool> cancel{true};
  EXPECT_THROW((void)checkProgram(program, boundParams(program), 2, 4, &cancel), Cancelled);
  EXPECT_THROW((void)checkRaces(program, boundParams(program), 2, 4, &cancel), Cancelled);
}

TEST(CheckCancellation, AFlagNeverSetChangesNoFinding) {
  const Program program = testing::parseOrDie(racy());
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  const std::string without = formatProgramCheck(checkProgram(program, params, 2, 4), "racy.hir", racy());
  EXPECT_NE(without.find("race on 'y'"), std::string::npos) << without;
  EXPECT_NE(without.find("reads 't'"), std::string::npos) << without;
  EXPECT_EQ(formatProgramCheck(checkProgram(program, params, 2, 4, &cancel), "racy.hir", racy()), without);
  EXPECT_EQ(checkRaces(program, params, 2, 4, &cancel).size(), checkRaces(program, params, 2, 4).size());
}

}  // namespace
}  // namespace hostir
