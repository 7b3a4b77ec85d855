#include "api/run_preparation.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/program_check.h"
#include "api/findings.h"
#include "api/trace_file.h"
#include "executor/backend_registry.h"
#include "hostir/run_option_table.h"
#include "hostir/runtime.h"
#include "passes/operation_names.h"

namespace hostir::api {
namespace {

// Refuses what `check` rejects, with the same report; unchecked, refuses a
// program its passes proved for another team.
void prove(const ProgramSource& source, const hostir::Program& program, const std::map<std::string, int64_t>& params,
           int64_t world, const RunOptions& options, const RunWords& words) {
  const int64_t streams = options.streams;
  if (!options.checked) {
    if (auto refusal = uncheckedRefusal(program, world, streams, source.path))
      throw Error(ErrorKind::Check, "the program was proved for another team", *refusal);
    return;
  }
  ProgramCheck proof = checkProgram(program, params, world, streams, options.cancel);
  if (proof.ok()) return;
  throw checkError(summarizeFindings(proof), formatProgramCheck(proof, source.path, source.text),
                   provedForNote(program, world, streams, source.path) +
                       fmt::format("{}: error: `{}` refuses a program that `{}` rejects ({}; {} skips this proof)\n",
                                   source.path, words.run, words.check, summarizeFindings(proof), words.unchecked),
                   source.path);
}

// A CUDA graph captures device work: refused on the CPU, and with what
// observes each operation as it is issued, which a replay does not.
void checkGraphCapture(const RunOptions& options, const BackendChoice& backend) {
  if (!options.graph) return;
  if (!backendEntry(backend.kind).device) {
    // Why no device backend could have run it, as far as can be told cheaply.
    std::string why = "the run uses the CPU backend";
    for (const BackendEntry* entry : registeredBackends())
      if (entry->device && entry->unavailableBeforeLoading)
        if (std::optional<std::string> problem = entry->unavailableBeforeLoading()) why = *problem;
    throw plainError(ErrorKind::Usage,
                     fmt::format("graph: a CUDA graph captures device work, and this run has none ({})", why));
  }
  if (!options.tracePath.empty())
    throw plainError(ErrorKind::Usage,
                     "graph: a trace times each operation as it is issued, and a replayed graph issues none; "
                     "drop the trace or graph");
  if (options.raceCheck)
    throw plainError(ErrorKind::Usage,
                     "graph: the race check observes each operation as it is issued, and a replayed graph issues "
                     "none; drop the race check or graph");
}

}  // namespace

BackendOptions backendOptions(const RunOptions& options, const BackendChoice& choice, const TeamPlace& team) {
  BackendOptions backend;
  backend.kind = choice.kind;
  backend.communicator = choice.communicator;
  backend.streams = options.streams;
  backend.graph = options.graph;
  backend.commTimeout = std::chrono::milliseconds(static_cast<int64_t>(options.commTimeoutSeconds * 1000));
  backend.cpu.coresPerRank = resolveCoresPerRank(options.coresPerRank, team.ranksOnNode);
  // The caller's stream (refused when destroyed or its runtime reset).
  if (options.mainStream) backend.externalMainStream = options.mainStream->nativeHandle();
  return backend;
}

void checkRunOptions(const RunOptions& options) { checkRunOptionBounds(options); }

RunRequest prepareRunRequest(const ProgramSource& source, const Bindings& bindings, const RunOptions& options,
                             const RunSetting& setting) {
  checkGraphCapture(options, setting.backend);
  PipelineOptions pipeline;
  pipeline.streams = options.streams;
  pipeline.machine = setting.machine;
  pipeline.minimumGain = options.minimumGain;
  pipeline.remarks = remarkSink(source, options.onRemark, options.onWarning);
  pipeline.cancel = options.cancel;
  hostir::Program program = applyPipeline(source, source.program, options.passes, bindings, pipeline);
  std::map<std::string, int64_t> params = boundParams(source, bindings);
  prove(source, program, params, bindings.world, options, setting.words);
  RunRequest request;
  const std::set<std::string> written = buffersWrittenBy(program.body);
  for (const Decl& decl : program.decls)
    if (decl.kind == DeclKind::Input && !written.count(decl.name)) request.inputsReadInPlace.insert(decl.name);
  request.program = std::move(program);
  request.params = std::move(params);
  request.seed = options.seed;
  request.backend = backendOptions(options, setting.backend, setting.team);
  request.warmup = options.warmup;
  request.repeat = std::max(options.repeat, 1);  // 0: one run
  request.matchCommunications = !options.checked;
  request.traceSourceName = source.path;
  request.cancel = options.cancel;
  if (!options.tracePath.empty()) request.writeTrace = teamTraceWriter(options.tracePath);
  request.traceLimitBytes = options.traceLimitMiB << 20;
  request.raceCheck = options.raceCheck;
  request.backend.cpu.delays = {options.injectDelaysMicros, options.seed};
  return request;
}

}  // namespace hostir::api
