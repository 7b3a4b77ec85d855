// The CPU backend's compute gate: jobs start strictly in ticket order
// whatever order their streams reach it, no more run at once than it has
// slots, an abort releases every waiting stream, and a job that throws
// gives its slot back.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "executor/cpu/compute_gate.h"

namespace hostir::cpu {
namespace {

TEST(ComputeGate, StartsJobsInTicketOrderWhateverOrderTheyArrive) {
  for (int slots : {1, 2, 3}) {
    ComputeGate gate(slots);
    constexpr int kJobs = 64;
    std::vector<uint64_t> tickets;
    for (int i = 0; i < kJobs; ++i) tickets.push_back(gate.nextTicket());
    std::mt19937 rng(slots);
    std::shuffle(tickets.begin(), tickets.end(), rng);  // streams reach the gate in any order

    std::mutex mutex;
    std::vector<uint64_t> started;
    std::atomic<int> running{0}, mostAtOnce{0};
    std::vector<std::thread> streams;
    for (uint64_t ticket : tickets) {
      streams.emplace_back([&, ticket] {
        auto span = gate.run(ticket, [&] {
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
    // Each job records itself as it starts; with one slot that is exactly
    // ticket order, with more the records may interleave only among jobs
    // already admitted, so no job starts before one issued `slots` or more
    // tickets earlier.
    for (size_t i = 0; i < started.size(); ++i)
      EXPECT_LT(started[i], i + static_cast<size_t>(slots)) << "slots " << slots;
    EXPECT_LE(mostAtOnce.load(), slots);
  }
}

TEST(ComputeGate, AbortReleasesStreamsWaitingBehindAMissingTicket) {
  ComputeGate gate(1);
  uint64_t dropped = gate.nextTicket();  // its task was dropped: it never arrives
  (void)dropped;
  uint64_t later = gate.nextTicket();
  std::optional<ComputeGate::Span> result = ComputeGate::Span{};
  bool ran = false;
  std::thread stream([&] { result = gate.run(later, [&] { ran = true; }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate.abort();
  stream.join();
  EXPECT_FALSE(result.has_value());
  EXPECT_FALSE(ran);
  // After a reset (a new run), tickets start again and jobs run.
  gate.reset();
  EXPECT_TRUE(gate.run(gate.nextTicket(), [&] { ran = true; }).has_value());
  EXPECT_TRUE(ran);
}

TEST(ComputeGate, AJobThatThrowsGivesItsSlotBack) {
  ComputeGate gate(1);
  EXPECT_THROW(gate.run(gate.nextTicket(), [] { throw std::runtime_error("bad kernel"); }), std::runtime_error);
  // The gate goes on with the next ticket, on its one slot.
  bool ran = false;
  EXPECT_TRUE(gate.run(gate.nextTicket(), [&] { ran = true; }).has_value());
  EXPECT_TRUE(ran);
}

TEST(ComputeGate, JobsRunOnTheCallingStreamThread) {
  ComputeGate gate(1);
  std::thread::id ranOn;
  EXPECT_TRUE(gate.run(gate.nextTicket(), [&] { ranOn = std::this_thread::get_id(); }).has_value());
  EXPECT_EQ(ranOn, std::this_thread::get_id());
}

}  // namespace
}  // namespace hostir::cpu
