// TicketWaiters: a thread waiting for its turn returns once woken with its
// ticket and ready, in whatever order the threads began waiting, and
// wakeAll releases every waiter whose condition now holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "executor/cpu/ticket_waiters.h"

namespace hostir::cpu {
namespace {

TEST(TicketWaiters, ReleasesWaitersInTurnOrderWhateverOrderTheyArrive) {
  std::mutex mutex;
  TicketWaiters waiters;
  uint64_t turn = 0;  // guarded by mutex
  std::vector<uint64_t> finished;
  constexpr uint64_t kThreads = 16;
  std::vector<uint64_t> tickets(kThreads);
  for (uint64_t i = 0; i < kThreads; ++i) tickets[i] = i;
  std::shuffle(tickets.begin(), tickets.end(), std::mt19937(7));

  std::vector<std::thread> threads;
  for (uint64_t ticket : tickets) {
    threads.emplace_back([&, ticket] {
      std::unique_lock lock(mutex);
      waiters.wait(lock, ticket, [&] { return turn == ticket; });
      finished.push_back(ticket);
      ++turn;  // the next turn, and only its waiter is woken
      waiters.wake(turn);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(finished.size(), kThreads);
  for (uint64_t i = 0; i < kThreads; ++i) EXPECT_EQ(finished[i], i);
}

TEST(TicketWaiters, WakeAllReleasesEveryWaiterWhoseConditionHolds) {
  std::mutex mutex;
  TicketWaiters waiters;
  bool stop = false;  // guarded by mutex
  std::vector<std::thread> threads;
  for (uint64_t ticket = 10; ticket < 14; ++ticket)
    threads.emplace_back([&, ticket] {
      std::unique_lock lock(mutex);
      waiters.wait(lock, ticket, [&] { return stop; });
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard lock(mutex);
    stop = true;
    waiters.wakeAll();
  }
  for (auto& t : threads) t.join();  // hangs (and times out) if one was missed
}

}  // namespace
}  // namespace hostir::cpu
