#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "api/output_file.h"
#include "api/pass_pipeline.h"
#include "hostir/catalog.h"
#include "hostir/execution.h"
#include "ir/printer.h"
#include "tools/hostir/commands.h"

namespace hostir::tool {

ToolStatus checkParameterNames(const SourceProgram& source, const Bindings& bindings) {
  // A --set that names no parameter is a mistake of the command line, not of the program.
  if (auto params = bindParams(source.program, bindings); !params)
    return ToolError{kUsageError, renderDiagnostic(params.error(), source.path, source.text)};
  return std::nullopt;
}

ToolStatus verifyBound(const SourceProgram& source, const Program& program, const Bindings& bindings) {
  if (auto error = checkParameterNames(source, bindings)) return error;
  if (auto error = verifyProgram(program, bindings)) return programError(source, *error);
  return std::nullopt;
}

namespace {

ToolError passesError(const std::string& message) {
  return ToolError{kUsageError, fmt::format("error: --passes: {}\n", message)};
}

}  // namespace

ToolResult<std::shared_ptr<const MachineProfile>> loadModel(const ModelOptions& model) {
  try {
    return api::loadMachine(model.machine);
  } catch (const api::Error& error) {
    return toolError(error);
  }
}

ToolResult<Program> applyPasses(const SourceProgram& source, const Program& program,
                                const std::vector<std::string>& passes, const Bindings& bindings,
                                api::PipelineOptions options, std::ostream* remarksTo) {
  if (remarksTo) options.remarks = [&](const Remark& remark) { *remarksTo << api::renderRemark(source, remark); };
  try {
    return api::applyPipeline(source, program, passes, bindings, options);
  } catch (const api::Error& error) {
    // Checked before (checkPassNames): a bad pipeline here is still a bad program run.
    ToolError failure = toolError(error);
    failure.exitCode = kProgramError;
    return failure;
  }
}

// Checks the pipeline's and --print-ir-after's pass names before any work.
ToolStatus checkPassNames(const std::vector<std::string>& passes, const std::vector<std::string>& printAfter,
                          const ModelOptions* model) {
  if (auto problem = api::pipelineProblem(passes, model && !model->machine.empty(), " with --machine"))
    return passesError(*problem);
  const std::vector<std::string> known = api::passNames();
  for (const std::string& name : printAfter)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return ToolError{kUsageError, fmt::format("error: --print-ir-after: unknown pass '{}'\n", name)};
  return std::nullopt;
}

namespace {

// The steps of `opt`; what it prints on success is the program (to `-o`
// or stdout), and the IR dumps and remarks go to stderr as the passes run.
ToolStatus opt(const OptOptions& o) {
  auto settings = parseSettings(o.settings);
  if (!settings) return settings.error();
  const ModelOptions model = o.model();
  if (auto error = checkPassNames(o.passes, o.printIrAfter, &model)) return error;
  auto machine = loadModel(model);
  if (!machine) return machine.error();
  auto source = loadProgram(o.file);
  if (!source) return source.error();
  Bindings bindings{*settings, o.api.ranks};
  if (auto error = verifyBound(*source, source->program, bindings)) return error;
  api::PipelineOptions passOptions;
  passOptions.streams = o.api.streams;
  passOptions.printIrAfterAll = o.printIrAfterAll;
  passOptions.printIrAfter.insert(o.printIrAfter.begin(), o.printIrAfter.end());
  passOptions.irDump = &std::cerr;
  passOptions.machine = *machine;
  passOptions.minimumGain = o.api.minimumGain;
  auto program =
      applyPasses(*source, source->program, o.passes, bindings, passOptions, o.remarks ? &std::cerr : nullptr);
  if (!program) return program.error();
  std::string text = printProgram(*program);
  if (o.outputPath.empty() || o.outputPath == "-") {
    std::cout << text;
    return std::nullopt;
  }
  if (auto failed = writeOutputFile(o.outputPath, text))
    return ToolError{kProgramError, fmt::format("{}: error: cannot write the output: {}\n", o.outputPath, *failed)};
  return std::nullopt;
}

// The steps of `check`: the verdict on success, or the findings as the error.
ToolResult<std::string> check(const CheckOptions& o) {
  auto settings = parseSettings(o.settings);
  if (!settings) return settings.error();
  auto source = loadProgram(o.file);
  if (!source) return source.error();
  if (auto error = checkParameterNames(*source, Bindings{*settings, o.api.ranks})) return *error;
  const std::string name = source->program.name, path = source->path;
  api::CheckOptions options = o.api;
  options.params = *settings;
  try {
    api::check(api::Program(std::make_shared<const api::Program::Impl>(api::Program::Impl{std::move(*source)})),
               options);
  } catch (const api::Error& error) {
    return toolError(error);
  }
  return fmt::format("{}: ok: program '{}' verified and race-free for {} rank(s) and {} worker stream(s)\n", path, name,
                     o.api.ranks, o.api.streams);
}

}  // namespace

int runOpt(const OptOptions& o) {
  if (ToolStatus error = opt(o)) {
    std::cerr << error->text;
    return error->exitCode;
  }
  return kSuccess;
}

int runCheck(const CheckOptions& o) {
  ToolResult<std::string> verdict = check(o);
  if (!verdict) {
    std::cerr << verdict.error().text;
    return verdict.error().exitCode;
  }
  std::cout << *verdict;
  return kSuccess;
}

}  // namespace hostir::tool
