#include "tools/hostir/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "hostir/catalog.h"
#include "hostir/limits.h"
#include "hostir/run_option_table.h"
#include "tools/hostir/cli_validators.h"

namespace hostir::tool {
namespace {

// The program, its parameters and the team: file, --set and --ranks.
void addProgramOptions(CLI::App& cmd, std::string& file, std::vector<std::string>& settings, int64_t& ranks,
                       bool& ranksGiven) {
  cmd.add_option("file", file, "The .hir program")->required();
  cmd.add_option("--set", settings, "Bind a parameter, e.g. --set M=1024, --set lr=0.01, --set DT=bf16 (repeatable)")
      ->type_name("NAME=VALUE");
  cmd.add_option_function<int64_t>(
         "--ranks",
         [&ranks, &ranksGiven](const int64_t& n) {
           ranks = n;
           ranksGiven = true;
         },
         "Team size (run: ranks as threads of this process; under mpirun the team is MPI's)")
      ->check(integerFrom(1, kMaxRanks));
}

// --passes a,b: the pipeline as its list of pass names from here on.
void addPassesOption(CLI::App& cmd, std::vector<std::string>& passes, const std::string& description) {
  cmd.add_option_function<std::string>(
         "--passes", [&passes](const std::string& pipeline) { passes = api::splitPipeline(pipeline); }, description)
      ->type_name("PASS[,PASS...]");
}

void addStreamsOption(CLI::App& cmd, int64_t& streams) {
  cmd.add_option("--streams", streams, "Size of the worker stream pool (stream(e) is slot e mod P)")
      ->check(integerFrom(1, kMaxStreams));
}

std::string shippedProfileList() {
  std::string out;
  for (const std::string& name : api::machineProfiles()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// --machine and --min-gain: the cost model that passes such as `overlap` consult.
void addModelOptions(CLI::App& cmd, std::string& machine, double& minimumGain, bool required) {
  CLI::Option* option = cmd.add_option("--machine", machine,
                                       "A shipped profile (" + shippedProfileList() +
                                           ") or a profile file that `hostir calibrate` wrote" +
                                           (required ? "" : "; needed by passes that consult the cost model (overlap)"))
                            ->type_name("NAME|FILE.json");
  if (required) option->required();
  cmd.add_option("--min-gain", minimumGain,
                 "The predicted gain, as a fraction of the time before, that a scheduling change must reach "
                 "(default 0.05)")
      ->type_name("FRACTION")
      ->check(numberFrom(kMinMinimumGain, kMaxMinimumGain));
}

// --communicator of simulate and tune: what the model prices the communications on.
void addSimulatedCommunicatorOption(CLI::App& cmd, std::string& communicator) {
  cmd.add_option("--communicator", communicator,
                 "What carries the collectives in the prediction: auto or nccl (kernels on the SMs, one GPU per "
                 "rank), or copy-engine (the copy engines: no SM held, memory bandwidth shared; docs/cost-model.md)")
      ->check(CLI::IsMember({"auto", "nccl", "copy-engine"}));
}

std::string passList() {
  std::string out = "Passes:\n";
  for (const api::PassDescription& pass : api::passes()) out += fmt::format("  {:<18} {}\n", pass.name, pass.summary);
  return out;
}

}  // namespace

std::vector<GivenOption> givenOptions(const CLI::App& cmd) {
  std::vector<GivenOption> given;
  for (const CLI::Option* option : cmd.get_options()) {
    if (option == cmd.get_help_ptr()) continue;
    GivenOption g;
    g.name = option->get_lnames().empty() ? option->get_name(true) : "--" + option->get_lnames().front();
    std::vector<std::string> values = option->results();
    std::sort(values.begin(), values.end());
    g.given = !values.empty();
    g.defaultValue = option->get_default_str();
    g.value = g.given ? fmt::format("{}", fmt::join(values, " ")) : g.defaultValue;
    given.push_back(std::move(g));
  }
  return given;
}

CommandLine::CommandLine() {
  // Every option shows its default in --help, and its default stands for it
  // in the ranks' start-up agreement when it is not given.
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  // Every mistake reads as one: "error: ...", then where to look.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("error: {}\nRun with --help for more information.\n", e.what());
  });
  app.set_version_flag("--version", versionText, "Print the version and the backends built in");
  app.footer(
      "Examples:\n"
      "  hostir opt examples/row_parallel_linear.hir --passes assign-streams\n"
      "  hostir check examples/row_parallel_linear.hir --set M=1024 --ranks 2\n"
      "  mpirun -np 2 hostir run examples/row_parallel_linear.hir --passes assign-streams --check\n"
      "  hostir simulate examples/row_parallel_linear.hir --machine h100-nvlink --ranks 8 --passes assign-streams\n"
      "  hostir tune examples/row_parallel_linear.hir --machine h100-nvlink --ranks 8 --param S=1,2,4,8 --passes "
      "overlap");

  addOpt();
  addCheck();
  addRun();
  addRunControls();
  addSimulate();
  addCalibrate();
  addTune();

  // An empty list has no default worth showing ("[]").
  for (CLI::App* cmd : app.get_subcommands({}))
    for (CLI::Option* option : cmd->get_options())
      if (option->get_default_str() == "[]") option->default_str("");
  runCmd->callback([this] {
    run.ranksGiven = runCmd->count("--ranks") > 0;
    run.timed = runCmd->count("--repeat") > 0 && run.api.repeat > 0;  // --repeat 0: one untimed run
    run.commandLine = givenOptions(*runCmd);
  });
}

std::string CommandLine::versionText() {
  // Asked without loading any backend's libraries (cuBLAS and NCCL are 200 MB).
  std::vector<std::string> built, without, unusable;
  for (const api::BackendDescription& backend : api::backends()) {
    if (!backend.built) {
      without.push_back(backend.builtWithout);
      continue;
    }
    built.push_back(backend.name);
    if (backend.unusable) unusable.push_back(fmt::format("\n{}: not usable here: {}", backend.name, *backend.unusable));
  }
  std::sort(built.begin(), built.end());
  std::string text = fmt::format("hostir {}\nbackends: {}", HOSTIR_VERSION, fmt::join(built, ", "));
  for (const std::string& missing : without) text += fmt::format(" (built without {})", missing);
  for (const std::string& line : unusable) text += line;
  return text;
}

namespace {

const char* const kSeeHelp = "Run with --help for more information.\n";

}  // namespace

std::optional<std::string> CommandLine::unknownCommand(int argc, const char* const* argv) const {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string given = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* cmd : app.get_subcommands({})) names.push_back(cmd->get_name());
  if (std::find(names.begin(), names.end(), given) != names.end()) return std::nullopt;
  std::optional<std::string> closest = api::closestName(given, names);
  return fmt::format("error: unknown command '{}'{}\n{}", given,
                     closest ? fmt::format("; did you mean '{}'?", *closest) : std::string(), kSeeHelp);
}

std::optional<std::string> CommandLine::unknownOption() const {
  std::vector<const CLI::App*> given = {&app};
  for (const CLI::App* cmd : app.get_subcommands()) given.push_back(cmd);
  for (const CLI::App* cmd : given) {
    for (const std::string& extra : cmd->remaining()) {
      if (extra.size() < 2 || extra[0] != '-') continue;
      const std::string option = extra.substr(0, extra.find('='));
      std::vector<std::string> names;
      for (const CLI::Option* known : cmd->get_options()) {
        for (const std::string& name : known->get_lnames()) names.push_back("--" + name);
        for (const std::string& name : known->get_snames()) names.push_back("-" + name);
      }
      std::optional<std::string> closest = api::closestName(option, names);
      const std::string where = cmd == &app ? "hostir" : "hostir " + cmd->get_name();
      return fmt::format("error: unknown option '{}' for '{}'{}\n{}", option, where,
                         closest ? fmt::format("; did you mean '{}'?", *closest) : std::string(), kSeeHelp);
    }
  }
  return std::nullopt;
}

void CommandLine::addOpt() {
  optCmd = app.add_subcommand("opt", "Run passes over a program and print the result (like mlir-opt)");
  addProgramOptions(*optCmd, opt.file, opt.settings, opt.api.ranks, opt.ranksGiven);
  addStreamsOption(*optCmd, opt.api.streams);
  addPassesOption(*optCmd, opt.passes, "Comma-separated pass pipeline, e.g. assign-streams");
  optCmd->add_option("-o,--output", opt.outputPath, "Write the result here instead of standard output")
      ->check(fileName())
      ->type_name("FILE");
  optCmd->add_flag("--print-ir-after-all", opt.api.printIrAfterAll, "Print the program to stderr after every pass");
  optCmd->add_option("--print-ir-after", opt.api.printIrAfter, "Print the program to stderr after the named pass")
      ->type_name("PASS")
      ->delimiter(',');
  optCmd->add_flag("--remarks", opt.remarks,
                   "Print the passes' decisions (which loops they rewrote, and why not) to stderr");
  addModelOptions(*optCmd, opt.api.machine, opt.api.minimumGain, false);
  optCmd->footer(passList());
}

void CommandLine::addCheck() {
  checkCmd = app.add_subcommand(
      "check", "Verify a program with its parameters bound and prove it free of stream races (exit 1 on a race)");
  addProgramOptions(*checkCmd, check.file, check.settings, check.api.ranks, check.ranksGiven);
  addStreamsOption(*checkCmd, check.api.streams);
}

namespace {

// A row of the run option table (hostir/run_option_table.h) as a flag of
// `hostir run`: checked by the row's bounds, then set by the table.
void addRunOption(CLI::App& cmd, api::RunOptions& options, const api::RunOptionRow& row) {
  auto set = [&options, &row](const std::string& text) { api::setRunOption(options, row, text); };
  if (row.type == api::RunOptionType::Flag) {
    cmd.add_flag_callback(
        row.flag(), [set] { set("true"); }, row.help);
    return;
  }
  CLI::Option* option = cmd.add_option_function<std::string>(row.flag(), set, row.help)
                            ->default_str(api::runOptionText(api::RunOptions{}, row));
  const char* plain = row.type == api::RunOptionType::Integer  ? "INT"
                      : row.type == api::RunOptionType::Number ? "FLOAT"
                                                               : "TEXT";
  option->type_name(row.typeName.empty() ? plain : row.typeName);
  switch (row.type) {
    case api::RunOptionType::Integer:
      if (row.maxInteger > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        option->check(unsignedInteger());
      else
        option->check(integerFrom(static_cast<int64_t>(row.minInteger), static_cast<int64_t>(row.maxInteger)));
      break;
    case api::RunOptionType::Number:
      option->check(numberFrom(row.minNumber, row.maxNumber, row.typeName == "SECONDS" ? "seconds" : ""));
      break;
    case api::RunOptionType::Path: option->check(fileName()); break;
    case api::RunOptionType::Choice: option->check(CLI::IsMember(row.choices)); break;
    case api::RunOptionType::Flag:
    case api::RunOptionType::Text: break;
  }
}

}  // namespace

// run: the program, its passes, the files, and every row of the run option table.
void CommandLine::addRun() {
  runCmd = app.add_subcommand("run", "Run a program on every rank of a team");
  runCmd->add_option("file", run.file, "The .hir program")->required();
  runCmd
      ->add_option("--set", run.settings,
                   "Bind a parameter, e.g. --set M=1024, --set lr=0.01, --set DT=bf16 (repeatable)")
      ->type_name("NAME=VALUE");
  addPassesOption(*runCmd, run.api.passes, "Passes to apply before running, e.g. assign-streams");
  runCmd->add_flag("--remarks", run.remarks, "Print the passes' decisions to stderr (rank 0)");
  runCmd->add_option("--input", run.inputs, "Global input tensor from a .npy file (repeatable)")
      ->type_name("NAME=FILE.npy");
  runCmd->add_option("--output", run.outputs, "Write the global output tensor to a .npy file (repeatable)")
      ->type_name("NAME=FILE.npy");
  runCmd->add_flag("--check", run.check, "Compare every output with a serial f64-accumulating reference run");
}

// run: the table's options, and the command line's own testing aid.
void CommandLine::addRunControls() {
  for (const api::RunOptionRow& row : api::runOptionTable()) addRunOption(*runCmd, run.api, row);
  // A testing aid for the fault tests, not for users: no group, so --help leaves it out.
  runCmd->add_option("--inject-fault", run.injectFault, "Stop or kill one rank at a chosen point")
      ->type_name("ACTION:RANK:POINT")
      ->group("");
}

void CommandLine::addSimulate() {
  simulateCmd = app.add_subcommand(
      "simulate", "Predict a program's timeline on a machine profile, without running it (docs/cost-model.md)");
  addProgramOptions(*simulateCmd, simulate.file, simulate.settings, simulate.api.ranks, simulate.ranksGiven);
  addStreamsOption(*simulateCmd, simulate.api.streams);
  addModelOptions(*simulateCmd, simulate.machine, simulate.api.minimumGain, true);
  addSimulatedCommunicatorOption(*simulateCmd, simulate.api.communicator);
  addPassesOption(*simulateCmd, simulate.api.passes, "Passes to apply before simulating, e.g. assign-streams");
  simulateCmd->add_flag("--remarks", simulate.remarks, "Print the passes' decisions to stderr");
  simulateCmd->add_option("--trace", simulate.api.tracePath, "Write the predicted timeline as a Chrome trace")
      ->check(fileName())
      ->type_name("FILE.json");
}

void CommandLine::addTune() {
  tuneCmd = app.add_subcommand(
      "tune", "Pick parameter values by simulation: predict every binding on a machine profile, print the best");
  addProgramOptions(*tuneCmd, tune.file, tune.settings, tune.api.ranks, tune.ranksGiven);
  tuneCmd->add_option("--param", tune.tuned, "A parameter and the values to try, e.g. --param S=1,2,4,8 (repeatable)")
      ->type_name("NAME=V1,V2,...")
      ->required();
  tuneCmd
      ->add_option("--streams", tune.streamCounts, "Worker stream pool sizes to try, e.g. --streams 2,4,8 (default 4)")
      ->type_name("P1,P2,...")
      ->delimiter(',')
      ->check(integerFrom(1, kMaxStreams));
  addPassesOption(*tuneCmd, tune.api.passes, "Passes to apply to every binding, e.g. overlap");
  tuneCmd->add_flag("--remarks", tune.remarks, "Print the passes' decisions to stderr");
  addModelOptions(*tuneCmd, tune.machine, tune.api.minimumGain, true);
  addSimulatedCommunicatorOption(*tuneCmd, tune.api.communicator);
}

void CommandLine::addCalibrate() {
  calibrateCmd = app.add_subcommand(
      "calibrate", "Measure this machine and write a profile for `hostir simulate` (under mpirun: MPI's team)");
  calibrateCmd->add_option("-o,--out", calibrate.outputPath, "The profile to write")
      ->check(fileName())
      ->type_name("FILE.json")
      ->required();
  calibrateCmd
      ->add_option_function<int64_t>(
          "--ranks",
          [this](const int64_t& n) {
            calibrate.api.ranks = n;
            calibrate.ranksGiven = true;
          },
          "Team size to measure communications on (ranks as threads of this process; default 2)")
      ->check(integerFrom(1, kMaxRanks));
  calibrateCmd
      ->add_option("--cores-per-rank", calibrate.api.coresPerRank,
                   "As for run (default: the node's cores divided by its ranks)")
      ->check(integerFrom(1, kMaxCoresPerRank));
  calibrateCmd->add_flag("--quick", calibrate.api.quick,
                         "A coarse grid in seconds (for tests), not a faithful profile");
  calibrateCmd
      ->add_option("--backend", calibrate.api.backend,
                   "The backend to measure: cpu (default) or cuda (the GPU, with its contention)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  calibrateCmd
      ->add_option("--communicator", calibrate.api.communicator,
                   "As for run: auto, nccl or copy-engine (the CUDA backend's collectives)")
      ->check(CLI::IsMember({"auto", "nccl", "copy-engine"}));
  calibrateCmd->add_flag("--force", calibrate.api.force,
                         "Measure a machine that is busy, and write the profile even when some figure is too noisy");
  calibrateCmd
      ->add_option("--inject-delays", calibrate.api.injectDelaysMicros,
                   "Testing aid: sleep up to this many microseconds before every task and communication")
      ->type_name("MICROSECONDS")
      ->check(integerFrom(0, kMaxInjectedDelayMicros));
}

}  // namespace hostir::tool
