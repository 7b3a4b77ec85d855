#include "calibration/calibration_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "executor/host_tensor.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/evaluator.h"

namespace hostir {

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double spreadOf(std::vector<double> values) {
  if (values.size() < 2) return 0;
  std::sort(values.begin(), values.end());
  // Quartiles by linear interpolation between the sorted samples.
  auto quantile = [&](double q) {
    const double at = q * static_cast<double>(values.size() - 1);
    const size_t low = static_cast<size_t>(at);
    const size_t high = std::min(low + 1, values.size() - 1);
    return values[low] + (at - static_cast<double>(low)) * (values[high] - values[low]);
  };
  const double median = quantile(0.5);
  return median > 0 ? (quantile(0.75) - quantile(0.25)) / median : 0;
}

std::pair<int, int> runsFor(double estimatedSeconds) {
  if (estimatedSeconds > 0.3) return {0, 3};
  if (estimatedSeconds > 0.05) return {1, 3};
  return {1, 5};
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
