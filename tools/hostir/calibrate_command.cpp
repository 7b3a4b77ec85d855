// `hostir calibrate`: measure this machine on the team `hostir run` would
// use (MPI's ranks under mpirun, --ranks threads otherwise) with
// api::calibrate (or calibrateOnMpi), and write the profile
// `hostir simulate --machine FILE.json` reads; rank 0 writes and prints.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>

#include "api/output_file.h"
#include "hostir/calibration.h"
#include "hostir/error.h"
#include "hostir/mpi.h"
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

// "gemm f32 m=1024 n=64 k=8 (41%), launch overhead (4.2 us)": the noisiest
// first, at most five; a microsecond figure by how much its runs differed.
std::string noisiest(const std::vector<api::NoisyFigure>& noisy) {
  std::string text;
  for (size_t i = 0; i < noisy.size() && i < 5; ++i) {
    const api::NoisyFigure& figure = noisy[i];
    text += fmt::format("{}{} ({})", i ? ", " : "", figure.name,
                        figure.spreadMicros > 0 ? fmt::format("{:.1f} us", figure.spreadMicros)
                                                : fmt::format("{:.0f}%", figure.spread * 100));
  }
  if (noisy.size() > 5) text += fmt::format(" and {} more", noisy.size() - 5);
  return text;
}

// Rank 0 writes the profile, saying which figures stayed noisy (kept, their
// spreads recorded: a figure too noisy to use stopped the calibration
// before); its exit code.
int writeCalibration(const CalibrateOptions& o, const api::Calibration& c, double seconds) {
  if (!c.noisy.empty())
    std::cerr << fmt::format(
        "warning: {} figure(s) stayed noisy after {} retries (their runs spread beyond {:.0f}% and {:.0f} us per "
        "iteration): {}; kept with their spreads, which `simulate` prints as its range\n",
        c.noisy.size(), api::kCalibrationRetries, api::kCalibrationNoisySpread * 100, api::kCalibrationNoisyMicros,
        noisiest(c.noisy));
  if (auto why = writeOutputFile(o.outputPath, c.profileJson)) {
    std::cerr << fmt::format("error: cannot write '{}': {}\n", o.outputPath, *why);
    return kProgramError;
  }
  std::cout << fmt::format("calibrated: {}; wrote {} in {:.1f} s\n", c.summary, o.outputPath, seconds);
  return kSuccess;
}

}  // namespace

int runCalibrate(const CalibrateOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  // Generous: the longest single run is a second or two.
  const std::chrono::milliseconds deadline(300'000);

  // Under mpirun the team is MPI's; otherwise --ranks threads of this process.
  Team team = Team::start(o.api.ranks, deadline);
  api::MpiLaunch* mpi = team.mpi.get();
  // Under mpirun, the last barrier, with a deadline: MPI_Finalize would wait
  // for a rank that stopped without one.
  auto endTeam = [&](int code) {
    if (mpi) mpi->barrier("the barrier that ends the job");
    return code;
  };
  // Rank 0's value, on every rank.
  auto agree = [&](double value) { return mpi ? mpi->fromRank0(value, "the broadcast of rank 0's decision") : value; };

  // Every rank sees the same options and team: all find this alike.
  if (mpi && o.ranksGiven && o.api.ranks != team.world) {
    if (team.leader())
      std::cerr << fmt::format("error: --ranks {} disagrees with the {} ranks mpirun started\n", o.api.ranks,
                               team.world);
    return endTeam(kUsageError);
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

  api::CalibrateOptions options = o.api;
  options.onWarning = [](const std::string& warning) { std::cerr << "warning: " << warning << "\n"; };
  if (!o.api.quick)
    options.onProgress = [started](const std::string& what) {
      double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << fmt::format("calibrate: {:5.1f} s: {}\n", at, what);
    };
  std::optional<api::Calibration> calibration;
  try {
    calibration = mpi ? api::calibrateOnMpi(MPI_COMM_WORLD, options) : api::calibrate(options);
  } catch (const api::Error& error) {
    // Every rank finds a bad option alike; under mpirun a failed run
    // aborted the team, and rank 0 says why.
    if (team.leader()) std::cerr << toolError(error).text;
    return endTeam(toolError(error).exitCode);
  }
  if (team.leader()) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    code = writeCalibration(o, *calibration, seconds);
  }
  return endTeam(static_cast<int>(agree(code)));
}

}  // namespace hostir::tool
