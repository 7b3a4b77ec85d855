// The subcommands of the `hostir` tool. Each returns the process exit code:
// 0 success, 1 a bad program or a failed run (or a race), 2 a bad command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/tool/source_program.h"
#include "hostir/verifier.h"

namespace hostir::tool {

inline constexpr int kProgramError = 1;
inline constexpr int kUsageError = 2;

struct CommonOptions {
  std::string file;
  std::vector<std::string> settings;  // NAME=INT
  int64_t ranks = 1;
  bool ranksGiven = false;
  int64_t streams = 4;
};

struct OptOptions {
  CommonOptions common;
  std::string passes;
  std::string outputPath;
  bool printIrAfterAll = false;
  std::vector<std::string> printIrAfter;
};

struct RunOptions {
  CommonOptions common;
  std::string passes;
  std::string backend = "auto";
  std::vector<std::string> inputs;   // NAME=FILE.npy
  std::vector<std::string> outputs;  // NAME=FILE.npy
  uint64_t seed = 0;
  bool check = false;
  int warmup = 0;
  int repeat = 0;  // 0: one untimed run
  bool raceCheck = false;
  uint32_t injectDelaysMicros = 0;
  double commTimeoutSeconds = 300;
  std::string tracePath;  // Chrome trace of the last run
  int coresPerRank = 0;   // 0: this node's cores / its ranks
};

int runOpt(const OptOptions& options);
int runCheck(const CommonOptions& options);
int runRun(const RunOptions& options);

// Verifies with the params bound; prints the error against the file.
bool verifyBound(const SourceProgram& source, const Program& program, const Bindings& bindings);

// Checks the pass names of a pipeline and of --print-ir-after; prints errors.
bool checkPassNames(const std::string& pipeline, const std::vector<std::string>& printAfter = {});

// Applies `pipeline` (verifying after each pass); prints errors; nullopt on failure.
std::optional<Program> applyPasses(const SourceProgram& source, const Program& program, const std::string& pipeline,
                                   const Bindings& bindings, bool printAfterAll = false,
                                   const std::vector<std::string>& printAfter = {});

}  // namespace hostir::tool
