#include "api/program_prediction.h"

#include <fmt/format.h>

#include <tuple>
#include <utility>

#include "analysis/program_check.h"
#include "api/findings.h"
#include "api/pass_pipeline.h"

namespace hostir::api {

ProgramPrediction predictProgram(const ProgramSource& source, const hostir::Program& program, const Bindings& bindings,
                                 int64_t streams, const MachineProfile& machine) {
  auto params = boundParams(source, bindings);
  // boundParams binds against the source's declarations; the program after
  // passes has the same parameters.
  ProgramCheck check = checkProgram(program, params, bindings.world, streams);
  if (!check.ok()) {
    throw checkError(summarizeFindings(check), formatProgramCheck(check, source.path, source.text),
                     fmt::format("{}: refusing to simulate: {}\n", source.path, summarizeFindings(check)), source.path);
  }

  auto simulateVariant = [&](const hostir::Program& variant) {
    Result<Simulation> simulation = simulateProgram(variant, params, bindings.world, streams, machine);
    if (!simulation) throw diagnosticError(ErrorKind::Program, simulation.error(), source.path, source.text);
    return std::move(*simulation);
  };
  ProgramPrediction prediction;
  prediction.whole = simulateVariant(program);
  // The variants need no race proof: removing work orders nothing differently.
  PipelineOptions variantOptions;
  variantOptions.raceCheck = false;
  variantOptions.streams = streams;
  // A part the program does not have costs nothing: the host's issue time
  // of the statements left in its variant is not communication (or compute).
  bool communicates = false, computes = false;
  for (const RankWork& rank : prediction.whole.work)
    for (const WorkItem& item : rank.items) {
      communicates |= item.kind == WorkItem::Kind::Communication;
      computes |= item.kind == WorkItem::Kind::Compute || item.kind == WorkItem::Kind::Memory;
    }
  for (auto [pass, seconds, present] : {std::tuple{"strip-communication", &prediction.computeSeconds, computes},
                                        std::tuple{"strip-compute", &prediction.communicationSeconds, communicates}}) {
    if (!present) continue;
    hostir::Program variant = applyPipeline(source, program, {pass}, bindings, variantOptions);
    *seconds = simulateVariant(variant).seconds();
  }
  return prediction;
}

}  // namespace hostir::api
