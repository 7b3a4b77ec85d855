#include "api/run_preparation.h"

#include <fmt/format.h>

#include "analysis/program_check.h"

namespace hostir::api {
namespace {

// Refuses what `check` rejects, with the same report; unchecked, refuses a
// program its passes proved for another team.
void prove(const Program::Impl& source, const hostir::Program& program, const std::map<std::string, int64_t>& params,
           int64_t world, const RunPreparation& how) {
  const int64_t streams = how.pipeline.streams;
  if (!how.checked) {
    if (auto refusal = uncheckedRefusal(program, world, streams, source.path))
      throw Error(ErrorKind::Check, "the program was proved for another team", *refusal);
    return;
  }
  ProgramCheck proof = checkProgram(program, params, world, streams);
  if (proof.ok()) return;
  throw Error(
      ErrorKind::Check, summarizeFindings(proof),
      formatProgramCheck(proof, source.path, source.text) + provedForNote(program, world, streams, source.path) +
          fmt::format("{}: error: `{}` refuses a program that `{}` rejects ({}; {} skips this proof)\n", source.path,
                      how.words.run, how.words.check, summarizeFindings(proof), how.words.unchecked));
}

}  // namespace

RunRequest prepareRunRequest(const Program::Impl& source, const Bindings& bindings, const RunPreparation& how) {
  hostir::Program program = applyPipeline(source, source.program, how.passes, bindings, how.pipeline);
  std::map<std::string, int64_t> params = boundParams(source, bindings);
  prove(source, program, params, bindings.world, how);
  RunRequest request;
  request.program = std::move(program);
  request.params = std::move(params);
  request.backend = how.backend;
  request.communicator = how.communicator;
  request.seed = how.seed;
  request.streams = how.pipeline.streams;
  request.warmup = how.warmup;
  request.repeat = how.repeat;
  request.matchCommunications = !how.checked;
  request.traceSourceName = source.path;
  return request;
}

}  // namespace hostir::api
