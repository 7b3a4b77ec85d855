#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "executor/program_check.h"
#include "executor/race_check.h"
#include "executor/race_oracle.h"
#include "executor/tool/commands.h"
#include "hostir/printer.h"
#include "passes/pass_manager.h"

namespace hostir::tool {

bool verifyBound(const SourceProgram& source, const Program& program, const Bindings& bindings) {
  if (auto error = verifyProgram(program, bindings)) {
    source.report(*error);
    return false;
  }
  return true;
}

namespace {

// Prints a remark and its notes against the program's file.
void printRemark(const SourceProgram& source, const Remark& remark) {
  std::string out = renderMessage(Severity::Remark, remark.loc, fmt::format("{}: {}", remark.pass, remark.message),
                                  source.path, source.text);
  for (const Note& note : remark.notes)
    out += renderMessage(Severity::Note, note.loc, note.message, source.path, source.text);
  std::cerr << out;
}

}  // namespace

std::optional<Program> applyPasses(const SourceProgram& source, const Program& program, const std::string& pipeline,
                                   const Bindings& bindings, const ApplyPassesOptions& o) {
  PassManagerOptions options;
  options.printIrAfterAll = o.printIrAfterAll;
  options.printIrAfter.insert(o.printIrAfter.begin(), o.printIrAfter.end());
  options.irDump = &std::cerr;
  PassManager pm(options);
  if (!pipeline.empty()) {
    if (auto error = pm.addPipeline(pipeline)) {
      std::cerr << fmt::format("error: --passes: {}\n", error->message);
      return std::nullopt;
    }
  }
  PassContext context;
  context.bindings = bindings;
  if (o.raceCheck && pm.size() > 0) {
    auto params = bindParams(program, bindings);
    if (!params) {
      source.report(params.error());
      return std::nullopt;
    }
    context.raceCheck = raceOracle(std::move(*params), bindings.world, o.streams);
  }
  if (o.printRemarks) context.remarks = [&](const Remark& remark) { printRemark(source, remark); };
  Program result = program;
  if (auto error = pm.run(result, context)) {
    source.report(*error);
    return std::nullopt;
  }
  return result;
}

// Checks the pipeline's and --print-ir-after's pass names before any work.
bool checkPassNames(const std::string& pipeline, const std::vector<std::string>& printAfter) {
  if (!pipeline.empty()) {
    PassManager probe;
    if (auto error = probe.addPipeline(pipeline)) {
      std::cerr << fmt::format("error: --passes: {}\n", error->message);
      return false;
    }
  }
  for (const std::string& name : printAfter) {
    bool known = false;
    for (const PassInfo& info : registeredPasses()) known |= info.name == name;
    if (!known) {
      std::cerr << fmt::format("error: --print-ir-after: unknown pass '{}'\n", name);
      return false;
    }
  }
  return true;
}

int runOpt(const OptOptions& o) {
  auto settings = parseSettings(o.common.settings);
  if (!settings || !checkPassNames(o.passes, o.printIrAfter)) return kUsageError;
  auto source = loadProgram(o.common.file);
  if (!source) return kProgramError;
  Bindings bindings{*settings, o.common.ranks};
  if (!verifyBound(*source, source->program, bindings)) return kProgramError;
  ApplyPassesOptions passOptions;
  passOptions.streams = o.common.streams;
  passOptions.printRemarks = o.remarks;
  passOptions.printIrAfterAll = o.printIrAfterAll;
  passOptions.printIrAfter = o.printIrAfter;
  auto program = applyPasses(*source, source->program, o.passes, bindings, passOptions);
  if (!program) return kProgramError;
  std::string text = printProgram(*program);
  if (o.outputPath.empty() || o.outputPath == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(o.outputPath, std::ios::binary);
  out << text;
  if (!out.flush()) {
    std::cerr << fmt::format("{}: error: cannot write the output\n", o.outputPath);
    return kProgramError;
  }
  return 0;
}

int runCheck(const CommonOptions& o) {
  auto settings = parseSettings(o.settings);
  if (!settings) return kUsageError;
  auto source = loadProgram(o.file);
  if (!source) return kProgramError;
  Bindings bindings{*settings, o.ranks};
  if (!verifyBound(*source, source->program, bindings)) return kProgramError;
  ProgramCheck check = checkProgram(source->program, *bindParams(source->program, bindings), o.ranks, o.streams);
  if (!check.ok()) {
    std::cerr << formatProgramCheck(check, o.file, source->text);
    std::cerr << fmt::format("{}: {} found with {} worker stream{}\n", o.file, summarizeFindings(check), o.streams,
                             o.streams == 1 ? "" : "s");
    return kProgramError;
  }
  std::cout << fmt::format("{}: ok: program '{}' verified and race-free for {} rank(s) and {} worker stream(s)\n",
                           o.file, source->program.name, o.ranks, o.streams);
  return 0;
}

}  // namespace hostir::tool
