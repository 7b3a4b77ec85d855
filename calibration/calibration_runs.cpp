#include "calibration/calibration_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "executor/host_tensor.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/evaluator.h"

namespace hostir {

std::pair<int, int> runsFor(double estimatedSeconds) {
  if (estimatedSeconds > 0.3) return {0, kLeastTimedRuns};
  if (estimatedSeconds > 0.01) return {1, kLeastTimedRuns};
  if (estimatedSeconds > 0.002) return {1, 9};
  return {2, 15};
}

std::string sizeName(int64_t bytes) {
  constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} B", bytes);
}

Program CalibrationRuns::parse(std::string_view text) const {
  auto program = parseProgram(text);
  if (!program)
    fail({}, fmt::format("internal error: a calibration program does not parse: {}", program.error().message));
  return std::move(*program);
}

RunRequest CalibrationRuns::requestFor(const Program& program, const std::map<std::string, int64_t>& set) const {
  Bindings bindings{set, request_.world};
  if (Status error = verifyProgram(program, bindings))
    fail({}, fmt::format("internal error: calibration program '{}' does not verify: {}", program.name, error->message));
  auto params = bindParams(program, bindings);
  if (!params) fail({}, params.error().message);
  RunRequest run;
  run.program = program;
  run.params = *params;
  Evaluator shapes(program, *params, 0, request_.world);  // the inputs' global shapes
  for (const TensorSpec& spec : shapes.inputs()) run.inputs[spec.name] = makeHostTensor(spec.dtype, spec.globalShape);
  run.backend = request_.backend;
  run.watchdog = request_.watchdog;
  return run;
}

RunResult CalibrationRuns::runOrFail(const RunRequest& run) const {
  auto result = runTeam_(run);
  if (!result) {
    Diagnostic diag = result.error();
    diag.message = fmt::format("calibration program '{}' failed: {}", run.program.name, diag.message);
    throw DiagnosticError{diag};
  }
  return std::move(*result);
}

std::vector<double> CalibrationRuns::timedRuns(const Program& program, const std::map<std::string, int64_t>& set,
                                               int warmup, int repeat) const {
  RunRequest run = requestFor(program, set);
  run.warmup = warmup;
  run.repeat = repeat;
  RunResult result = runOrFail(run);
  if (result.runMillis.empty())
    fail({}, fmt::format("internal error: calibration program '{}' was not timed", program.name));
  std::vector<double> seconds;
  for (double millis : result.runMillis) seconds.push_back(millis / 1e3);
  return seconds;
}

std::vector<RecordedSlice> CalibrationRuns::tracedRun(const Program& program, const std::map<std::string, int64_t>& set,
                                                      int warmup) const {
  RunRequest run = requestFor(program, set);
  run.warmup = warmup;
  run.repeat = 1;
  std::mutex mutex;  // in-process ranks write their traces at once
  std::vector<RecordedSlice> slices;
  std::string problem;
  run.writeTrace = [&](Communicator& comm, const TraceRecorder& recorder) -> Result<TraceSummary> {
    if (comm.rank() != 0) return TraceSummary{};
    auto read = recordedSlices(recorder);
    std::lock_guard lock(mutex);
    if (!read)
      problem = read.error();
    else
      slices = std::move(*read);
    return TraceSummary{};
  };
  RunResult result = runOrFail(run);
  if (!problem.empty() || (result.trace && !*result.trace))
    fail({}, fmt::format("calibration program '{}': its trace could not be read: {}", program.name,
                         problem.empty() ? result.trace->error().message : problem));
  return slices;
}

}  // namespace hostir
