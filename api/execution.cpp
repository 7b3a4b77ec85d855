// check, simulate and run for in-process teams; the run's request is built
// here for runOnMpi too (api/run_request.h).
#include "hostir/execution.h"
#include "hostir/executable.h"
#include "hostir/runtime.h"

#include <fmt/format.h>

#include <cstring>

#include "analysis/program_check.h"
#include "api/backend_choice.h"
#include "api/dtype_conversion.h"
#include "api/findings.h"
#include "api/machine_impl.h"
#include "api/output_comparison.h"
#include "api/pass_pipeline.h"
#include "api/predicted_trace.h"
#include "api/program_impl.h"
#include "api/program_prediction.h"
#include "api/run_preparation.h"
#include "api/run_request.h"
#include "executor/host_tensor.h"
#include "ir/cancellation.h"

namespace hostir::api {

void check(const Program& program, const CheckOptions& options) {
  checkStreams(options.streams);
  const BoundProgram bound = verifiedProgram(program.impl(), options.params, options.ranks);
  const ProgramSource& source = bound.source;
  const Bindings& bindings = bound.bindings;
  ProgramCheck found = checkProgram(source.program, boundParams(source, bindings), options.ranks, options.streams);
  if (!found.ok()) {
    std::string closing = provedForNote(source.program, options.ranks, options.streams, source.path) +
                          fmt::format("{}: {} found with {} worker stream{}\n", source.path, summarizeFindings(found),
                                      options.streams, options.streams == 1 ? "" : "s");
    throw checkError(summarizeFindings(found), formatProgramCheck(found, source.path, source.text), closing,
                     source.path);
  }
}

namespace {

// The profile as this run's communicator prices it (MachineProfile::communicationCarrier).
std::shared_ptr<const MachineProfile> withCommunicator(const std::shared_ptr<const MachineProfile>& profile,
                                                       const std::string& communicator) {
  if (communicator == "auto" || communicator == "nccl") return profile;
  if (communicator != "copy-engine")
    throw plainError(ErrorKind::Usage,
                     fmt::format("unknown communicator '{}' (expected auto, nccl or copy-engine)", communicator));
  auto onCopyEngines = std::make_shared<MachineProfile>(*profile);
  onCopyEngines->communicationCarrier = CommunicationCarrier::CopyEngines;
  return onCopyEngines;
}

}  // namespace

Prediction simulate(const Program& program, const std::string& machine, const SimulateOptions& options) {
  return simulate(program, Machine::load(machine), options);
}

Prediction simulate(const Program& program, const Machine& machine, const SimulateOptions& options) {
  checkStreams(options.streams);
  checkPipeline(options.passes, true);
  checkMinimumGain(options.minimumGain);
  const BoundProgram bound = verifiedProgram(program.impl(), options.params, options.ranks);
  const ProgramSource& source = bound.source;
  const Bindings& bindings = bound.bindings;
  const std::shared_ptr<const MachineProfile> profile = withCommunicator(machine.impl().profile, options.communicator);
  PipelineOptions pipelineOptions;
  pipelineOptions.streams = options.streams;
  pipelineOptions.machine = profile;
  pipelineOptions.minimumGain = options.minimumGain;
  std::vector<std::string> schedules;
  pipelineOptions.remarks = [&schedules,
                             forward = remarkSink(source, options.onRemark, options.onWarning)](const Remark& remark) {
    if (!remark.schedule.empty()) schedules.push_back(fmt::format("line {}: {}", remark.loc.line, remark.schedule));
    if (forward) forward(remark);
  };
  hostir::Program rewritten = applyPipeline(source, source.program, options.passes, bindings, pipelineOptions);
  ProgramPrediction p = predictProgram(source, rewritten, bindings, options.streams, *profile);
  // A zero is +0: a -0 would print as "-0.00".
  auto figure = [](double value) { return value + 0.0; };
  Prediction out;
  out.machineName = profile->name;
  out.medianMs = figure(p.seconds() * 1e3);
  out.computeMs = figure(p.computeSeconds * 1e3);
  out.commMs = figure(p.communicationSeconds * 1e3);
  out.exposedCommMs = figure(p.exposedCommunicationSeconds() * 1e3);
  out.overlapEfficiency = figure(p.overlapEfficiency());
  out.schedules = std::move(schedules);
  out.assumptions = p.assumptions(profile->name);
  // What the profile's measured spreads allow: every figure at one end.
  if (hasSpread(*profile)) {
    out.fastMs = predictProgram(source, rewritten, bindings, options.streams, atSpreadEdge(*profile, SpreadEdge::Fast))
                     .seconds() *
                 1e3;
    out.slowMs = predictProgram(source, rewritten, bindings, options.streams, atSpreadEdge(*profile, SpreadEdge::Slow))
                     .seconds() *
                 1e3;
  }
  out.variantSlowerThanWhole = p.variantSlowerThanWhole();
  out.slowerThanSerial = p.slowerThanSerial();
  out.hostMs = p.whole.timeline.ranks[0].hostEnd * 1e3;
  for (double seconds : streamBusySeconds(p.whole, 0)) out.streamBusyMs.push_back(seconds * 1e3);
  out.symmetric = p.whole.symmetric;
  if (!options.tracePath.empty()) {
    Simulation traced = p.whole;
    if (traced.work.size() > kMaxTracedRanks) {
      traced.work.resize(kMaxTracedRanks);
      traced.timeline.ranks.resize(kMaxTracedRanks);
    }
    Result<TraceSummary> written = writePredictedTrace(traced, options.tracePath, source.path, *profile);
    if (!written) throw plainError(ErrorKind::Program, written.error().message);
    out.tracedRanks = static_cast<int64_t>(traced.work.size());
    out.traceBytes = written->bytes;
  }
  return out;
}

namespace {

// The declaration `name` of `kind`, and that `buffer` matches its dtype and global shape.
const TensorSpec& matchingSpec(const std::vector<TensorSpec>& specs, const std::string& name, const HostBuffer& buffer,
                               std::string_view kind) {
  const TensorSpec* spec = nullptr;
  for (const TensorSpec& candidate : specs)
    if (candidate.name == name) spec = &candidate;
  if (!spec) throw plainError(ErrorKind::Usage, fmt::format("the program has no {} named '{}'", kind, name));
  std::vector<int64_t> global = spec->globalShape.vector();
  if (internalDType(buffer.dtype) != spec->dtype || buffer.shape != global)
    throw plainError(ErrorKind::Usage,
                     fmt::format("{} '{}': the buffer is {}[{}], the program declares {}[{}] (global)", kind, name,
                                 toString(buffer.dtype), fmt::join(buffer.shape, ", "), dtypeName(spec->dtype),
                                 fmt::join(global, ", ")));
  if (!buffer.data && buffer.elements() > 0)
    throw plainError(ErrorKind::Usage, fmt::format("{} '{}': the buffer's data is null", kind, name));
  return *spec;
}

}  // namespace

namespace {

// The serial reference runs on the host alone.
void checkReference(const RunOptions& options) {
  if (!options.reference) return;
  if (options.backend != "auto" && options.backend != "cpu")
    throw plainError(ErrorKind::Usage,
                     fmt::format("reference: the serial reference runs on the CPU backend, not '{}'", options.backend));
  if (options.graph) throw plainError(ErrorKind::Usage, "reference: the serial reference is not captured; drop graph");
  if (options.mainStream)
    throw plainError(ErrorKind::Usage, "reference: the serial reference runs on the host; drop mainStream");
}

}  // namespace

PreparedRun prepareRun(const Program& program, const RunOptions& options, const TeamPlace& team,
                       const RunWords& words) {
  checkRunOptions(options);
  checkReference(options);
  RunSetting setting;
  setting.backend = options.reference ? chooseRunBackend("cpu", "auto", team)
                                      : chooseRunBackend(options.backend, options.communicator, team);
  setting.team = team;
  setting.words = words;
  checkPipeline(options.passes, !options.machine.empty());
  const BoundProgram bound = verifiedProgram(program.impl(), options.params, team.world);
  const ProgramSource& source = bound.source;
  const Bindings& bindings = bound.bindings;
  setting.machine = loadMachine(options.machine);
  PreparedRun prepared;
  try {
    prepared.request = prepareRunRequest(source, bindings, options, setting);
  } catch (const Cancelled&) {
    throw plainError(ErrorKind::Run, "the run was cancelled");
  }
  RunRequest& request = prepared.request;
  request.values = bound.values;
  if (options.reference) {
    request.backend.cpu.reference = true;
    request.matchCommunications = false;  // one stream per rank, in issue order: matched by construction
  }
  Evaluator evaluator(request.program, request.params, 0, team.world);
  prepared.inputs = evaluator.inputs();
  prepared.outputs = evaluator.outputs();
  // The caller's program outlives the run; the bound copy has its path and text.
  request.describeFailure = [&original = program.impl()](const Diagnostic& diag) {
    return renderDiagnostic(diag, original.path, original.text);
  };
  return prepared;
}

std::map<std::string, HostTensorRef> checkedInputs(const PreparedRun& prepared,
                                                   const std::map<std::string, HostBuffer>& inputs,
                                                   const std::map<std::string, HostBuffer>& outputs, bool fillMissing) {
  std::map<std::string, HostTensorRef> refs;
  for (const auto& [name, buffer] : inputs) {
    const TensorSpec& spec = matchingSpec(prepared.inputs, name, buffer, "input");
    refs[name] = HostTensorRef{spec.dtype, buffer.shape, static_cast<const std::byte*>(buffer.data)};
  }
  for (const auto& [name, buffer] : outputs) matchingSpec(prepared.outputs, name, buffer, "output");
  // None given: every input is seeded (a quick try). Some given: a missing
  // one is a mistake (an input generator that forgot a tensor), unless asked.
  if (fillMissing || inputs.empty()) return refs;
  std::vector<std::string> missing;
  for (const TensorSpec& spec : prepared.inputs)
    if (!inputs.count(spec.name)) missing.push_back(fmt::format("'{}'", spec.name));
  const bool one = missing.size() == 1;
  if (!missing.empty())
    throw plainError(ErrorKind::Usage,
                     fmt::format("{} {} {} missing: give every input, or none (each is then filled from the seed), or "
                                 "fill the missing ones from the seed (fillMissingInputs; Python: fill_missing=True)",
                                 one ? "input" : "inputs", fmt::join(missing, ", "), one ? "is" : "are"));
  return refs;
}

RunStats finishRun(const Program& program, Result<RunResult> result) {
  const ProgramSource& source = program.impl();
  if (!result) throw diagnosticError(ErrorKind::Run, result.error(), source.path, source.text);
  RunStats stats{.runMillis = result->runMillis,
                 .issueMillis = result->issueMillis,
                 .peakMemoryBytes = result->peakMemoryBytes.value_or(0)};
  if (result->trace) {
    if (!*result->trace) throw diagnosticError(ErrorKind::Run, result->trace->error(), source.path, source.text);
    stats.traceBytes = result->trace->value().bytes;
    stats.traceTruncated = result->trace->value().truncated;
    stats.traceDroppedOperations = result->trace->value().droppedOperations;
  }
  for (const RaceReport& race : result->races) stats.races.push_back(formatRace(race, source.path, source.text));
  for (const auto& [name, copies] : result->copies)
    if (std::optional<std::string> disagreement = compareCopies(name, copies))
      stats.replicaDisagreements.push_back(std::move(*disagreement));
  return stats;
}

RunStats run(const Program& program, const std::map<std::string, HostBuffer>& inputs,
             const std::map<std::string, HostBuffer>& outputs, const RunOptions& options) {
  return Executable(program, options).run(inputs, outputs);
}

}  // namespace hostir::api
