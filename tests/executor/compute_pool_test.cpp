// The CPU backend's compute pool: jobs start strictly in ticket order
// whatever order their streams reach it, no more run at once than it has
// threads, an abort releases every waiting stream, and a job's exception
// reaches its stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "executor/cpu/compute_pool.h"

namespace hostir::cpu {
namespace {

TEST(ComputePool, StartsJobsInTicketOrderWhateverOrderTheyArrive) {
  for (int threads : {1, 2, 3}) {
    ComputePool pool(threads);
    constexpr int kJobs = 64;
    std::vector<uint64_t> tickets;
    for (int i = 0; i < kJobs; ++i) tickets.push_back(pool.nextTicket());
    std::mt19937 rng(threads);
    std::shuffle(tickets.begin(), tickets.end(), rng);  // streams reach the pool in any order

    std::mutex mutex;
    std::vector<uint64_t> started;
    std::atomic<int> running{0}, mostAtOnce{0};
    std::vector<std::thread> streams;
    for (uint64_t ticket : tickets) {
      streams.emplace_back([&, ticket] {
        auto span = pool.run(ticket, [&] {
          {
            std::lock_guard lock(mutex);
            started.push_back(ticket);
          }
          int now = ++running;
          int seen = mostAtOnce.load();
          while (now > seen && !mostAtOnce.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          --running;
        });
        EXPECT_TRUE(span.has_value());
        EXPECT_LE(span->start, span->end);
      });
    }
    for (auto& t : streams) t.join();
    ASSERT_EQ(started.size(), static_cast<size_t>(kJobs));
    // Each job records itself as it starts; with one thread that is exactly
    // ticket order, with more the start order may interleave only among
    // jobs already admitted, so no job starts before one issued
    // `threads` or more tickets earlier.
    for (size_t i = 0; i < started.size(); ++i)
      EXPECT_LT(started[i], i + static_cast<size_t>(threads)) << "threads " << threads;
    EXPECT_LE(mostAtOnce.load(), threads);
  }
}

TEST(ComputePool, AbortReleasesStreamsWaitingBehindAMissingTicket) {
  ComputePool pool(1);
  uint64_t dropped = pool.nextTicket();  // its task was dropped: it never arrives
  (void)dropped;
  uint64_t later = pool.nextTicket();
  std::optional<ComputePool::Span> result = ComputePool::Span{};
  bool ran = false;
  std::thread stream([&] { result = pool.run(later, [&] { ran = true; }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pool.abort();
  stream.join();
  EXPECT_FALSE(result.has_value());
  EXPECT_FALSE(ran);
  // After a reset (a new run), tickets start again and jobs run.
  pool.reset();
  EXPECT_TRUE(pool.run(pool.nextTicket(), [&] { ran = true; }).has_value());
  EXPECT_TRUE(ran);
}

TEST(ComputePool, AJobsExceptionReachesItsStream) {
  ComputePool pool(2);
  EXPECT_THROW(pool.run(pool.nextTicket(), [] { throw std::runtime_error("bad kernel"); }), std::runtime_error);
  // The pool goes on with the next ticket.
  bool ran = false;
  EXPECT_TRUE(pool.run(pool.nextTicket(), [&] { ran = true; }).has_value());
  EXPECT_TRUE(ran);
}

TEST(ComputePool, WithoutThreadsJobsRunOnTheCaller) {
  ComputePool pool(0);
  std::thread::id ranOn;
  EXPECT_TRUE(pool.run(pool.nextTicket(), [&] { ranOn = std::this_thread::get_id(); }).has_value());
  EXPECT_EQ(ranOn, std::this_thread::get_id());
}

}  // namespace
}  // namespace hostir::cpu
