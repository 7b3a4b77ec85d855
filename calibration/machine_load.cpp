#include "calibration/machine_load.h"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace hostir {
namespace {

// Busy and total ticks of all cores together, from /proc/stat's "cpu" line.
bool coreTicks(double& busy, double& total) {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;
  double fields[8] = {};  // user nice system idle iowait irq softirq steal
  for (double& f : fields) stat >> f;
  if (!stat || cpu != "cpu") return false;
  total = 0;
  for (double f : fields) total += f;
  busy = total - fields[3] - fields[4];
  return true;
}

struct ProcessTicks {
  std::string name;
  uint64_t ticks = 0;
};

std::map<int, ProcessTicks> processTicks() {
  std::map<int, ProcessTicks> processes;
  DIR* proc = ::opendir("/proc");
  if (!proc) return processes;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::ifstream file(fmt::format("/proc/{}/stat", pid));
    std::string line;
    ProcessTicks process;
    if (std::getline(file, line) && parseProcessStat(line, process.name, process.ticks))
      processes[static_cast<int>(pid)] = std::move(process);
  }
  ::closedir(proc);
  return processes;
}

}  // namespace

bool parseProcessStat(const std::string& line, std::string& name, uint64_t& ticks) {
  // "PID (NAME) STATE PPID ...": NAME may hold spaces and parentheses; the last ')' ends it.
  const size_t open = line.find('(');
  const size_t close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  name = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  // Fields 3 to 13 (state .. cmajflt), then utime and stime (14, 15).
  for (int i = 3; i <= 13; ++i) rest >> field;
  uint64_t utime = 0, stime = 0;
  rest >> utime >> stime;
  if (!rest) return false;
  ticks = utime + stime;
  return true;
}

MachineLoad sampleMachineLoad(std::chrono::milliseconds window, const std::set<int>& ours) {
  std::set<int> mine = ours;
  mine.insert(static_cast<int>(::getpid()));
  MachineLoad load;
  double busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
  const auto before = processTicks();
  const bool sampled = coreTicks(busy0, total0);
  const auto started = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(window);
  const auto after = processTicks();
  if (!sampled || !coreTicks(busy1, total1) || total1 <= total0) return load;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double ticksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double ourTicks = 0;
  for (const auto& [pid, now] : after) {
    auto then = before.find(pid);
    if (then == before.end() || now.ticks < then->second.ticks) continue;
    const double used = static_cast<double>(now.ticks - then->second.ticks);
    if (mine.count(pid)) {
      ourTicks += used;
      continue;
    }
    const double share = used / ticksPerSecond / seconds;
    if (share >= kNamedProcessCores) load.busiest.push_back({pid, now.name, share});
  }
  // /proc/stat and /proc/PID/stat count the same clock ticks (every core's, summed).
  load.othersBusy = std::clamp((busy1 - busy0 - ourTicks) / (total1 - total0), 0.0, 1.0);
  std::stable_sort(load.busiest.begin(), load.busiest.end(),
                   [](const ProcessLoad& a, const ProcessLoad& b) { return a.cores > b.cores; });
  if (load.busiest.size() > kNamedProcesses) load.busiest.resize(kNamedProcesses);
  return load;
}

std::string describeBusiest(const std::vector<ProcessLoad>& busiest) {
  // The load came from processes that started and ended within the sample
  // (a build's compilers, a test suite's commands): none can be named.
  if (busiest.empty())
    return fmt::format("none held {:.0f}% of a core through the sample: short-lived processes",
                       kNamedProcessCores * 100);
  std::string text;
  for (const ProcessLoad& p : busiest)
    text += fmt::format("{}{} (pid {}) {:.0f}% of a core", text.empty() ? "" : ", ", p.name, p.pid, p.cores * 100);
  return text;
}

}  // namespace hostir
