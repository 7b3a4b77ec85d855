// The rendezvous under the in-process team: generations, abort, and the
// check that runs when everyone has arrived.
#include "comm/team_barrier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "comm/communicator.h"

namespace {

using namespace hostir;
using namespace std::chrono_literals;

TEST(TeamBarrierTest, EachGenerationSeesEveryWriteOfThePreviousOne) {
  constexpr int kParties = 4;
  constexpr int kGenerations = 200;
  TeamBarrier barrier(kParties);
  std::vector<int> slots(kParties, -1);  // plain ints: the barrier must order them
  std::vector<int> mismatches(kParties, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kParties; ++t)
    threads.emplace_back([&, t] {
      for (int g = 0; g < kGenerations; ++g) {
        slots[t] = g;
        barrier.arriveAndWait();
        for (int other = 0; other < kParties; ++other) mismatches[t] += slots[other] != g;
        barrier.arriveAndWaitForAll();
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kParties; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(TeamBarrierTest, AbortWakesWaitersAndFailsLaterCalls) {
  TeamBarrier barrier(3);
  auto waiter = [&] { barrier.arriveAndWait(); };
  auto first = std::async(std::launch::async, waiter);
  auto second = std::async(std::launch::async, waiter);
  std::this_thread::sleep_for(20ms);
  barrier.abort("peer failed");
  barrier.abort("a later reason is dropped");
  for (auto* f : {&first, &second}) {
    ASSERT_EQ(f->wait_for(10s), std::future_status::ready) << "a waiter hangs after abort";
    EXPECT_THROW(
        {
          try {
            f->get();
          } catch (const CommError& e) {
            EXPECT_THAT(e.what(), ::testing::HasSubstr("peer failed"));
            throw;
          }
        },
        CommError);
  }
  EXPECT_THROW(barrier.arriveAndWait(), CommError);
}

TEST(TeamBarrierTest, FailedArrivalCheckAbortsEveryone) {
  TeamBarrier barrier(2);
  auto check = [] { return std::string("ranks disagree"); };
  auto other = std::async(std::launch::async, [&] { barrier.arriveAndWait(check); });
  EXPECT_THROW(barrier.arriveAndWait(check), CommError);
  ASSERT_EQ(other.wait_for(10s), std::future_status::ready);
  EXPECT_THROW(other.get(), CommError);
}

TEST(TeamBarrierTest, WaitForAllOutlastsAnAbortUntilEveryoneArrives) {
  TeamBarrier barrier(2);
  auto first = std::async(std::launch::async, [&] { barrier.arriveAndWaitForAll(); });
  std::this_thread::sleep_for(20ms);
  barrier.abort("stop");
  // The other party may still be writing into this one's buffers.
  EXPECT_EQ(first.wait_for(50ms), std::future_status::timeout);
  EXPECT_THROW(barrier.arriveAndWaitForAll(), CommError);
  ASSERT_EQ(first.wait_for(10s), std::future_status::ready);
  EXPECT_THROW(first.get(), CommError);
}

// waitUntil: the one-sided wait of the copy-engine communicator's phases.
TEST(TeamBarrierTest, WaitUntilSleepsUntilASignalMakesItsConditionHold) {
  TeamBarrier barrier(2);
  std::atomic<int> count{0};
  int payload = 0;  // plain: the count orders it
  for (int round = 1; round <= 200; ++round) {
    auto waiter = std::async(std::launch::async, [&, round] {
      barrier.waitUntil([&] { return count.load() >= round; });
      return payload;
    });
    // Now and then long enough for the waiter to be asleep, not spinning.
    if (round % 50 == 0) std::this_thread::sleep_for(5ms);
    payload = round;
    count.store(round);
    barrier.signal();
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << "a signal was lost in round " << round;
    EXPECT_EQ(waiter.get(), round);
  }
}

TEST(TeamBarrierTest, AbortEndsAWaitUntilPromptly) {
  TeamBarrier barrier(3);
  std::atomic<bool> never{false};
  auto waiter = std::async(std::launch::async, [&] { barrier.waitUntil([&] { return never.load(); }); });
  std::this_thread::sleep_for(50ms);  // asleep by now
  const auto aborted = std::chrono::steady_clock::now();
  barrier.abort("peer failed");
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << "a waitUntil hangs after abort";
  // Woken, not polling: well under the half second a loaded machine may add.
  EXPECT_LT(std::chrono::steady_clock::now() - aborted, 500ms);
  try {
    waiter.get();
    ADD_FAILURE() << "waitUntil returned after an abort";
  } catch (const CommError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("peer failed"));
  }
  // An aborted team fails a later wait at once, but not one that holds already.
  EXPECT_THROW(barrier.waitUntil([&] { return never.load(); }), CommError);
  never.store(true);
  barrier.waitUntil([&] { return never.load(); });
}

TEST(TeamBarrierTest, OnePartyNeverWaits) {
  TeamBarrier barrier(1);
  for (int i = 0; i < 3; ++i) {
    barrier.arriveAndWait();
    barrier.arriveAndWaitForAll();
  }
}

}  // namespace
