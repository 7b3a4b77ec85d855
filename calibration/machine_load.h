// What keeps a machine's cores busy as `hostir calibrate` starts: the share
// of all cores that other processes used over a short window (/proc/stat),
// and the busiest of them (/proc/PID/stat), so that a refusal can name them.
// Linux only; elsewhere (no /proc) the machine reads as idle.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace hostir {

struct ProcessLoad {
  int pid = 0;
  std::string name;  // the command name, as /proc/PID/stat has it ("cc1plus", "hostir")
  double cores = 0;  // the cores it kept busy over the window (1 = one core whole)
};

struct MachineLoad {
  double othersBusy = 0;             // the fraction of all cores that other processes kept busy
  std::vector<ProcessLoad> busiest;  // other processes that used kNamedProcessCores or more, busiest first
};

// Processes below this share of one core are not named: a shell, a daemon waking.
inline constexpr double kNamedProcessCores = 0.05;
// At most this many are named.
inline constexpr size_t kNamedProcesses = 4;

// Samples the machine over `window` (the caller sleeping meanwhile); the
// processes in `ours` (this one, by default) are not others.
MachineLoad sampleMachineLoad(std::chrono::milliseconds window, const std::set<int>& ours = {});

// One process's CPU time from a /proc/PID/stat line: its name and
// utime + stime in clock ticks; false when the line is not one.
bool parseProcessStat(const std::string& line, std::string& name, uint64_t& ticks);

// "hostir-spinner (pid 412) 99% of a core, cc1plus (pid 97) 31% of a core",
// or "none held 5% of a core through the sample: short-lived processes".
std::string describeBusiest(const std::vector<ProcessLoad>& busiest);

}  // namespace hostir
