// `hostir calibrate`'s measurements: small .hir programs (loops of GEMMs,
// copies, collectives, stream hand-offs) run through the real runner on the
// real team, timed, and turned into a MachineProfile (model/machine_profile.h)
// for `hostir simulate`.
//
// SPMD: every rank calls calibrate() with the same request and a runner for
// its team, and makes the same runs in the same order: the one decision a
// timing makes (measure a noisy figure again) is rank 0's, shared through
// CalibrationRequest::agree, so MPI ranks never diverge. Each rank's profile
// comes from its own timings, and the tool keeps rank 0's. In process, one
// thread calls it and the runner runs all the ranks (runInProcess).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/machine_load.h"
#include "executor/backend_factory.h"
#include "executor/runner.h"
#include "hostir/calibration.h"
#include "hostir/defaults.h"
#include "ir/diagnostic.h"
#include "model/machine_profile.h"

namespace hostir {

struct CalibrationRequest {
  int64_t world = 2;  // the team's size
  // The runs' backend. For CUDA the tool resolves an Auto communicator first
  // (cudaCommunicator), since the profile records which it measured;
  // cpu.coresPerRank is the cores per rank, as `hostir run` sets it.
  BackendOptions backend = [] {
    BackendOptions options;
    options.cpu.coresPerRank = 1;
    return options;
  }();
  bool quick = false;  // a coarse grid and one or two sizes each: seconds, not minutes
  bool force = false;  // measure a busy machine anyway (api::CalibrateOptions::force)
  // What other processes kept busy while the team waited, just before
  // (sampleMachineLoad; api::Calibration::busyAtStart).
  MachineLoad load;
  HostWatchdog* watchdog = nullptr;  // MPI teams: the deadline of every blocking step (RunRequest::watchdog)
  // Called before each group of measurements ("gemm f32", "memory", ...); may be empty.
  std::function<void(std::string_view)> progress;
  // Rank 0's value, on every rank (MPI teams: a broadcast); empty: this
  // process is the whole team. Every decision and every measured figure
  // passes through it, since each rank times its own runs: a run sized by
  // a rank's own figure would differ in length and count between ranks,
  // and their barriers would no longer match.
  std::function<double(double)> agree;
};

// A figure's runs are judged as calibration/figure_estimate.h says: a noisy
// one is measured again (up to kCalibrationRetries times, keeping the least
// noisy runs) and kept; an unusable one stops the calibration (rank 0
// decides), unless forced. The bounds are the public API's (hostir/calibration.h).
inline constexpr int kCalibrationRetries = api::kCalibrationRetries;
inline constexpr double kNoisySpread = api::kCalibrationNoisySpread;
// Timed runs of each of the two figures that judge the load first.
inline constexpr int kLoadProbeRuns = 9;
// Other processes holding this much of the cores as it starts make the machine busy.
inline constexpr double kBusyCores = api::kCalibrationBusyCores;
// A forced calibration of a busy machine times a sixth of the iterations
// per run and at most 2 runs per figure: its runs are slower by the load.
inline constexpr int64_t kBusyLoopDivisor = 6;
inline constexpr int kBusyRepeat = 2;
using api::NoisyFigure;

struct Calibration {
  MachineProfile profile;
  std::vector<NoisyFigure> noisy;  // the figures kept though noisy, noisiest first
};

// Runs one request on the whole team and returns this rank's result
// (runInProcess, or runOnRank with the MPI communicator).
using TeamRunner = std::function<Result<RunResult>(const RunRequest&)>;

// Measures the machine. The profile's description says how it was measured;
// its name, and the facts only the tool knows (host, date, libraries), are
// the tool's to add. Errors (a run that failed) are values; nothing prints.
Result<Calibration> calibrate(const CalibrationRequest& request, const TeamRunner& runTeam);

// Least squares fit of seconds = latency + x / bandwidth, weighted by
// relative error (1 / seconds^2) so that small and large messages count
// alike; latency clamped at 0 (the line is then refitted through the
// origin). x is bytes * busFactor; returns {latency seconds, bandwidth in
// x per second}; bandwidth is 0 when the points cannot give one.
struct LineFit {
  double latency = 0;
  double bandwidth = 0;
};
LineFit fitLatencyBandwidth(const std::vector<double>& x, const std::vector<double>& seconds);

}  // namespace hostir
