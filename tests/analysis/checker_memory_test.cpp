// The checker's memory follows what can still race or be read, not the
// program's length: buffers that die are forgotten, retired access records
// are reused, and recorded clocks are stored as changes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/race_check_backend.h"
#include "analysis/recorded_clocks.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/evaluator.h"
#include "test_util.h"

namespace hostir {
namespace {

TEST(CheckerMemory, ABufferPerIterationIsForgottenWhenItDies) {
  auto program = parseProgram(testing::testProgramText("analysis/check_programs/temporary_per_iteration.hir"));
  ASSERT_TRUE(program);
  Bindings bindings{{}, 1};
  ASSERT_FALSE(verifyProgram(*program, bindings));
  Evaluator evaluator(*program, *bindParams(*program, bindings), 0, 1);
  RaceCheckBackend backend(4, nullptr, RaceCheckOptions{.trackInitialization = true});
  std::map<std::string, TensorView> inputs;
  for (const TensorSpec& spec : evaluator.inputs())
    inputs[spec.name] = backend.input(spec.dtype, spec.localShape, spec.name);
  auto outputs = evaluator.run(backend, inputs);
  // Per iteration: t's allocation, add's three accesses, the in-place add's three.
  EXPECT_EQ(backend.analysis().accessesChecked(), 20000u * 7 + 1);
  EXPECT_TRUE(backend.analysis().races().empty());
  // x, y and the last t (or two), not 20,000 temporaries.
  EXPECT_LE(backend.analysis().buffersTracked(), 4u);
  // A few records per buffer, reused, not three per operation.
  EXPECT_LE(backend.analysis().recordSlots(), 64u);
  EXPECT_TRUE(backend.initialization()->reads().empty());
  EXPECT_FALSE(backend.unwritten(outputs.at("y")).has_value());
}

// A long loop that writes one chunk per iteration keeps one live record per
// chunk (each can still race), and nothing per statement beyond that.
TEST(CheckerMemory, RetiredRecordsAreReused) {
  auto program = parseProgram(testing::testProgramText("analysis/check_programs/accumulate_per_iteration.hir"));
  ASSERT_TRUE(program);
  Bindings bindings{{}, 1};
  ASSERT_FALSE(verifyProgram(*program, bindings));
  Evaluator evaluator(*program, *bindParams(*program, bindings), 0, 1);
  RaceCheckBackend backend(4);
  std::map<std::string, TensorView> inputs;
  for (const TensorSpec& spec : evaluator.inputs())
    inputs[spec.name] = backend.input(spec.dtype, spec.localShape, spec.name);
  evaluator.run(backend, inputs);
  EXPECT_TRUE(backend.analysis().races().empty());
  EXPECT_EQ(backend.analysis().buffersTracked(), 3u);
  // 140,001 accesses; a handful of slots.
  EXPECT_GT(backend.analysis().accessesChecked(), 140'000u);
  EXPECT_LE(backend.analysis().recordSlots(), 32u);
}

TEST(RecordedClocks, LoadsEveryPositionBack) {
  for (size_t width : {1u, 5u, 33u, 1025u}) {
    std::mt19937_64 random(width);
    RecordedClocks clocks(width);
    std::vector<std::vector<uint64_t>> expected;
    std::vector<uint64_t> clock(width, 0);
    for (int p = 0; p < 3000; ++p) {
      // Like a stream's clock: its own tick, and now and then a join.
      clock[random() % width] += 1 + random() % 3;
      if (random() % 4 == 0) clock[random() % width] += random() % 100;
      expected.push_back(clock);
      ASSERT_EQ(clocks.record(clock), static_cast<uint64_t>(p + 1));
    }
    std::vector<uint64_t> loaded;
    for (size_t p = 0; p < expected.size(); ++p) {
      clocks.load(p + 1, loaded);
      ASSERT_EQ(loaded, expected[p]) << "width " << width << " position " << p + 1;
    }
    // A few words per position, not `width` of them.
    EXPECT_LE(clocks.storedWords(), expected.size() * 8 + width) << "width " << width;
  }
}

}  // namespace
}  // namespace hostir
