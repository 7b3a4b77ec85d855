// Measuring this machine for the cost model, as `hostir calibrate` does:
// small programs (GEMMs, copies, kernels, collectives, stream hand-offs)
// run on a real team and backend, timed, and fitted into a machine profile
// that simulate() and the passes' cost model read. <hostir/mpi.h> adds
// calibrateOnMpi, on a communicator the caller owns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hostir::api {

// How a figure's timed runs are judged (calibration/figure_estimate.h): a
// figure of under kCalibrationMicroFigureMicros per iteration is a low
// quantile of its runs, a larger one their median. A figure is noisy when
// its runs' interquartile range exceeds both kCalibrationNoisySpread of
// their median and kCalibrationNoisyMicros per iteration: microsecond
// figures are judged in microseconds, large ones relative to themselves.
// A noisy figure is measured again (up to kCalibrationRetries times,
// keeping the least noisy runs) and then kept, its spread recorded. One
// still kCalibrationUnusableNoise times beyond both limits is unusable: the
// calibration stops there, unless forced. The values are the 2-vCPU VM's
// (docs/performance.md, "Calibration's figures"): quiet, its microsecond
// figures' runs differ by up to 3 µs per iteration, 20-95% of them.
inline constexpr double kCalibrationMicroFigureMicros = 50;
inline constexpr double kCalibrationNoisyMicros = 5;
inline constexpr double kCalibrationNoisySpread = 0.15;
inline constexpr double kCalibrationUnusableNoise = 4;
inline constexpr int kCalibrationRetries = 2;
// Other processes that keep this fraction of all cores busy as a CPU
// calibration starts make the machine busy (CalibrateOptions::force).
inline constexpr double kCalibrationBusyCores = 0.5;

struct CalibrateOptions {
  int64_t ranks = 2;                  // in-process ranks; calibrateOnMpi's team is the communicator's
  std::string backend = "cpu";        // "cpu", "cuda" or "auto" (as run() chooses)
  std::string communicator = "auto";  // as RunOptions::communicator
  int coresPerRank = 0;               // as RunOptions::coresPerRank (0: the node's cores divided by its ranks)
  bool quick = false;                 // a coarse grid, one or two sizes each: seconds instead of minutes
  // A CPU calibration first judges the load, before it measures anything:
  // the machine is busy when other processes keep kCalibrationBusyCores of
  // its cores busy as it starts, or when two short figures, a copy and a
  // GEMM of about a millisecond each, both stay noisy after their retries.
  // Busy, it is refused with Error kind Run naming the load and the busiest
  // other processes; and a figure that turns out unusable later stops it
  // there. Forced, it goes on: a busy machine with shorter and fewer timed
  // runs and no figure measured again, since more runs on a busy machine
  // only add time; an unusable figure is kept with its spread.
  bool force = false;
  // Testing aid, as RunOptions::injectDelaysMicros: random sleeps before
  // every task and communication of the runs, which make figures noisy.
  uint32_t injectDelaysMicros = 0;
  // Called before each group of measurements ("gemm f32", "memory", ...);
  // on rank 0 only under MPI. Empty: none.
  std::function<void(const std::string&)> onProgress;
  // Called with what makes the measurements doubtful (other processes kept
  // the cores busy at the start); on rank 0 only under MPI. Empty: none.
  std::function<void(const std::string&)> onWarning;
};

struct NoisyFigure {
  std::string name;         // "gemm f32 m=256 n=256 k=256", "allreduce 1 MiB", "launch overhead"
  double spread = 0;        // the interquartile range of its timed runs over their median
  double spreadMicros = 0;  // a microsecond figure's: its runs' interquartile range per iteration, in µs; else 0
};

// What a calibration measured (under MPI, this rank's figures; rank 0's are
// the team's profile).
struct Calibration {
  std::string profileName;  // "calibrated on HOST"
  std::string profileJson;  // the profile, as simulate(machine = its file) reads it
  // The headline figures, one line: GEMM peaks, memory, kernels,
  // collectives, contention and host overheads.
  std::string summary;
  std::vector<NoisyFigure> noisy;  // the figures that stayed noisy, kept in the profile; noisiest first
  double busyAtStart = 0;          // the fraction of all cores other work kept busy as it started
  double seconds = 0;              // how long it took
};

// Measures this machine on options.ranks in-process ranks. Throws Error:
// Usage for options out of bounds or a backend the team cannot use (Runtime
// when the machine lacks the device), Run when a measurement's run fails.
Calibration calibrate(const CalibrateOptions& options = {});

}  // namespace hostir::api
