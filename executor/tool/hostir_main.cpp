// The `hostir` command line: opt (run passes, print the result) and check
// (verify a program with its params bound).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "executor/tool/source_program.h"
#include "hostir/printer.h"
#include "hostir/verifier.h"
#include "passes/pass_manager.h"

namespace hostir {
namespace {

// Exit codes: 0 success, 1 a bad program (or a race), 2 a bad command line.
constexpr int kProgramError = 1;
constexpr int kUsageError = 2;

struct CommonOptions {
  std::string file;
  std::vector<std::string> settings;
  int64_t ranks = 1;
  int64_t streams = 4;
};

void addCommonOptions(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("file", o.file, "The .hir program")->required();
  cmd.add_option("--set", o.settings, "Bind a parameter, e.g. --set M=1024 (repeatable)")->type_name("NAME=INT");
  cmd.add_option("--ranks", o.ranks, "Team size the shapes are checked for")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.add_option("--streams", o.streams, "Size of the worker stream pool (stream(e) is slot e mod P)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
}

// Verifies with the params bound; prints the error against the file.
bool verifyBound(const SourceProgram& source, const Program& program, const Bindings& bindings, std::string_view when) {
  if (auto error = verifyProgram(program, bindings)) {
    if (!when.empty()) error->message = fmt::format("{}: {}", when, error->message);
    source.report(*error);
    return false;
  }
  return true;
}

int runOpt(const CommonOptions& common, const std::string& passes, const std::string& outputPath, bool printAfterAll,
           const std::vector<std::string>& printAfter) {
  auto settings = parseSettings(common.settings);
  if (!settings) return kUsageError;
  auto source = loadProgram(common.file);
  if (!source) return kProgramError;
  Bindings bindings{*settings, common.ranks};
  if (!verifyBound(*source, source->program, bindings, "")) return kProgramError;

  PassManagerOptions options;
  options.printIrAfterAll = printAfterAll;
  options.printIrAfter.insert(printAfter.begin(), printAfter.end());
  options.irDump = &std::cerr;
  options.verifyAfterEach = [&](const Program& p) { return verifyProgram(p, bindings); };
  PassManager pm(options);
  if (!passes.empty()) {
    if (auto error = pm.addPipeline(passes)) {
      std::cerr << fmt::format("error: --passes: {}\n", error->message);
      return kUsageError;
    }
  }
  for (const std::string& name : printAfter) {
    bool known = false;
    for (const PassInfo& info : registeredPasses()) known |= info.name == name;
    if (!known) {
      std::cerr << fmt::format("error: --print-ir-after: unknown pass '{}'\n", name);
      return kUsageError;
    }
  }
  Program program = source->program;
  if (auto error = pm.run(program)) {
    source->report(*error);
    return kProgramError;
  }
  std::string text = printProgram(program);
  if (outputPath.empty() || outputPath == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(outputPath, std::ios::binary);
  out << text;
  if (!out.flush()) {
    std::cerr << fmt::format("{}: error: cannot write the output\n", outputPath);
    return kProgramError;
  }
  return 0;
}

int runCheck(const CommonOptions& common) {
  auto settings = parseSettings(common.settings);
  if (!settings) return kUsageError;
  auto source = loadProgram(common.file);
  if (!source) return kProgramError;
  if (!verifyBound(*source, source->program, Bindings{*settings, common.ranks}, "")) return kProgramError;
  std::cout << fmt::format("{}: ok: program '{}' verified for {} rank(s)\n", common.file, source->program.name,
                           common.ranks);
  return 0;
}

std::string passList() {
  std::string out = "Passes:\n";
  for (const PassInfo& info : registeredPasses()) out += fmt::format("  {:<18} {}\n", info.name, info.summary);
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"hostir: run host-IR programs (GEMMs and collectives on several streams) on every rank of a team.\n"
               "The language is described in docs/hostir-language.md."};
  app.require_subcommand(1);
  app.footer("Examples:\n"
             "  hostir opt examples/row_parallel_linear.hir --passes assign-streams\n"
             "  hostir check examples/row_parallel_linear.hir --set M=1024 --ranks 2");

  CommonOptions optCommon;
  std::string passes, outputPath;
  bool printAfterAll = false;
  std::vector<std::string> printAfter;
  CLI::App* opt = app.add_subcommand("opt", "Run passes over a program and print the result (like mlir-opt)");
  addCommonOptions(*opt, optCommon);
  opt->add_option("--passes", passes, "Comma-separated pass pipeline, e.g. assign-streams")->type_name("PASS[,PASS...]");
  opt->add_option("-o,--output", outputPath, "Write the result here instead of standard output")->type_name("FILE");
  opt->add_flag("--print-ir-after-all", printAfterAll, "Print the program to stderr after every pass");
  opt->add_option("--print-ir-after", printAfter, "Print the program to stderr after the named pass")
      ->type_name("PASS")->delimiter(',');
  opt->footer(passList());

  CommonOptions checkCommon;
  CLI::App* check = app.add_subcommand("check", "Parse and verify a program with its parameters bound");
  addCommonOptions(*check, checkCommon);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }
  if (*opt) return runOpt(optCommon, passes, outputPath, printAfterAll, printAfter);
  return runCheck(checkCommon);
}

}  // namespace
}  // namespace hostir

int main(int argc, char** argv) {
  try {
    return hostir::main(argc, argv);
  } catch (const std::exception& e) {
    // Last line of defence: an internal error is reported, never a crash.
    std::cerr << "hostir: internal error: " << e.what() << "\n";
    return 70;
  }
}
