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
constexpr const char* kLongLoop = R"(program long_loop(M = 8, K = 8, N = 8, R = 4500000) {
  input  x : f32[M, K]
  input  w : f32[N, K]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(R) {
    linear(x, w, out=y)
    add(y, y, out=y)
  }
}
)";

// A race on y and an uninitialized read of t, on every rank.
constexpr const char* kRacy = R"(program racy(M = 8, K = 8, N = 8, R = 3) {
  input  x : f32[M, K]
  input  w : f32[N, K]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  t = allocate(f32[M, N])
  for i in range(R) {
    with stream(0) {
      linear(x, w, out=y)
    }
    add(y, t, out=y)
  }
}
)";

std::map<std::string, int64_t> boundParams(const Program& program) {
  auto params = bindParams(program, Bindings{});
  EXPECT_TRUE(params.ok());
  return params.ok() ? *params : std::map<std::string, int64_t>{};
}

TEST(CheckCancellation, TheProgramCheckStopsWithinASecondOfTheCancel) {
  const Program program = testing::parseOrDie(kLongLoop);
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  double latency = testing::cancelAfterAWhile(cancel, [&] { (void)checkProgram(program, params, 1, 4, &cancel); });
  EXPECT_LT(latency, testing::kCancelLatencyLimit.count()) << "stopped " << latency << " s late";
}

TEST(CheckCancellation, TheRaceCheckStopsWithinASecondOfTheCancel) {
  const Program program = testing::parseOrDie(kLongLoop);
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  double latency = testing::cancelAfterAWhile(cancel, [&] { (void)checkRaces(program, params, 1, 4, &cancel); });
  EXPECT_LT(latency, testing::kCancelLatencyLimit.count()) << "stopped " << latency << " s late";
}

TEST(CheckCancellation, ACancelBeforeTheCheckChecksNothing) {
  const Program program = testing::parseOrDie(kRacy);
  std::atomic<bool> cancel{true};
  EXPECT_THROW((void)checkProgram(program, boundParams(program), 2, 4, &cancel), Cancelled);
  EXPECT_THROW((void)checkRaces(program, boundParams(program), 2, 4, &cancel), Cancelled);
}

TEST(CheckCancellation, AFlagNeverSetChangesNoFinding) {
  const Program program = testing::parseOrDie(kRacy);
  const auto params = boundParams(program);
  std::atomic<bool> cancel{false};
  const std::string without = formatProgramCheck(checkProgram(program, params, 2, 4), "racy.hir", kRacy);
  EXPECT_NE(without.find("race on 'y'"), std::string::npos) << without;
  EXPECT_NE(without.find("reads 't'"), std::string::npos) << without;
  EXPECT_EQ(formatProgramCheck(checkProgram(program, params, 2, 4, &cancel), "racy.hir", kRacy), without);
  EXPECT_EQ(checkRaces(program, params, 2, 4, &cancel).size(), checkRaces(program, params, 2, 4).size());
}

}  // namespace
}  // namespace hostir
