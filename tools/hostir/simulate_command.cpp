// `hostir simulate`: api::simulate (the program, after --passes, issued by
// the evaluator against the simulation backend and timed on a machine
// profile), printed: the contract's `predicted:` line, the range the
// profile's spreads allow, the streams' busy times, and optionally the
// predicted trace.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "hostir/error.h"
#include "hostir/execution.h"
#include "hostir/machine.h"
#include "hostir/program.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/unchunked_speedup.h"

namespace hostir::tool {

std::string machineShown(const std::string& profileName, const std::string& argument) {
  return profileName == argument ? fmt::format("'{}'", profileName) : fmt::format("'{}' ({})", profileName, argument);
}
namespace {

// Where E's clamps apply, why: the figures alone would not add up.
std::string overlapNotes(const api::Prediction& p) {
  if (p.computeMs <= 0 || p.commMs <= 0) return "";
  if (p.variantSlowerThanWhole) {
    const bool compute = p.computeMs >= p.commMs;
    return fmt::format(
        "note: the {} variant ({:.4f} ms) takes longer than the whole program ({:.4f} ms): stripping the {} changed "
        "the schedule (with no waits for them, more work runs at once and contends); E counts the shorter part "
        "as hidden\n",
        compute ? "compute-only" : "communication-only", std::max(p.computeMs, p.commMs), p.medianMs,
        compute ? "communications" : "computations");
  }
  if (p.slowerThanSerial)
    return fmt::format(
        "note: the whole program takes longer than its compute-only and communication-only variants one after "
        "the other ({:.4f} ms against {:.4f} + {:.4f} ms): running them together costs more than it hides "
        "(contention); E is 0\n",
        p.medianMs, p.computeMs, p.commMs);
  return "";
}

// `speedup`: against the unchunked program (unchunked_speedup.h); absent
// for a program without a chunk count. `unchunkedFailed`: it has one, but
// the program does not bind at S=1.
std::string formatPrediction(const api::Prediction& p, const SimulateOptions& o, std::optional<double> speedup,
                             bool unchunkedFailed) {
  std::string out =
      fmt::format("predicted: median_ms={:.4f} compute_ms={:.4f} comm_ms={:.4f} exposed_comm_ms={:.4f} E={:.2f}",
                  p.medianMs, p.computeMs, p.commMs, p.exposedCommMs, p.overlapEfficiency);
  out += speedup ? fmt::format(" speedup_vs_S1={:.2f}\n", *speedup) : "\n";
  if (unchunkedFailed) out += "note: no speedup_vs_S1: the program does not bind at S=1\n";
  // Only a profile with spreads has a range: without, the output is as it always was.
  if (p.fastMs && p.slowMs)
    out += fmt::format(
        "range: median_ms={:.4f}..{:.4f} (the profile's figures at the fast and the slow ends of "
        "their spreads)\n",
        *p.fastMs, *p.slowMs);
  out += overlapNotes(p);
  for (const std::string& assumption : p.assumptions) out += fmt::format("assumed: {}\n", assumption);
  out += fmt::format("busy_ms: host={:.4f}", p.hostMs);
  for (size_t s = 0; s < p.streamBusyMs.size(); ++s) {
    if (s > 0 && p.streamBusyMs[s] == 0) continue;  // worker streams the program never used
    out += s == 0 ? fmt::format(" main={:.4f}", p.streamBusyMs[s])
                  : fmt::format(" stream{}={:.4f}", s - 1, p.streamBusyMs[s]);
  }
  out += "\n";
  out += p.symmetric ? fmt::format("simulated: 1 rank standing for {} (the program never names `rank`), machine {}\n",
                                   o.api.ranks, machineShown(p.machineName, o.machine))
                     : fmt::format("simulated: all {} ranks (the program names `rank`), machine {}\n", o.api.ranks,
                                   machineShown(p.machineName, o.machine));
  if (!o.api.tracePath.empty()) {
    const int64_t simulated = p.symmetric ? 1 : o.api.ranks;
    if (p.tracedRanks < simulated) out += fmt::format("trace: ranks 0 to {} of {}\n", p.tracedRanks - 1, o.api.ranks);
    out += fmt::format("trace: wrote {} ({} bytes)\n", o.api.tracePath, p.traceBytes);
  }
  return out;
}

ToolResult<std::string> simulate(const SimulateOptions& o) {
  auto settings = parseSettings(o.settings);
  if (!settings) return settings.error();
  const ModelOptions model = o.model();
  if (auto error = checkPassNames(o.api.passes, {}, &model)) return *error;
  try {
    // The profile once: a pipe (`--machine <(...)`) can be read only once.
    const api::Machine machine = api::Machine::load(o.machine);
    const api::Program program = api::Program::fromFile(o.file);
    api::SimulateOptions options = o.api;
    options.params = *settings;
    if (o.remarks) options.onRemark = [](const std::string& remark) { std::cerr << remark; };
    options.onWarning = [](const std::string& warning) { std::cerr << warning; };
    const api::Prediction prediction = api::simulate(program, machine, options);
    std::optional<double> speedup;
    bool unchunkedFailed = false;
    if (hasChunkCount(program)) {
      auto bound = options.params.find(std::string(kChunkCountParam));
      const std::optional<double> unchunked =
          bound != options.params.end() && bound->second == api::ParamValue{int64_t{1}}
              ? std::optional<double>(prediction.medianMs)
              : unchunkedMs(program, machine, options);
      if (unchunked && prediction.medianMs > 0) speedup = *unchunked / prediction.medianMs;
      unchunkedFailed = !unchunked;
    }
    return formatPrediction(prediction, o, speedup, unchunkedFailed);
  } catch (const api::Error& error) {
    return toolError(error);
  }
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
