// `hostir calibrate`: measure this machine on the team `hostir run` would
// use (MPI's ranks under mpirun, --ranks threads otherwise) and write the
// profile `hostir simulate --machine FILE.json` reads. Every rank runs the
// measurements (calibration.h); rank 0 writes the file and prints.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "api/backend_choice.h"
#include "api/output_file.h"
#include "api/run_preparation.h"
#include "calibration/calibration.h"
#include "executor/cpu/blas_library.h"
#include "executor/runner.h"
#include "model/machine_profile.h"
#include "runtime/backend_selection.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/mpi_team.h"

namespace hostir::tool {
namespace {

// Why `path` cannot be written, found before minutes of measuring: it is
// opened for appending (and removed again when this created it).
std::optional<std::string> unwritable(const std::string& path) {
  bool existed = ::access(path.c_str(), F_OK) == 0;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return std::nullopt;
}

// The busy fraction of all cores over `window` (every process's work), from /proc/stat.
double coresBusy(std::chrono::milliseconds window) {
  auto sample = [](double& busy, double& total) {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    stat >> cpu;  // "cpu": the sum over the cores
    double fields[8] = {};
    for (double& f : fields) stat >> f;
    // user nice system idle iowait irq softirq steal
    total = 0;
    for (double f : fields) total += f;
    busy = total - fields[3] - fields[4];
    return static_cast<bool>(stat);
  };
  double busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
  if (!sample(busy0, total0)) return 0;
  std::this_thread::sleep_for(window);
  if (!sample(busy1, total1) || total1 <= total0) return 0;
  return (busy1 - busy0) / (total1 - total0);
}

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

std::string mpiLibrary() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<size_t>(std::max(length, 0)));
  size_t end = text.find_first_of(",\n");  // "Open MPI v4.1.4, package: ..."
  return end == std::string::npos ? text : text.substr(0, end);
}

// The facts only the tool knows, then how the numbers were measured.
std::string describe(const Team& team, const CalibrationRequest& request, double busy, const std::string& measured,
                     double seconds) {
  std::string teamText = team.mpi ? fmt::format("an MPI team ({})", mpiLibrary()) : "an in-process team";
  std::string where = fmt::format("{} ({}, {} cores, {:.0f}% busy at the start)", hostName(), cpuModel(),
                                  ::sysconf(_SC_NPROCESSORS_ONLN), busy * 100);
  if (request.backend.kind == BackendKind::Cuda) {
    const std::optional<CudaDeviceFacts> device = cudaDeviceFacts(0);
    std::string gpu =
        device ? fmt::format("{} ({} SMs, {:.0f} GiB, sm_{}{})", device->name, device->multiprocessors,
                             static_cast<double>(device->memoryBytes) / (1 << 30), device->major, device->minor)
               : std::string("a CUDA device");
    return fmt::format(
        "calibrated by `hostir calibrate --backend cuda` on {} of {} at {}: {} ranks as {} on {} GPU(s); "
        "{}; took {:.1f} s",
        gpu, where, utcNow(), team.world, teamText, cudaDeviceCount(), measured, seconds);
  }
  const char* blas = cpu::blasLibrary().config();
  std::string collectives = team.world > 1 ? fmt::format("; collectives use {}'s own algorithms, recorded as ring",
                                                         team.mpi ? mpiLibrary() : "hostir's in-process team")
                                           : "; one rank: no communication costs";
  return fmt::format("calibrated by `hostir calibrate` on {} at {}: {} ranks as {}, {}; {}{}; took {:.1f} s", where,
                     utcNow(), team.world, teamText, blas ? blas : "OpenBLAS", measured, collectives, seconds);
}

// "gemm f32 m=64 n=64 k=8 (41%), copy 16 KiB (23%)": the noisiest first, at most five.
std::string noisiest(const std::vector<NoisyFigure>& noisy) {
  std::string text;
  for (size_t i = 0; i < noisy.size() && i < 5; ++i)
    text += fmt::format("{}{} ({:.0f}%)", i ? ", " : "", noisy[i].name, noisy[i].spread * 100);
  if (noisy.size() > 5) text += fmt::format(" and {} more", noisy.size() - 5);
  return text;
}

std::string summary(const MachineProfile& p, const std::string& path, double seconds) {
  std::string text = "calibrated: gemm";
  bool first = true;
  for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
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
  text += fmt::format("; wrote {} in {:.1f} s\n", path, seconds);
  return text;
}

// Why the team cannot measure the backend asked for (exit 1), found alike
// on every rank before anything runs; nullopt when it can.
TeamPlace placeOf(const Team& team) { return TeamPlace{!team.mpi, team.world, team.ranksOnThisNode}; }

std::optional<std::string> backendProblem(const CalibrateOptions& o, const Team& team) {
  const BackendChoice choice = api::chooseBackendFor(o.api, placeOf(team));
  if (choice.refusal) return "--backend " + *choice.refusal;
  return std::nullopt;
}

// The backend's options made as for any run of these options; a device's
// communicator is resolved here, since the profile records which one it measured.
CalibrationRequest requestFor(const CalibrateOptions& o, const Team& team) {
  CalibrationRequest request;
  request.world = team.world;
  request.backend = api::backendOptions(o.api, api::chooseBackendFor(o.api, placeOf(team)), placeOf(team));
  if (request.backend.kind == BackendKind::Cuda)
    request.backend.communicator =
        cudaCommunicator(request.backend.communicator, !team.mpi, team.ranksOnThisNode, cudaDeviceCount());
  request.quick = o.quick;
  return request;
}

// Rank 0 writes the profile, or refuses a noisy one unless forced; its exit code.
int writeCalibration(const CalibrateOptions& o, const Team& team, const CalibrationRequest& request, Calibration& c,
                     double busy, double seconds) {
  if (!c.noisy.empty() && !o.force) {
    std::cerr << fmt::format(
        "error: the machine was too noisy to measure: {} figure(s) spread more than {:.0f}% after {} retries: {}; "
        "no profile written (quiet the machine, or pass --force to write it anyway)\n",
        c.noisy.size(), kNoisySpread * 100, kCalibrationRetries, noisiest(c.noisy));
    return kProgramError;
  }
  if (!c.noisy.empty())
    std::cerr << fmt::format("warning: --force: writing a profile with {} noisy figure(s): {}\n", c.noisy.size(),
                             noisiest(c.noisy));
  MachineProfile& profile = c.profile;
  profile.name = fmt::format("calibrated on {}", hostName());
  profile.description = describe(team, request, busy, profile.description, seconds);
  if (auto why = writeOutputFile(o.outputPath, machineProfileJson(profile))) {
    std::cerr << fmt::format("error: cannot write '{}': {}\n", o.outputPath, *why);
    return kProgramError;
  }
  std::cout << summary(profile, o.outputPath, seconds);
  return kSuccess;
}

}  // namespace

int runCalibrate(const CalibrateOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  // Generous: the longest single run is a second or two.
  const std::chrono::milliseconds deadline(300'000);

  // Under mpirun the team is MPI's; otherwise --ranks threads of this process.
  std::optional<MpiTeam> mpi;
  if (MpiSession::launchedByMpirun()) mpi = startMpi(deadline);
  Team team;
  team.mpi = mpi.has_value();
  team.world = mpi ? mpi->comm->size() : o.api.ranks;
  team.rank = mpi ? mpi->comm->rank() : 0;
  team.ranksOnThisNode = ranksOnThisNode(!team.mpi, team.world).value_or(team.world);
  HostWatchdog* watchdog = mpi ? mpi->watchdog.get() : nullptr;
  // Under mpirun, the last barrier, with a deadline: MPI_Finalize would wait
  // for a rank that stopped without one.
  auto endTeam = [&](int code) {
    if (mpi) withDeadline(watchdog, "the barrier that ends the job", [&] { mpi->comm->barrier(); });
    return code;
  };
  // Rank 0's value, on every rank.
  auto agree = [&](double value) {
    if (mpi)
      withDeadline(watchdog, "the broadcast of rank 0's decision",
                   [&] { mpi->comm->broadcast(&value, 1, DType::F64, 0); });
    return value;
  };

  // Every rank sees the same options and team: all find this alike.
  if (team.mpi && o.ranksGiven && o.api.ranks != team.world) {
    if (team.leader())
      std::cerr << fmt::format("error: --ranks {} disagrees with the {} ranks mpirun started\n", o.api.ranks,
                               team.world);
    return endTeam(kUsageError);
  }
  if (auto problem = backendProblem(o, team)) {
    if (team.leader()) std::cerr << fmt::format("error: {}\n", *problem);
    return endTeam(kProgramError);
  }
  int code = kSuccess;
  if (team.leader()) {
    if (auto why = unwritable(o.outputPath)) {
      std::cerr << fmt::format("error: cannot write '{}': {}\n", o.outputPath, *why);
      code = kProgramError;
    }
  }
  code = static_cast<int>(agree(code));
  if (code != kSuccess) return endTeam(code);

  // Every rank sleeps through the same window (MPI ranks poll while they
  // wait, and a rank still starting up would count as another process).
  if (mpi) withDeadline(watchdog, "the barrier before sampling the load", [&] { mpi->comm->barrier(); });
  const double busy = coresBusy(std::chrono::milliseconds(200));
  if (team.leader() && busy > 0.25)
    std::cerr << fmt::format("warning: other processes kept the cores {:.0f}% busy: the measurements will be noisy\n",
                             busy * 100);

  CalibrationRequest request = requestFor(o, team);
  request.watchdog = watchdog;
  if (mpi) request.agree = [&](bool mine) { return agree(mine ? 1 : 0) != 0; };
  if (team.leader() && !o.quick)
    request.progress = [started](std::string_view what) {
      double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << fmt::format("calibrate: {:5.1f} s: {}\n", at, what);
    };
  TeamRunner runTeam = [&](const RunRequest& run) {
    return mpi ? runOnRank(run, *mpi->comm) : runInProcess(run, team.world);
  };
  Result<Calibration> calibration = calibrate(request, runTeam);
  if (!calibration) {
    // Under mpirun a failed run aborted the team: this rank's error is its own or its peer's.
    if (team.leader()) std::cerr << fmt::format("error: calibration failed: {}\n", calibration.error().message);
    return endTeam(kProgramError);
  }
  if (team.leader()) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    code = writeCalibration(o, team, request, *calibration, busy, seconds);
  }
  return endTeam(static_cast<int>(agree(code)));
}

}  // namespace hostir::tool
