// The `hostir` command line: its subcommands, their options and the
// structs they fill (commands.h), built in one place so that the binary and
// the tests parse exactly the same thing.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "tools/hostir/commands.h"

namespace hostir::tool {

struct CommandLine {
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App app{
      "hostir: run host-IR programs (GEMMs and collectives on several streams) on every rank of a team.\n"
      "The language is described in docs/hostir-language.md."};
  OptOptions opt;
  CheckOptions check;
  RunOptions run;
  SimulateOptions simulate;
  CalibrateOptions calibrate;
  TuneOptions tune;
  CLI::App* optCmd = nullptr;
  CLI::App* checkCmd = nullptr;
  CLI::App* runCmd = nullptr;
  CLI::App* simulateCmd = nullptr;
  CLI::App* calibrateCmd = nullptr;
  CLI::App* tuneCmd = nullptr;

  // `hostir --version`: the version and the backends built in.
  static std::string versionText();
  // The message for a first word that names no command ("error: unknown
  // command 'runn'; did you mean 'run'?"); nullopt when it names one or is an option.
  std::optional<std::string> unknownCommand(int argc, const char* const* argv) const;
  // After a failed parse: the first unknown option of the command given,
  // with the closest valid one; nullopt when the parse failed otherwise.
  std::optional<std::string> unknownOption() const;

 private:
  // One subcommand's options each.
  void addOpt();
  void addCheck();
  void addRun();
  void addRunControls();
  void addSimulate();
  void addCalibrate();
  void addTune();
};

// Every option of `cmd` but --help, as parsed: its name and the values
// given (repeatable ones sorted), or its default when it was not given.
std::vector<GivenOption> givenOptions(const CLI::App& cmd);

}  // namespace hostir::tool
