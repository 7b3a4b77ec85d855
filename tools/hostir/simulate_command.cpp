// `hostir simulate`: the program, after --passes, issued by the evaluator
// against the simulation backend and timed on a machine profile. It prints
// the contract's `predicted:` line: the whole program's time, and the
// compute-only and communication-only variants' times (the program after
// strip-communication and strip-compute, as the overlap benchmark measures
// them), from which the exposed communication and the overlap efficiency
// E = (compute + comm - total) / min(compute, comm) follow.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "analysis/program_check.h"
#include "model/simulation.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/predicted_trace.h"

namespace hostir::tool {
namespace {

// Ranks a predicted trace draws at most: each is a temporary file while it is written.
constexpr size_t kMaxTracedRanks = 64;

struct Prediction {
  Simulation whole;
  double computeSeconds = 0;
  double communicationSeconds = 0;
};

std::string formatPrediction(const Prediction& p, const SimulateOptions& o) {
  const double total = p.whole.seconds(), compute = p.computeSeconds, comm = p.communicationSeconds;
  const double shorter = std::min(compute, comm);
  const double efficiency = shorter > 0 ? (compute + comm - total) / shorter : 0;
  std::string out =
      fmt::format("predicted: median_ms={:.4f} compute_ms={:.4f} comm_ms={:.4f} exposed_comm_ms={:.4f} E={:.2f}\n",
                  total * 1e3, compute * 1e3, comm * 1e3, std::max(0.0, total - compute) * 1e3, efficiency);
  std::vector<double> busy = streamBusySeconds(p.whole, 0);
  out += fmt::format("busy_ms: host={:.4f}", p.whole.timeline.ranks[0].hostEnd * 1e3);
  for (size_t s = 0; s < busy.size(); ++s) {
    if (s > 0 && busy[s] == 0) continue;  // worker streams the program never used
    out += s == 0 ? fmt::format(" main={:.4f}", busy[s] * 1e3) : fmt::format(" stream{}={:.4f}", s - 1, busy[s] * 1e3);
  }
  out += "\n";
  out += p.whole.symmetric
             ? fmt::format("simulated: 1 rank standing for {} (the program never names `rank`), machine '{}'\n",
                           p.whole.world, o.model.machine)
             : fmt::format("simulated: all {} ranks (the program names `rank`), machine '{}'\n", p.whole.world,
                           o.model.machine);
  return out;
}

ToolResult<std::string> simulate(const SimulateOptions& o) {
  auto settings = parseSettings(o.common.settings);
  if (!settings) return settings.error();
  if (auto error = checkPassNames(o.passes, {}, &o.model)) return *error;
  auto machine = loadModel(o.model);
  if (!machine) return machine.error();
  const MachineProfile* profile = machine->get();
  auto source = loadProgram(o.common.file);
  if (!source) return source.error();
  Bindings bindings{*settings, o.common.ranks};
  if (auto error = verifyBound(*source, source->program, bindings)) return *error;
  ApplyPassesOptions passOptions;
  passOptions.streams = o.common.streams;
  passOptions.printRemarks = o.remarks;
  passOptions.machine = *machine;
  passOptions.minimumGain = o.model.minimumGain;
  passOptions.log = &std::cerr;
  auto program = applyPasses(*source, source->program, o.passes, bindings, passOptions);
  if (!program) return program.error();
  auto params = bindParams(*program, bindings);
  if (!params) return source->error(params.error());

  // A racy program has no defined timeline, as it has no defined result: refused as `run` refuses it.
  ProgramCheck check = checkProgram(*program, *params, o.common.ranks, o.common.streams);
  if (!check.ok())
    return ToolError{kProgramError,
                     formatProgramCheck(check, o.common.file, source->text) +
                         fmt::format("{}: refusing to simulate: {}\n", o.common.file, summarizeFindings(check))};

  auto simulateVariant = [&](const Program& variant) -> ToolResult<Simulation> {
    Result<Simulation> simulation = simulateProgram(variant, *params, o.common.ranks, o.common.streams, *profile);
    if (!simulation) return source->error(simulation.error());
    return std::move(*simulation);
  };
  Prediction prediction;
  auto whole = simulateVariant(*program);
  if (!whole) return whole.error();
  prediction.whole = std::move(*whole);
  // The variants need no race proof: removing work orders nothing differently.
  ApplyPassesOptions variantOptions;
  variantOptions.raceCheck = false;
  for (auto [pass, seconds] : {std::pair{"strip-communication", &prediction.computeSeconds},
                               std::pair{"strip-compute", &prediction.communicationSeconds}}) {
    auto variant = applyPasses(*source, *program, pass, bindings, variantOptions);
    if (!variant) return variant.error();
    auto simulated = simulateVariant(*variant);
    if (!simulated) return simulated.error();
    *seconds = simulated->seconds();
  }

  std::string out = formatPrediction(prediction, o);
  if (!o.tracePath.empty()) {
    Simulation traced = prediction.whole;
    if (traced.work.size() > kMaxTracedRanks) {
      traced.work.resize(kMaxTracedRanks);
      traced.timeline.ranks.resize(kMaxTracedRanks);
      out += fmt::format("trace: ranks 0 to {} of {}\n", kMaxTracedRanks - 1, prediction.whole.world);
    }
    Result<TraceSummary> written = writePredictedTrace(traced, o.tracePath, o.common.file, *profile);
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
