#include "api/pass_pipeline.h"

#include <fmt/format.h>

#include "hostir/limits.h"
#include "passes/cost_oracle.h"
#include "passes/pass_manager.h"
#include "passes/race_oracle.h"

namespace hostir::api {

std::optional<std::string> pipelineProblem(const std::vector<std::string>& passes, bool hasMachine,
                                           std::string_view howToGiveOne) {
  PassManager probe;
  if (auto error = probe.addPasses(passes)) return error->message;
  if (const Pass* pass = probe.firstNeedingCostModel(); pass && !hasMachine)
    return fmt::format("pass '{}' consults the cost model: give a machine profile{}", pass->name(), howToGiveOne);
  return std::nullopt;
}

void checkMinimumGain(double minimumGain) {
  if (!(minimumGain >= kMinMinimumGain && minimumGain <= kMaxMinimumGain))
    throw plainError(ErrorKind::Usage, fmt::format("minimum gain must be a fraction in [{}, {}], got {}",
                                                   kMinMinimumGain, kMaxMinimumGain, minimumGain));
}

void checkPipeline(const std::vector<std::string>& passes, bool hasMachine) {
  if (auto problem = pipelineProblem(passes, hasMachine))
    throw plainError(ErrorKind::Usage, fmt::format("passes: {}", *problem));
}

hostir::Program applyPipeline(const ProgramSource& source, const hostir::Program& program,
                              const std::vector<std::string>& passes, const Bindings& bindings,
                              const PipelineOptions& o) {
  PassManagerOptions options;
  options.printIrAfterAll = o.printIrAfterAll;
  options.printIrAfter = o.printIrAfter;
  options.irDump = o.irDump;
  PassManager pm(options);
  if (auto error = pm.addPasses(passes)) throw plainError(ErrorKind::Usage, fmt::format("passes: {}", error->message));
  if (pm.size() == 0) return program;
  PassContext context;
  context.bindings = bindings;
  auto params = bindParams(program, bindings);
  if (!params) throw diagnosticError(ErrorKind::Program, params.error(), source.path, source.text);
  if (o.raceCheck) context.raceCheck = raceOracle(*params, bindings.world, o.streams, o.cancel);
  context.streams = o.streams;
  if (o.machine) context.predict = costOracle(o.machine, *params, bindings.world, o.streams);
  context.minimumGain = o.minimumGain;
  context.remarks = o.remarks;
  context.cancel = o.cancel;
  hostir::Program result = program;
  if (auto error = pm.run(result, context)) throw diagnosticError(ErrorKind::Program, *error, source.path, source.text);
  return result;
}

std::shared_ptr<const MachineProfile> loadMachine(const std::string& nameOrPath) {
  if (nameOrPath.empty()) return nullptr;
  Result<MachineProfile> profile = loadMachineProfile(nameOrPath);
  if (!profile) throw diagnosticError(ErrorKind::Program, profile.error(), nameOrPath);
  return std::make_shared<const MachineProfile>(std::move(*profile));
}

RemarkSink remarkSink(const ProgramSource& source, const std::function<void(const std::string&)>& onRemark,
                      const std::function<void(const std::string&)>& onWarning, std::vector<std::string>* remarks) {
  if (!onRemark && !onWarning && !remarks) return nullptr;
  return [&source, &onRemark, &onWarning, remarks](const Remark& remark) {
    std::string rendered = renderRemark(source, remark);
    if (remark.warning) {
      if (onWarning) onWarning(rendered);
      return;
    }
    if (onRemark) onRemark(rendered);
    if (remarks) remarks->push_back(std::move(rendered));
  };
}

std::string renderRemark(const ProgramSource& source, const Remark& remark) {
  std::string out = renderMessage(remark.warning ? Severity::Warning : Severity::Remark, remark.loc,
                                  fmt::format("{}: {}", remark.pass, remark.message), source.path, source.text);
  for (const Note& note : remark.notes)
    out += renderMessage(Severity::Note, note.loc, note.message, source.path, source.text);
  return out;
}

}  // namespace hostir::api
