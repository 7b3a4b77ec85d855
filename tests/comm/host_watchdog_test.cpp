// The host's deadlines: a step that does not complete within the timeout
// ends the team, but a peer that says it is busy on its own work (a beat,
// comm/mpi_heartbeat.h) restarts the count.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "comm/host_watchdog.h"

namespace hostir {
namespace {

using namespace std::chrono_literals;

TEST(HostWatchdogTest, AStepPastItsDeadlineEndsTheTeamWithItsName) {
  std::atomic<bool> expired{false};
  std::string message;
  HostWatchdog watchdog(100ms, [&](const std::string& why) {
    message = why;
    expired = true;
  });
  auto guard = watchdog.watch("the barrier before run 2");
  for (int i = 0; i < 200 && !expired; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(expired);
  EXPECT_EQ(message.rfind("the barrier before run 2 has not completed after 0.1 s", 0), 0u) << message;
}

// Beats every 30 ms for 600 ms (six timeouts) keep a 100 ms deadline from
// expiring; once they stop, it expires.
TEST(HostWatchdogTest, APeersBeatsRestartTheDeadline) {
  std::atomic<bool> expired{false};
  HostWatchdog watchdog(100ms, [&](const std::string&) { expired = true; });
  auto guard = watchdog.watch("the vote on races");
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 600ms) {
    watchdog.heardFromPeer();
    std::this_thread::sleep_for(30ms);
  }
  EXPECT_FALSE(expired);
  for (int i = 0; i < 200 && !expired; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(expired);
}

}  // namespace
}  // namespace hostir
