// The `hostir` command line, run as a user runs it: exit codes, messages
// on stderr, results on stdout, never a signal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "executor/backend_factory.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using Cli = testing::CliTest;

TEST_F(Cli, HelpDescribesTheSubcommands) {
  auto r = run("--help");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.out, HasSubstr("opt"));
  EXPECT_THAT(r.out, HasSubstr("check"));
  auto opt = run("opt --help");
  EXPECT_EQ(opt.exitCode, 0);
  EXPECT_THAT(opt.out, HasSubstr("--passes"));
  EXPECT_THAT(opt.out, HasSubstr("assign-streams"));
  EXPECT_THAT(opt.out, HasSubstr("--print-ir-after-all"));
  auto check = run("check --help");
  EXPECT_EQ(check.exitCode, 0);
  EXPECT_THAT(check.out, HasSubstr("--set"));
}

TEST_F(Cli, OptPrintsThePassResult) {
  auto r = run("opt " + example("row_parallel_linear.hir") + " --passes assign-streams");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, testing::readFile(golden("row_parallel_linear.assign-streams.hir")));
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, OptWritesToAFileAndDumpsIr) {
  auto outPath = dir_ / "result.hir";
  auto r =
      run("opt " + golden("two_loops.hir") + " --passes=assign-streams --print-ir-after-all -o " + outPath.string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::string expected = testing::readFile(golden("two_loops.assign-streams.hir"));
  EXPECT_EQ(testing::readFile(outPath), expected);
  // The dump is the program as the pass left it, before the pipeline
  // records the team it was proved for.
  std::string dumped = expected;
  dumped.erase(dumped.find(" proved_for(world = 1, streams = 4)"),
               std::string(" proved_for(world = 1, streams = 4)").size());
  EXPECT_EQ(r.err, "# -----// IR Dump After assign-streams //----- #\n" + dumped + "\n");
  auto named = run("opt " + golden("two_loops.hir") + " --passes assign-streams --print-ir-after=assign-streams");
  EXPECT_THAT(named.err, StartsWith("# -----// IR Dump After assign-streams"));
}

TEST_F(Cli, OptWithoutPassesPrintsCanonically) {
  auto r = run("opt " + golden("canonical_forms.hir"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, testing::readFile(golden("canonical_forms.printed.hir")));
}

TEST_F(Cli, MalformedProgramGetsOnePositionedError) {
  auto file = write("bad.hir", "program p() {\n  input x : f32[4]\n  y = frobnicate(x)\n}\n");
  for (const char* sub : {"opt", "check"}) {
    auto r = run(std::string(sub) + " " + file);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, file + ":3:7: error: unknown operation 'frobnicate'\n  y = frobnicate(x)\n      ^\n");
  }
}

TEST_F(Cli, BadInputsFailCleanly) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  std::string deep =
      "program p() {\n  x = ceildiv(" + std::string(100000, '(') + "1" + std::string(100000, ')') + ", 1)\n}\n";
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"empty.hir", ""},
                                                        {"garbage.hir", garbage},
                                                        {"deep.hir", deep},
                                                        {"nul.hir", std::string("program\0p", 9)}}) {
    SCOPED_TRACE(name);
    auto r = run("check " + write(name, text));
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_FALSE(r.signaled);
    EXPECT_THAT(r.err, StartsWith((dir_ / name).string() + ":"));
    EXPECT_THAT(r.err, HasSubstr(": error: "));
  }
  auto missing = run("check " + (dir_ / "does-not-exist.hir").string());
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_THAT(missing.err, HasSubstr("error: cannot open the program"));
}

TEST_F(Cli, SetBindsParamsBeforeAndAfterThePasses) {
  auto ok = run("check " + example("row_parallel_linear.hir") + " --set M=1024 --set S=8 --ranks 4");
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("verified and race-free for 4 rank(s)"));
  auto indivisible = run("check " + example("row_parallel_linear.hir") + " --set K=10 --ranks 4");
  EXPECT_EQ(indivisible.exitCode, 1);
  EXPECT_THAT(indivisible.err,
              HasSubstr(":3:24: error: extent 10 of axis 1 of 'x' does not divide evenly over 4 ranks"));
  // A --set naming no parameter is a command-line mistake, on every command.
  for (const char* command : {"opt", "check", "run"}) {
    auto unknown = run(std::string(command) + " " + example("row_parallel_linear.hir") + " --set Q=3");
    EXPECT_EQ(unknown.exitCode, 2) << command;
    EXPECT_THAT(unknown.err, HasSubstr("row_parallel_linear.hir: error: program 'row_parallel_linear' has no "
                                       "parameter 'Q' (its parameters: M, K, N, S)"));
  }
  auto malformed = run("check " + example("row_parallel_linear.hir") + " --set M=-5");
  EXPECT_EQ(malformed.exitCode, 2);
  EXPECT_THAT(malformed.err, HasSubstr("error: parameter M = -5: M takes a non-negative integer"));
}

// Float and dtype parameters take --set values of their kind; the run's
// --check compares against the serial reference bound to the same values.
TEST_F(Cli, SetBindsFloatAndDTypeParams) {
  const std::string program =
      (std::filesystem::path(HOSTIR_SOURCE_DIR) / "tests" / "api" / "programs" / "sgd_step.hir").string();
  auto checked = run("check " + program + " --set DT=f16 --set lr=1e-3 --set N=16");
  EXPECT_EQ(checked.exitCode, 0) << checked.err;
  auto ran = run("run " + program + " --set DT=f64 --set lr=0.125 --check --ranks 2");
  EXPECT_EQ(ran.exitCode, 0) << ran.err;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--set lr=bf16", "error: parameter lr = bf16: lr takes a number"},
      {"--set N=0.5", "error: parameter N = 0.5: N takes a non-negative integer"},
      {"--set DT=8", "error: parameter DT = 8: DT takes a dtype (f32, f16, bf16, f64 or i32)"},
      {"--set DT=bf61", "error: --set DT: 'bf61' is not an integer, a finite number (0.01, 1e-3) or a dtype"},
      {"--set lr=nan", "error: --set lr: 'nan' is not an integer, a finite number"},
  };
  for (const auto& [set, message] : refused) {
    auto r = run("check " + program + " " + set);
    EXPECT_EQ(r.exitCode, 2) << set;
    EXPECT_THAT(r.err, HasSubstr(message)) << set;
  }
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run("").exitCode, 2);
  EXPECT_EQ(run("frobnicate x.hir").exitCode, 2);
  EXPECT_EQ(run("opt").exitCode, 2);
  auto r = run("opt " + example("row_parallel_linear.hir") + " --passes no-such-pass");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown pass 'no-such-pass'"));
  EXPECT_EQ(run("check " + example("row_parallel_linear.hir") + " --ranks 0").exitCode, 2);
}

TEST_F(Cli, VersionNamesTheBackendsBuiltIn) {
  auto r = run("--version");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("hostir " HOSTIR_VERSION "\n"));
  EXPECT_THAT(r.out, HasSubstr(cudaBackendBuilt() ? "backends: cpu, cuda" : "backends: cpu (built without"));
  // Without a usable device here, the line says why, as far as the driver tells.
  if (cudaBackendBuilt() && cudaUnavailableBeforeLoading())
    EXPECT_THAT(r.out, HasSubstr("cuda: not usable here: " + *cudaUnavailableBeforeLoading()));
}

// The CUDA component (cuBLAS, NCCL: about 200 MB) is loaded only for a run
// that may use a device: never for --version or a CPU run, nor for `auto`
// where the driver sees no device. The dynamic loader names every library
// it opens (LD_DEBUG=files).
TEST_F(Cli, CpuRunsNeverLoadTheCudaLibraries) {
  const std::string program = example("row_parallel_linear.hir");
  std::vector<std::string> commands = {"--version", "run " + program + " --backend cpu",
                                       "run " + program + " --backend cpu --ranks 2"};
  if (cudaUnavailableBeforeLoading()) commands.push_back("run " + program);
  for (const std::string& args : commands) {
    SCOPED_TRACE(args);
    auto r = run(args, "LD_DEBUG=files ");
    EXPECT_EQ(r.exitCode, 0) << r.err.substr(0, 2000);
    EXPECT_THAT(r.err, HasSubstr("file=libfmt"));  // the loader's trace is there: the test can fail
    for (const char* library : {"libhostir_cuda", "libcublas", "libnccl", "libcudart"})
      EXPECT_THAT(r.err, Not(HasSubstr(library)));
  }
}

// A CUDA graph captures device work: without it, --graph says why.
TEST_F(Cli, GraphWithoutADeviceIsAClearError) {
  std::vector<std::string> commands = {"run " + example("row_parallel_linear.hir") + " --backend cpu --graph"};
  if (cudaUnavailableBeforeLoading()) commands.push_back("run " + example("row_parallel_linear.hir") + " --graph");
  for (const std::string& args : commands) {
    SCOPED_TRACE(args);
    auto r = run(args);
    EXPECT_EQ(r.exitCode, 2);  // the API's usage error
    EXPECT_THAT(r.err, StartsWith("error: graph: a CUDA graph captures device work, and this run has none ("));
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(Cli, UnknownCommandsAndOptionsNameTheClosest) {
  const std::string program = example("row_parallel_linear.hir");
  auto command = run("runn " + program);
  EXPECT_EQ(command.exitCode, 2);
  EXPECT_THAT(command.err, StartsWith("error: unknown command 'runn'; did you mean 'run'?\n"));
  auto swapped = run("chekc " + program);
  EXPECT_THAT(swapped.err, StartsWith("error: unknown command 'chekc'; did you mean 'check'?\n"));
  auto far = run("frobnicate " + program);
  EXPECT_EQ(far.exitCode, 2);
  EXPECT_THAT(far.err, StartsWith("error: unknown command 'frobnicate'\n"));
  auto option = run("run " + program + " --repeet 3");
  EXPECT_EQ(option.exitCode, 2);
  EXPECT_THAT(option.err, StartsWith("error: unknown option '--repeet' for 'hostir run'; did you mean '--repeat'?\n"));
  auto withValue = run("simulate " + program + " --machine h100-nvlink --rank=2");
  EXPECT_THAT(withValue.err,
              StartsWith("error: unknown option '--rank' for 'hostir simulate'; did you mean '--ranks'?"));
  auto help = run("help");
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_THAT(help.out, HasSubstr("Subcommands:"));
}

TEST_F(Cli, ADashReadsTheProgramFromStandardInput) {
  const std::string program = example("row_parallel_linear.hir");
  const std::string hostir = HOSTIR_BINARY;
  auto fromFile = run("opt " + program + " --passes assign-streams");
  ASSERT_EQ(fromFile.exitCode, 0) << fromFile.err;
  auto fromStdin = shell("sh -c '" + hostir + " opt - --passes assign-streams < " + program + "'");
  EXPECT_EQ(fromStdin.exitCode, 0) << fromStdin.err;
  EXPECT_EQ(fromStdin.out, fromFile.out);
  auto checked = shell("sh -c '" + hostir + " check - --set M=1024 < " + program + "'");
  EXPECT_EQ(checked.exitCode, 0) << checked.err;
  EXPECT_THAT(checked.out, StartsWith("<stdin>: ok: program 'row_parallel_linear'"));
  const std::string bad = write("bad.hir", "program p() {\n  t = frob(x)\n}\n");
  auto error = shell("sh -c '" + hostir + " check - < " + bad + "'");
  EXPECT_EQ(error.exitCode, 1);
  EXPECT_THAT(error.err, StartsWith("<stdin>:2:"));
}

// The small conventions: stdin is <stdin> everywhere, reports name a
// profile by its name, an empty file name is a usage error, `help COMMAND`
// works, and every command-line mistake reads "error: ...".
TEST_F(Cli, TuneNamesStandardInputAndTheProfileByItsName) {
  const std::string program = example("row_parallel_linear.hir");
  auto tuned =
      shell("sh -c '" + std::string(HOSTIR_BINARY) + " tune - --machine h100-nvlink --param S=1,2 < " + program + "'");
  EXPECT_EQ(tuned.exitCode, 0) << tuned.err;
  EXPECT_THAT(tuned.out, StartsWith("tune: program 'row_parallel_linear' (<stdin>), machine 'h100-nvlink', "));
  std::string profile = write("mine.json", R"({"format": "hostir-machine-profile", "version": 1, "name": "my box",
    "rank": {"admission": "concurrent", "compute_units": 1, "gemm_units": 0, "elementwise_units": 1,
             "communication_units": 1},
    "gemm": {"f32": {"m": [64], "n": [64], "k": [64], "tflops": [0.1]}},
    "memory": {"bytes": [1024], "gbps": [10]},
    "communication": [],
    "overheads_us": {"issue": 1, "launch": 1, "sync": 1, "wakeup": 1}})");
  auto simulated = run("simulate " + program + " --machine " + profile);
  EXPECT_EQ(simulated.exitCode, 0) << simulated.err;
  EXPECT_THAT(simulated.out, HasSubstr("machine 'my box' (" + profile + ")"));
}

TEST_F(Cli, AnEmptyFileNameIsAUsageError) {
  const std::string program = example("row_parallel_linear.hir");
  for (std::string args :
       {"run " + program + " --trace ''", "simulate " + program + " --machine h100-nvlink --trace ''",
        "opt " + program + " -o ''", std::string("calibrate --quick -o ''")}) {
    SCOPED_TRACE(args);
    auto r = run(args);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_THAT(r.err, StartsWith("error: "));
    EXPECT_THAT(r.err, HasSubstr("expects a file name, got ''"));
  }
}

TEST_F(Cli, HelpOfACommandAndEveryMistakeSaysError) {
  auto help = run("help run");
  EXPECT_EQ(help.exitCode, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--passes"));
  auto typo = run("help runn");
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_THAT(typo.err, StartsWith("error: unknown command 'runn'; did you mean 'run'?"));
  for (std::string args : {"run", "run x.hir --ranks abc", "check"}) {
    SCOPED_TRACE(args);
    auto r = run(args);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_THAT(r.err, StartsWith("error: "));
  }
}

TEST_F(Cli, ACommunicatorTheBackendCannotUseIsAUsageErrorForCalibrateToo) {
  auto r = run("calibrate --quick --backend cpu --communicator nccl -o " + (dir_ / "p.json").string());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, StartsWith("error: backend cpu cannot use the nccl communicator"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p.json"));
}

TEST_F(Cli, RunTraceSaysWhereItWrote) {
  const std::string trace = (dir_ / "t.json").string();
  auto r = run("run " + example("row_parallel_linear.hir") + " --ranks 2 --trace " + trace);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  const std::string bytes = std::to_string(std::filesystem::file_size(trace));
  EXPECT_THAT(r.out, HasSubstr("trace: wrote " + trace + " (" + bytes + " bytes)\n"));
}

}  // namespace
}  // namespace hostir
