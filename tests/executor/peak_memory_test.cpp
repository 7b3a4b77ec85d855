// Peak tensor memory (runtime/memory_high_water.h): the counter itself,
// the CPU backend's pool, and RunResult::peakMemoryBytes of whole runs.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "executor/cpu/host_memory_pool.h"
#include "harness.h"
#include "runtime/memory_high_water.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

TEST(MemoryHighWater, ThePeakIsTheMostLiveAtOnce) {
  MemoryHighWater m;
  m.allocated(100);
  m.allocated(50);
  m.freed(100);
  m.allocated(20);
  EXPECT_EQ(m.live(), 70u);
  EXPECT_EQ(m.peak(), 150u);
  m.resetPeak();  // from what is live now
  EXPECT_EQ(m.peak(), 70u);
  m.allocated(10);
  EXPECT_EQ(m.peak(), 80u);
}

TEST(MemoryHighWater, ThreadsThatEachHoldOneBlockPeakAtMostAllOfThem) {
  MemoryHighWater m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&m] {
      for (int i = 0; i < 10000; ++i) {
        m.allocated(8);
        m.freed(8);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.live(), 0u);
  EXPECT_GE(m.peak(), 8u);
  EXPECT_LE(m.peak(), 32u);
}

TEST(MemoryHighWater, TheHostPoolCountsBuffersHandedOutNotItsCache) {
  auto pool = cpu::HostMemoryPool::create();
  {
    auto a = pool->allocate(1000);
    auto b = pool->allocate(3000);
    EXPECT_EQ(pool->usage().live(), 4000u);
  }
  EXPECT_EQ(pool->usage().live(), 0u);
  EXPECT_GT(pool->cachedBytes(), 0u);  // kept for reuse, but not live
  EXPECT_EQ(pool->usage().peak(), 4000u);
}

RunResult runOrFail(const std::string& text, int64_t world, int repeat = 1) {
  Program program = parseOrThrow(text);
  RunRequest request = makeRequest(program, bindAll(program, {}), 7, 4);
  request.repeat = repeat;
  auto result = runWithin(request, world);
  if (!result) throw std::runtime_error("the run did not finish");
  if (!*result) throw std::runtime_error(result->error().message);
  return std::move(result->value());
}

// Every buffer stays named to the end of the program: the peak is all of them.
TEST(PeakMemory, IsEveryLiveTensorOfTheRunInputsIncluded) {
  const std::string text = testing::testProgramText("executor/programs/peak_memory_live_tensors.hir");
  for (int64_t world : {1, 2}) {
    RunResult result = runOrFail(text, world, /*repeat=*/2);
    ASSERT_TRUE(result.peakMemoryBytes.has_value());
    EXPECT_EQ(*result.peakMemoryBytes, uint64_t{4} * (1000 + 1000 + 2000 + 1000)) << world << " ranks";
  }
}

// A deallocated temporary goes back once its work is done; whenever that
// is, the peak lies between one temporary live and all of them.
TEST(PeakMemory, DeallocatedTemporariesCountWhileTheyLive) {
  const std::string text = testing::testProgramText("executor/programs/peak_memory_temporaries.hir");
  RunResult result = runOrFail(text, 1);
  ASSERT_TRUE(result.peakMemoryBytes.has_value());
  const uint64_t tensor = 4 * 4096;
  EXPECT_GE(*result.peakMemoryBytes, 3 * tensor);        // x, y and one t
  EXPECT_LE(*result.peakMemoryBytes, (2 + 8) * tensor);  // x, y and every t
  // Freed memory handed out again must not have clobbered the result:
  // y = x added to itself in the same order, in f32.
  Program program = parseOrThrow(text);
  HostTensor x = globalInputs(program, bindAll(program, {}), 1, 7).at("x");
  const auto* xs = reinterpret_cast<const float*>(x.data.data());
  const auto* ys = reinterpret_cast<const float*>(result.outputs.at("y").data.data());
  for (int64_t k = 0; k < 4096; ++k) {
    float want = xs[k];
    for (int i = 0; i < 8; ++i) want = want + xs[k];
    ASSERT_EQ(ys[k], want) << "y[" << k << "]";
  }
}

}  // namespace
}  // namespace hostir::reftest
