#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "api/output_file.h"
#include "hostir/catalog.h"
#include "hostir/error.h"
#include "hostir/execution.h"
#include "hostir/program.h"
#include "tools/hostir/commands.h"

namespace hostir::tool {

namespace {

ToolError passesError(const std::string& message) {
  return ToolError{kUsageError, fmt::format("error: --passes: {}\n", message)};
}

}  // namespace

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
  if (auto error = checkPassNames(o.passes, o.api.printIrAfter, &model)) return error;
  std::string text;
  try {
    const api::Program program = api::Program::fromFile(o.file);
    api::PassOptions options = o.api;
    options.params = *settings;
    options.irDump = &std::cerr;
    if (o.remarks) options.onRemark = [](const std::string& remark) { std::cerr << remark; };
    options.onWarning = [](const std::string& warning) { std::cerr << warning; };
    text = api::applyPasses(program, o.passes, options).print();
  } catch (const api::Error& error) {
    return toolError(error);
  }
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
  api::CheckOptions options = o.api;
  options.params = *settings;
  try {
    const api::Program program = api::Program::fromFile(o.file);
    api::check(program, options);
    return fmt::format("{}: ok: program '{}' verified and race-free for {} rank(s) and {} worker stream(s)\n",
                       program.sourceName(), program.name(), o.api.ranks, o.api.streams);
  } catch (const api::Error& error) {
    return toolError(error);
  }
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
