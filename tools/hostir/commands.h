// The subcommands of the `hostir` tool. Each returns the process exit code
// (exit_codes.h): 0 success, 1 a bad program or a failed run (or a race), 2
// a bad command line. The steps they share return their errors as values;
// each command prints them, at one place.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "hostir/calibration.h"
#include "hostir/defaults.h"
#include "hostir/execution.h"
#include "hostir/program.h"
#include "tools/hostir/exit_codes.h"
#include "tools/hostir/settings.h"

namespace hostir::tool {

// `hostir check`: the API's check options (ranks, streams; api.params are
// bound from --set while preparing) and the file.
struct CheckOptions {
  std::string file;
  std::vector<std::string> settings;  // --set NAME=VALUE
  bool ranksGiven = false;
  api::CheckOptions api;
};

// The cost model that passes such as `overlap` consult.
struct ModelOptions {
  std::string machine;                       // --machine: a shipped profile's name or a profile file; empty: none
  double minimumGain = kDefaultMinimumGain;  // --min-gain: the predicted gain a scheduling change must reach
};

// `hostir opt`: the API's pass options (ranks, streams, machine, minimum
// gain, the IR dumps), the pipeline, and what only the command line has.
struct OptOptions {
  std::string file;
  std::vector<std::string> settings;  // --set NAME=VALUE
  bool ranksGiven = false;
  api::PassOptions api;
  std::vector<std::string> passes;  // the pipeline, pass by pass (--passes a,b)
  std::string outputPath;
  bool remarks = false;  // print the passes' remarks to stderr

  ModelOptions model() const { return ModelOptions{api.machine, api.minimumGain}; }
};

// One option of a command line as parsed: the value given (repeatable
// ones' values sorted, space-separated), or its default when not given.
struct GivenOption {
  std::string name;  // "--streams", or "file" for the positional
  std::string value;
  std::string defaultValue;  // the same on every rank: what the option means when not given
  bool given = false;
};

// `hostir run`: the API's run options (hostir/execution.h), which the
// command line fills as it parses and the library takes down to the
// backend, and what only the command line has.
struct RunOptions {
  std::string file;
  std::vector<std::string> settings;  // --set NAME=VALUE, bound to api.params while preparing
  bool ranksGiven = false;            // --ranks given (under mpirun it must match the team)
  api::RunOptions api;
  bool remarks = false;              // print the passes' remarks to stderr (rank 0 only)
  std::vector<std::string> inputs;   // NAME=FILE.npy
  std::vector<std::string> outputs;  // NAME=FILE.npy
  bool check = false;
  bool timed = false;       // --repeat N > 0: rank 0 prints a timing line
  std::string injectFault;  // testing aid: ACTION:RANK:POINT (fault_injection.h)
  // Every option of `run` as parsed (command_line.h): what the ranks of an
  // mpirun job compare before they start (launch_agreement.h), so that an
  // option added later is compared without anyone listing it.
  std::vector<GivenOption> commandLine;
};

// `hostir simulate`: the API's simulate options (hostir/execution.h), which
// the command line fills as it parses, the profile, and what only the
// command line has.
struct SimulateOptions {
  std::string file;
  std::vector<std::string> settings;  // --set NAME=VALUE, bound to api.params while preparing
  bool ranksGiven = false;
  api::SimulateOptions api;
  std::string machine;  // --machine (required): a shipped profile's name or a profile file
  bool remarks = false;

  ModelOptions model() const { return ModelOptions{machine, api.minimumGain}; }
};

// `hostir tune`: every binding of the tuned parameters (and worker pool
// sizes) simulated, the table printed, then the best binding. The API's
// simulate options, as for simulate; api.streams is the pool size when
// --streams gives none.
struct TuneOptions {
  std::string file;
  std::vector<std::string> settings;  // --set NAME=VALUE
  bool ranksGiven = false;
  api::SimulateOptions api;
  std::string machine;                // --machine (required)
  std::vector<std::string> tuned;     // --param NAME=V1,V2,... (repeatable)
  std::vector<int64_t> streamCounts;  // --streams P1,P2,...: pool sizes to try (default: api.streams)
  bool remarks = false;

  ModelOptions model() const { return ModelOptions{machine, api.minimumGain}; }
};

// `hostir calibrate`: the API's calibrate options (the team and backend to
// measure: two in-process ranks on the CPU unless told otherwise), and
// what only the command line has.
struct CalibrateOptions {
  std::string outputPath;  // the profile to write
  api::CalibrateOptions api;
  bool ranksGiven = false;
};

// How reports name a machine profile: 'NAME', and the file it came from
// when that was not a shipped name.
std::string machineShown(const std::string& profileName, const std::string& argument);

int runOpt(const OptOptions& options);
int runCheck(const CheckOptions& options);
int runRun(const RunOptions& options);
int runSimulate(const SimulateOptions& options);
int runCalibrate(const CalibrateOptions& options);
int runTune(const TuneOptions& options);

// Checks the pass names of a pipeline and of --print-ir-after (usage
// errors), and that a pipeline with a pass that needs a cost model comes
// with `--machine` (`model` null: the command has none).
[[nodiscard]] ToolStatus checkPassNames(const std::vector<std::string>& passes,
                                        const std::vector<std::string>& printAfter = {},
                                        const ModelOptions* model = nullptr);

}  // namespace hostir::tool
