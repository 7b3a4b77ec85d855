// api::calibrate: the options checked and turned into a calibration
// request as a run's are, the load sampled, the measurements made
// (calibration/), and the profile named and described.
#include "hostir/calibration.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>

#include "api/backend_choice.h"
#include "api/calibration_team.h"
#include "api/program_impl.h"
#include "api/run_preparation.h"
#include "calibration/machine_load.h"
#include "executor/cpu/blas_library.h"
#include "hostir/limits.h"
#include "model/machine_profile.h"
#include "runtime/backend_selection.h"

namespace hostir::api {
namespace {

// Measurements are noisy when other work holds this much of the cores.
constexpr double kBusyWarning = 0.25;

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "this machine";
  return name;
}

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "an unknown CPU";
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

// Where and how the numbers were measured: the machine, the team, the
// libraries, then the calibration's own account (`measured`).
std::string describe(const CalibrationTeam& team, const CalibrationRequest& request, double busy,
                     const std::string& measured, double seconds) {
  std::string where = fmt::format("{} ({}, {} cores, {:.0f}% busy at the start)", hostName(), cpuModel(),
                                  ::sysconf(_SC_NPROCESSORS_ONLN), busy * 100);
  if (request.backend.kind == BackendKind::Cuda) {
    const std::optional<CudaDeviceFacts> device = cudaDeviceFacts(0);
    std::string gpu =
        device ? fmt::format("{} ({} SMs, {:.0f} GiB, sm_{}{})", device->name, device->multiprocessors,
                             static_cast<double>(device->memoryBytes) / (1 << 30), device->major, device->minor)
               : std::string("a CUDA device");
    return fmt::format(
        "calibrated by hostir (backend cuda) on {} of {} at {}: {} ranks as {} on {} GPU(s); {}; took {:.1f} s", gpu,
        where, utcNow(), team.world, team.description, cudaDeviceCount(), measured, seconds);
  }
  const char* blas = cpu::blasLibrary().config();
  std::string collectives = team.world > 1 ? fmt::format("; collectives use {}'s own algorithms, recorded as ring",
                                                         team.inProcess ? "hostir's in-process team" : team.description)
                                           : "; one rank: no communication costs";
  return fmt::format("calibrated by hostir on {} at {}: {} ranks as {}, {}; {}{}; took {:.1f} s", where, utcNow(),
                     team.world, team.description, blas ? blas : "OpenBLAS", measured, collectives, seconds);
}

std::string summary(const MachineProfile& p) {
  std::string text = "gemm";
  bool first = true;
  for (hostir::DType dtype : {hostir::DType::F32, hostir::DType::F64, hostir::DType::BF16, hostir::DType::F16}) {
    auto peak = p.peakTflops.find(dtype);
    if (peak == p.peakTflops.end()) continue;
    text += fmt::format("{} {} {:.1f}", first ? "" : ",", dtypeName(dtype), peak->second * 1e3);
    first = false;
  }
  text += " GFLOP/s peak";
  if (!p.memory.bytes.empty()) {
    auto best = std::max_element(p.memory.gbps.begin(), p.memory.gbps.end());
    text += fmt::format(", memory {:.1f} GB/s best, {:.1f} GB/s at {} MiB", *best, p.memory.gbps.back(),
                        p.memory.bytes.back() >> 20);
  }
  for (auto [name, curve] : {std::pair<const char*, const MemoryCurve*>{"mul", &p.kernels.elementwise},
                             {"rms_norm", &p.kernels.rowReduction}})
    if (!curve->bytes.empty())
      text += fmt::format(", {} {:.1f} GB/s at {:.0f} MiB", name, curve->gbps.back(),
                          static_cast<double>(curve->bytes.back()) / (1 << 20));
  for (const auto& [dtype, grid] : p.kernels.attention)
    text += fmt::format(", attention {} {:.1f} GFLOP/s best", dtypeName(dtype),
                        *std::max_element(grid.tflops.begin(), grid.tflops.end()) * 1e3);
  bool anyCommunication = false;
  for (const CommunicationCost& c : p.communication) {
    if (c.kind != OpKind::Allreduce) continue;
    text +=
        fmt::format(", allreduce {} ranks latency {:.1f} us busbw {:.2f} GB/s", c.ranks, c.latencyMicros, c.busGbps);
    anyCommunication = true;
  }
  if (!anyCommunication) text += ", no communication costs (one rank)";
  for (const Contention& c : p.contention)
    if (c.slowed == WorkClass::Communication || c.beside == WorkClass::Communication ||
        (c.slowed == WorkClass::Memory && c.beside == WorkClass::Gemm))
      text += fmt::format(", {} beside {} at {:.2f} of its speed", workClassName(c.slowed), workClassName(c.beside),
                          c.rate);
  text +=
      fmt::format(", overheads issue {:.1f} us launch {:.1f} us sync {:.1f} us wakeup {:.1f} us",
                  p.overheads.issueMicros, p.overheads.launchMicros, p.overheads.syncMicros, p.overheads.wakeupMicros);
  return text;
}

// The options as a run's, so that they are checked, and the backend's
// options made, as for any run on this team.
RunOptions asRunOptions(const CalibrateOptions& options, int64_t world) {
  RunOptions run;
  run.ranks = world;
  run.backend = options.backend;
  run.communicator = options.communicator;
  run.coresPerRank = options.coresPerRank;
  run.injectDelaysMicros = options.injectDelaysMicros;
  return run;
}

// The backend's options made as for any run of these options; a device's
// communicator is resolved here, since the profile records which one it measured.
CalibrationRequest requestFor(const CalibrateOptions& options, const CalibrationTeam& team) {
  if (team.world < 1 || team.world > kMaxRanks)
    throw plainError(ErrorKind::Usage, fmt::format("ranks must be in [1, {}], got {}", kMaxRanks, team.world));
  const RunOptions run = asRunOptions(options, team.world);
  checkRunOptions(run);
  const TeamPlace place{team.inProcess, team.world, team.ranksOnThisNode};
  const BackendChoice choice = chooseRunBackend(run.backend, run.communicator, place);
  CalibrationRequest request;
  request.world = team.world;
  request.backend = backendOptions(run, choice, place);
  if (request.backend.kind == BackendKind::Cuda)
    request.backend.communicator =
        cudaCommunicator(request.backend.communicator, team.inProcess, team.ranksOnThisNode, cudaDeviceCount());
  request.quick = options.quick;
  request.force = options.force;
  request.backend.cpu.delays = {options.injectDelaysMicros, 0};
  request.watchdog = team.watchdog;
  request.agree = team.agree;
  if (team.leader && options.onProgress)
    request.progress = [&options](std::string_view what) { options.onProgress(std::string(what)); };
  return request;
}

}  // namespace

Calibration calibrateOnTeam(const CalibrateOptions& options, const CalibrationTeam& team) {
  const auto started = std::chrono::steady_clock::now();
  CalibrationRequest request = requestFor(options, team);
  // Every rank samples the same window (MPI ranks poll while they wait,
  // and a rank still starting up would count as other work).
  if (team.barrier) team.barrier();
  Calibration out;
  request.load = sampleMachineLoad(std::chrono::milliseconds(200));
  out.busyAtStart = request.load.othersBusy;
  if (team.leader && options.onWarning && out.busyAtStart > kBusyWarning)
    options.onWarning(fmt::format("other processes kept the cores {:.0f}% busy: the measurements will be noisy",
                                  out.busyAtStart * 100));
  Result<hostir::Calibration> measured = hostir::calibrate(request, team.runTeam);
  // Under MPI a failed run aborted the team: this rank's error is its own or its peer's.
  if (!measured) throw plainError(ErrorKind::Run, "calibration failed: " + measured.error().message);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  MachineProfile& profile = measured->profile;
  profile.name = fmt::format("calibrated on {}", hostName());
  profile.description = describe(team, request, out.busyAtStart, profile.description, out.seconds);
  out.profileName = profile.name;
  out.profileJson = machineProfileJson(profile);
  out.summary = summary(profile);
  out.noisy = std::move(measured->noisy);
  return out;
}

Calibration calibrate(const CalibrateOptions& options) {
  CalibrationTeam team;
  team.world = options.ranks;
  team.ranksOnThisNode = options.ranks;
  team.description = "an in-process team";
  team.runTeam = [world = options.ranks](const RunRequest& run) { return runInProcess(run, world); };
  return calibrateOnTeam(options, team);
}

}  // namespace hostir::api
