// The `hostir` command line: opt (run passes, print the result), check
// (verify a program with its params bound), run (execute it on a team),
// simulate, tune and calibrate; tools/hostir/commands.h has each one.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <malloc.h>

#include <csignal>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "ir/thread_start.h"
#include "tools/hostir/command_line.h"

namespace hostir::tool {
namespace {

// An option that takes one value, given more than once: CLI11 says "--ranks:
// At Most 1 required but received 2", which names no mistake a user made.
std::optional<std::string> givenTwice(const CLI::ParseError& e) {
  const std::string what = e.what(), marker = ": At Most 1 required but received ";
  const size_t at = what.find(marker);
  if (!dynamic_cast<const CLI::ArgumentMismatch*>(&e) || at == std::string::npos) return std::nullopt;
  return fmt::format("error: {} is given {} times; give it once\n", what.substr(0, at),
                     what.substr(at + marker.size()));
}

// What the command was doing, for the one message that running out of memory gets.
const char* activity = "reading the command line";

int main(int argc, char** argv) {
  CommandLine cli;
  CLI::App& app = cli.app;
  // `hostir help` and `hostir help COMMAND`, as `--help` gives them.
  if (argc >= 2 && argc <= 3 && std::string_view(argv[1]) == "help") {
    if (argc == 2) {
      std::cout << app.help();
      return kSuccess;
    }
    for (CLI::App* command : app.get_subcommands({}))
      if (command->get_name() == argv[2]) {
        std::cout << command->help();
        return kSuccess;
      }
    const char* asked[] = {argv[0], argv[2]};
    std::cerr << cli.unknownCommand(2, asked).value_or(fmt::format("error: unknown command '{}'\n", argv[2]));
    return kUsageError;
  }
  if (std::optional<std::string> mistake = cli.unknownCommand(argc, argv)) {
    std::cerr << *mistake;
    return kUsageError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::optional<std::string> mistake = cli.unknownOption()) {
      std::cerr << *mistake;
      return kUsageError;
    }
    if (std::optional<std::string> twice = givenTwice(e)) {
      std::cerr << *twice;
      return kUsageError;
    }
    int code = app.exit(e);
    return code == 0 ? kSuccess : kUsageError;
  }
  if (*cli.optCmd) {
    activity = "reading the program or applying the passes";
    return runOpt(cli.opt);
  }
  if (*cli.checkCmd) {
    activity = "checking the program";
    return runCheck(cli.check);
  }
  if (*cli.simulateCmd) {
    activity = "simulating the program";
    return runSimulate(cli.simulate);
  }
  if (*cli.tuneCmd) {
    activity = "tuning the program";
    return runTune(cli.tune);
  }
  if (*cli.calibrateCmd) {
    activity = "calibrating";
    return runCalibrate(cli.calibrate);
  }
  activity = "running the program";
  return runRun(cli.run);
}

}  // namespace
}  // namespace hostir::tool

// Open MPI's collectives allocate and free message-sized temporaries on
// every call. By default glibc serves large blocks with fresh mmaps, or
// trims them off the heap's top when freed, so every call would fault in
// and zero new pages: a 32 MiB ring allreduce took three times as long in
// some jobs as in others. The tool keeps such blocks in its heap instead,
// as the CPU backend's pool keeps its own (executor/cpu/host_memory_pool.h).
void keepLargeBlocksInTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and freeing them does not shrink it
}

int main(int argc, char** argv) {
  keepLargeBlocksInTheHeap();
  // A file past the process's size limit (ulimit -f) is a write that fails
  // with EFBIG, reported as such and leaving the target as it was, not a
  // signal that kills the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return hostir::tool::main(argc, argv);
  } catch (const hostir::ResourceError& e) {
    // A thread the system would not start: a limit of the process, not a bug.
    std::cerr << "hostir: error: " << e.what() << "\n";
    return hostir::tool::kProgramError;
  } catch (const std::bad_alloc&) {
    // Memory is a resource like a file: running out is the input's size, not a bug.
    std::cerr << "hostir: error: out of memory while " << hostir::tool::activity << "\n";
    return hostir::tool::kProgramError;
  } catch (const std::exception& e) {
    // Last line of defence: an internal error is reported, never a crash.
    std::cerr << "hostir: internal error: " << e.what() << "\n";
    return hostir::tool::kInternalError;
  } catch (...) {
    std::cerr << "hostir: internal error: an unknown exception\n";
    return hostir::tool::kInternalError;
  }
}
