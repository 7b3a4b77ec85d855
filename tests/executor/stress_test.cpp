// The overlapped row-parallel program (examples/row_parallel_linear.hir
// after assign-streams) run 200 times on two in-process ranks with random
// delays injected before stream tasks and communications: every run must
// finish (no deadlock), give bit-for-bit the first run's result, and match
// the independent reference.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "harness.h"

namespace hostir::reftest {
namespace {

constexpr int kRuns = 200;

// `coresPerRank` 0: every stream computes at once; 1: one computation at a
// time, in issue order (the CPU backend's compute pool).
void stress(int64_t poolSize, int coresPerRank = 0) {
  const Program original = loadExample("row_parallel_linear");
  const Program program = assignStreams(original);
  const Params params = bindAll(original, {{"M", 64}, {"K", 64}, {"N", 32}, {"S", 4}});
  const int64_t world = 2;
  ASSERT_FALSE(verifyFor(program, params, world).has_value());
  const uint64_t seed = 42;
  const RefTensor expected =
      exampleReference("row_parallel_linear", toRef(globalInputs(original, params, world, seed))).at("y");

  std::optional<HostTensor> first;
  int mismatches = 0;
  auto start = std::chrono::steady_clock::now();
  for (int run = 0; run < kRuns; ++run) {
    RunRequest request = makeRequest(program, params, seed, poolSize);
    request.backend.cpu.delays = {200, static_cast<uint64_t>(run)};
    request.backend.commTimeout = std::chrono::seconds(20);
    request.backend.cpu.coresPerRank = coresPerRank;
    auto result = runWithin(request, world, std::chrono::seconds(30));
    ASSERT_TRUE(result.has_value()) << "run " << run << " (pool " << poolSize << "): deadlock, no result after 30 s";
    ASSERT_TRUE(result->ok()) << "run " << run << ": " << result->error().message;
    const HostTensor& y = (*result)->outputs.at("y");
    Match m = compare("y", y, DType::F32, expected);
    EXPECT_TRUE(m.ok) << "run " << run << " (pool " << poolSize << "): " << m.message;
    if (!first) {
      first = y;
      continue;
    }
    Match same = identical("y", y, *first);
    if (!same.ok && ++mismatches <= 5) ADD_FAILURE() << "run " << run << " differs from run 0: " << same.message;
  }
  EXPECT_EQ(mismatches, 0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::testing::Test::RecordProperty("seconds", std::to_string(seconds));
}

TEST(Stress, RowParallelAfterAssignStreams200RunsWithDelays) { stress(4); }

// Pool size 2 < S = 4: iterations share worker streams.
TEST(Stress, RowParallelOnASharedPool200RunsWithDelays) { stress(2); }

// Four streams, one core per rank: computations take turns in issue order
// while communications run beside them.
TEST(Stress, RowParallelOnOneComputeSlot200RunsWithDelays) { stress(4, 1); }

// The other examples, 50 runs each on three ranks with a pool of 2.
struct OtherExample {
  std::string name;
  Params overrides;
};

std::ostream& operator<<(std::ostream& os, const OtherExample& c) { return os << c.name; }

class StressOthers : public ::testing::TestWithParam<OtherExample> {};

TEST_P(StressOthers, FiftyRunsWithDelaysGiveTheSameBits) {
  const OtherExample& c = GetParam();
  const Program original = loadExample(c.name);
  const int64_t world = 3;
  const Program program = assignStreams(original, world, c.overrides);
  const Params params = bindAll(original, c.overrides);
  ASSERT_FALSE(verifyFor(program, params, world).has_value());
  const RefTensor expected = exampleReference(c.name, toRef(globalInputs(original, params, world, 5))).at("y");
  std::optional<HostTensor> first;
  for (int run = 0; run < 50; ++run) {
    RunRequest request = makeRequest(program, params, 5, 2);
    request.backend.cpu.delays = {200, static_cast<uint64_t>(1000 + run)};
    request.backend.cpu.coresPerRank = run % 2;  // every other run on one compute slot
    auto result = runWithin(request, world, std::chrono::seconds(30));
    ASSERT_TRUE(result.has_value()) << c.name << " run " << run << ": deadlock, no result after 30 s";
    ASSERT_TRUE(result->ok()) << c.name << " run " << run << ": " << result->error().message;
    const HostTensor& y = (*result)->outputs.at("y");
    Match m = compare("y", y, DType::F32, expected);
    ASSERT_TRUE(m.ok) << c.name << " run " << run << ": " << m.message;
    if (!first) first = y;
    Match same = identical("y", y, *first);
    ASSERT_TRUE(same.ok) << c.name << " run " << run << " differs from run 0: " << same.message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, StressOthers,
    ::testing::Values(OtherExample{"all_gather", {{"M", 48}, {"K", 48}, {"N", 24}, {"S", 4}}},
                      OtherExample{"broadcast", {{"M", 48}, {"K", 48}, {"N", 24}}},
                      OtherExample{"events", {{"M", 48}, {"K", 24}, {"H", 48}, {"N", 24}, {"S", 4}}},
                      OtherExample{"reduce_scatter", {{"M", 48}, {"K", 48}, {"N", 24}, {"S", 4}}},
                      OtherExample{"parallel_block", {{"B", 48}, {"H", 24}, {"A", 24}, {"F", 48}}},
                      OtherExample{"sequence_parallel_mlp", {{"T", 48}, {"H", 24}, {"F", 48}, {"S", 4}}},
                      OtherExample{"ring_all_gather_linear", {{"M", 48}, {"K", 24}, {"N", 24}}},
                      OtherExample{"ring_all_gather_linear_overlapped", {{"M", 48}, {"K", 24}, {"N", 24}}},
                      OtherExample{"ring_bidirectional_overlapped", {{"M", 48}, {"K", 24}, {"N", 24}}},
                      OtherExample{"ring_reduce_scatter_overlapped", {{"M", 48}, {"K", 24}, {"N", 24}}}),
    [](const ::testing::TestParamInfo<OtherExample>& info) { return info.param.name; });

}  // namespace
}  // namespace hostir::reftest
