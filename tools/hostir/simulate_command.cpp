// `hostir simulate`: the program, after --passes, issued by the evaluator
// against the simulation backend and timed on a machine profile. It prints
// the contract's `predicted:` line (program_prediction.h defines its
// figures), the streams' busy times, and optionally the predicted trace.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "tools/hostir/commands.h"
#include "tools/hostir/predicted_trace.h"
#include "tools/hostir/program_prediction.h"

namespace hostir::tool {
namespace {

// Ranks a predicted trace draws at most: each is a temporary file while it is written.
constexpr size_t kMaxTracedRanks = 64;

// Where E's clamps apply (api/program_prediction.h), why: the figures
// alone would not add up.
std::string overlapNotes(const ProgramPrediction& p) {
  if (p.computeSeconds <= 0 || p.communicationSeconds <= 0) return "";
  if (p.variantSlowerThanWhole()) {
    const bool compute = p.computeSeconds >= p.communicationSeconds;
    return fmt::format(
        "note: the {} variant ({:.4f} ms) takes longer than the whole program ({:.4f} ms): stripping the {} changed "
        "the schedule (with no waits for them, more work runs at once and contends); E counts the shorter part "
        "as hidden\n",
        compute ? "compute-only" : "communication-only", std::max(p.computeSeconds, p.communicationSeconds) * 1e3,
        p.seconds() * 1e3, compute ? "communications" : "computations");
  }
  if (p.slowerThanSerial())
    return fmt::format(
        "note: the whole program takes longer than its compute-only and communication-only variants one after "
        "the other ({:.4f} ms against {:.4f} + {:.4f} ms): running them together costs more than it hides "
        "(contention); E is 0\n",
        p.seconds() * 1e3, p.computeSeconds * 1e3, p.communicationSeconds * 1e3);
  return "";
}

std::string formatPrediction(const ProgramPrediction& p, const std::optional<PredictionRange>& range,
                             const SimulateOptions& o) {
  std::string out =
      fmt::format("predicted: median_ms={:.4f} compute_ms={:.4f} comm_ms={:.4f} exposed_comm_ms={:.4f} E={:.2f}\n",
                  p.seconds() * 1e3, p.computeSeconds * 1e3, p.communicationSeconds * 1e3,
                  p.exposedCommunicationSeconds() * 1e3, p.overlapEfficiency());
  // Only a profile with spreads has a range: without, the output is as it always was.
  if (range)
    out += fmt::format(
        "range: median_ms={:.4f}..{:.4f} (the profile's figures at the fast and the slow ends of "
        "their spreads)\n",
        range->fastSeconds * 1e3, range->slowSeconds * 1e3);
  out += overlapNotes(p);
  for (const std::string& assumption : p.assumptions(o.machine)) out += fmt::format("assumed: {}\n", assumption);
  std::vector<double> busy = streamBusySeconds(p.whole, 0);
  out += fmt::format("busy_ms: host={:.4f}", p.whole.timeline.ranks[0].hostEnd * 1e3);
  for (size_t s = 0; s < busy.size(); ++s) {
    if (s > 0 && busy[s] == 0) continue;  // worker streams the program never used
    out += s == 0 ? fmt::format(" main={:.4f}", busy[s] * 1e3) : fmt::format(" stream{}={:.4f}", s - 1, busy[s] * 1e3);
  }
  out += "\n";
  out +=
      p.whole.symmetric
          ? fmt::format("simulated: 1 rank standing for {} (the program never names `rank`), machine '{}'\n",
                        p.whole.world, o.machine)
          : fmt::format("simulated: all {} ranks (the program names `rank`), machine '{}'\n", p.whole.world, o.machine);
  return out;
}

ToolResult<std::string> simulate(const SimulateOptions& o) {
  auto settings = parseSettings(o.settings);
  if (!settings) return settings.error();
  const ModelOptions model = o.model();
  if (auto error = checkPassNames(o.api.passes, {}, &model)) return *error;
  auto machine = loadModel(model);
  if (!machine) return machine.error();
  const MachineProfile* profile = machine->get();
  auto source = loadProgram(o.file);
  if (!source) return source.error();
  Bindings bindings{*settings, o.api.ranks};
  if (auto error = verifyBound(*source, source->program, bindings)) return *error;
  api::PipelineOptions passOptions;
  passOptions.streams = o.api.streams;
  passOptions.machine = *machine;
  passOptions.minimumGain = o.api.minimumGain;
  passOptions.irDump = &std::cerr;
  auto program =
      applyPasses(*source, source->program, o.api.passes, bindings, passOptions, o.remarks ? &std::cerr : nullptr);
  if (!program) return program.error();
  auto prediction = predictOrError(*source, *program, bindings, o.api.streams, *profile);
  if (!prediction) return prediction.error();

  auto range = predictRange(*source, *program, bindings, o.api.streams, *profile);
  if (!range) return range.error();
  std::string out = formatPrediction(*prediction, *range, o);
  if (!o.tracePath.empty()) {
    Simulation traced = prediction->whole;
    if (traced.work.size() > kMaxTracedRanks) {
      traced.work.resize(kMaxTracedRanks);
      traced.timeline.ranks.resize(kMaxTracedRanks);
      out += fmt::format("trace: ranks 0 to {} of {}\n", kMaxTracedRanks - 1, prediction->whole.world);
    }
    Result<TraceSummary> written = writePredictedTrace(traced, o.tracePath, o.file, *profile);
    if (!written) return ToolError{kProgramError, fmt::format("error: {}\n", written.error().message)};
    out += fmt::format("trace: wrote {} ({} bytes)\n", o.tracePath, written->bytes);
  }
  return out;
}

}  // namespace

int runSimulate(const SimulateOptions& o) {
  ToolResult<std::string> result = simulate(o);
  if (!result) {
    std::cerr << result.error().text;
    return result.error().exitCode;
  }
  std::cout << *result;
  return kSuccess;
}

}  // namespace hostir::tool
