// A cancelled pass stops within a second, also while it race-proves a
// rewrite: each pass runs on a program that keeps it busy for seconds, is
// cancelled after 200 ms, and must throw Cancelled soon after. A flag that
// is never set changes nothing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "cancel_after.h"
#include "model/machine_profile.h"
#include "passes/assign_streams.h"
#include "passes/canonicalize.h"
#include "passes/cost_oracle.h"
#include "passes/overlap.h"
#include "passes/pass_manager.h"
#include "passes/race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

constexpr const char* kHeader = R"(program many_loops(M = 8, K = 8, N = 8, S = 2) {
  input  x : f32[M, K]
  input  w : f32[N, K]
  output y : f32[M, N]
)";

// `loops` independent top-level loops, each a GEMM per iteration into its
// own buffer. assign-streams race-proves a rewrite of each against the whole
// program, so its time grows with the square of the loops: 800 take about
// 7 s uncancelled on a 2-core machine, and overlap, which also predicts
// both forms of each loop, takes about 4 s on 300.
std::string manyLoops(int loops) {
  std::string text = kHeader;
  for (int l = 0; l < loops; ++l)
    text += fmt::format(R"(  a{0} = allocate(f32[M, N])
  for i in range(S) {{
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    ai = shard_by_stream(a{0}, axis=0, index=i, chunks=S)
    linear(xi, w, out=ai)
  }}
)",
                        l);
  return text + fmt::format("  y = allocate(f32[M, N])\n  copy(a{}, out=y)\n}}\n", loops - 1);
}

// The same loops as assign-streams rewrites them: two synchronizations per
// loop, each of which canonicalize race-proves against the whole program
// (500 loops take about 5 s uncancelled).
std::string manyRewrittenLoops(int loops) {
  std::string text = std::string(kHeader) + "  main = get_current_stream()\n";
  for (int l = 0; l < loops; ++l)
    text += fmt::format(R"(  a{0} = allocate(f32[M, N])
  for i in range(S) {{
    with stream(i) {{
      synchronize(main)
      xi = shard_by_stream(x, axis=0, index=i, chunks=S)
      ai = shard_by_stream(a{0}, axis=0, index=i, chunks=S)
      linear(xi, w, out=ai)
    }}
  }}
  for j in range(S) {{
    synchronize(stream(j))
  }}
)",
                        l);
  return text + fmt::format("  y = allocate(f32[M, N])\n  copy(a{}, out=y)\n}}\n", loops - 1);
}

// The race-checked context of `hostir opt`, for the passes and their race
// proofs to poll `cancel`.
PassContext cancellableContext(const Program& program, const std::atomic<bool>* cancel) {
  Result<PassContext> context = raceCheckedContext(program, Bindings{}, 4, cancel);
  EXPECT_TRUE(context.ok());
  return context.ok() ? std::move(*context) : PassContext{};
}

std::map<std::string, int64_t> defaultParams(const Program& program) {
  auto params = bindParams(program, Bindings{});
  EXPECT_TRUE(params.ok());
  return params.ok() ? *params : std::map<std::string, int64_t>{};
}

// Runs `pass` on `text` with the race-checked context and a machine when
// given one (for overlap), cancels it after 200 ms and expects it to stop
// within a second of that.
void expectStopsWithinASecond(Pass& pass, const std::string& text, const MachineProfile* machine = nullptr) {
  Program program = testing::parseOrDie(text);
  std::atomic<bool> cancel{false};
  PassContext context = cancellableContext(program, &cancel);
  if (machine) context.predict = costOracle(std::make_shared<MachineProfile>(*machine), defaultParams(program), 1, 4);
  double latency = testing::cancelAfterAWhile(cancel, [&] { (void)pass.run(program, context); });
  EXPECT_LT(latency, testing::kCancelLatencyLimit.count()) << pass.name() << " stopped " << latency << " s late";
}

// The last loop accumulates into one tensor, so proving every loop at once
// fails and the pass proves them one by one: seconds for 800 loops.
TEST(PassCancellation, AssignStreamsStopsWithinASecondOfTheCancel) {
  AssignStreamsPass pass;
  std::string text = manyLoops(800);
  text.insert(text.rfind("}\n"), "  for i in range(S) {\n    add(y, y, out=y)\n  }\n");
  expectStopsWithinASecond(pass, text);
}

TEST(PassCancellation, CanonicalizeStopsWithinASecondOfTheCancel) {
  CanonicalizePass pass;
  expectStopsWithinASecond(pass, manyRewrittenLoops(500));
}

TEST(PassCancellation, OverlapStopsWithinASecondOfTheCancel) {
  auto profile = loadMachineProfile("h100-nvlink");
  ASSERT_TRUE(profile.ok());
  OverlapPass pass;
  expectStopsWithinASecond(pass, manyLoops(300), &*profile);
}

// 9,000,000 statements once unrolled, under the verifier's limit: each
// verification that a pass makes takes about 2 s.
std::string hugeLoop() { return testing::testProgramText("passes/programs/huge_loop.hir"); }

TEST(PassCancellation, AVerificationStopsWithinASecondOfTheCancel) {
  CanonicalizePass pass;  // it verifies the program first
  expectStopsWithinASecond(pass, hugeLoop());
}

TEST(PassCancellation, ACancelBeforeThePassesRunsNoneAndLeavesTheProgram) {
  const Program input = testing::parseOrDie(manyLoops(3));
  std::atomic<bool> cancel{true};
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams,canonicalize").has_value());
  Program program = input;
  EXPECT_THROW((void)pm.run(program, cancellableContext(program, &cancel)), Cancelled);
  EXPECT_EQ(program, input);
}

TEST(PassCancellation, AFlagNeverSetChangesNothing) {
  const Program input = testing::parseOrDie(manyLoops(3));
  PassManager pm;
  ASSERT_FALSE(pm.addPipeline("assign-streams,canonicalize").has_value());
  Program withoutFlag = input;
  ASSERT_FALSE(pm.run(withoutFlag, cancellableContext(input, nullptr)).has_value());
  std::atomic<bool> cancel{false};
  Program withFlag = input;
  ASSERT_FALSE(pm.run(withFlag, cancellableContext(input, &cancel)).has_value());
  EXPECT_EQ(withFlag, withoutFlag);
  EXPECT_NE(withFlag, input);  // the passes did rewrite it
}

}  // namespace
}  // namespace hostir
