// What keeps a machine busy, as `hostir calibrate` reads it before it
// measures (calibration/machine_load.h): a spinning child process is named,
// with its share of a core.
#include "calibration/machine_load.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "spinning_process.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

TEST(MachineLoad, ReadsAProcessStatLine) {
  std::string name;
  uint64_t ticks = 0;
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  ASSERT_TRUE(parseProcessStat("412 (my (odd) name) R 1 412 412 0 -1 4194304 90 0 0 0 250 17 0 0 20 0 1", name, ticks));
  EXPECT_EQ(name, "my (odd) name");
  EXPECT_EQ(ticks, 267u);
  EXPECT_FALSE(parseProcessStat("412 no name here", name, ticks));
  EXPECT_FALSE(parseProcessStat("412 (short) R 1 2", name, ticks));
}

TEST(MachineLoad, NamesABusyProcessWithItsShareOfACore) {
  testing::SpinningProcess spinner;
  ASSERT_GT(spinner.pid(), 0);
  const MachineLoad load = sampleMachineLoad(std::chrono::milliseconds(300));
  auto found = std::find_if(load.busiest.begin(), load.busiest.end(),
                            [&](const ProcessLoad& p) { return p.pid == spinner.pid(); });
  ASSERT_NE(found, load.busiest.end()) << describeBusiest(load.busiest);
  EXPECT_EQ(found->name, testing::SpinningProcess::kName);
  // A whole core, less what other work on a shared test machine takes from it.
  EXPECT_GT(found->cores, 0.2);
  EXPECT_LE(found->cores, 1.1);
  EXPECT_GT(load.othersBusy, 0);
  EXPECT_THAT(describeBusiest(load.busiest), HasSubstr(fmt::format("hostir-spinner (pid {}) ", spinner.pid())));
}

TEST(MachineLoad, OurOwnProcessesAreNotOthers) {
  testing::SpinningProcess spinner;
  const MachineLoad load = sampleMachineLoad(std::chrono::milliseconds(300), {spinner.pid()});
  for (const ProcessLoad& p : load.busiest) EXPECT_NE(p.pid, spinner.pid());
}

TEST(MachineLoad, SaysWhenNoProcessStandsOut) {
  EXPECT_EQ(describeBusiest({}), "none held 5% of a core through the sample: short-lived processes");
  EXPECT_EQ(describeBusiest({{12, "cc1plus", 0.974}, {7, "make", 0.06}}),
            "cc1plus (pid 12) 97% of a core, make (pid 7) 6% of a core");
}

}  // namespace
}  // namespace hostir
