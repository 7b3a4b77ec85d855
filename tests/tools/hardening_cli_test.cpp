// Hostile input to the `hostir` command line (issue 11): tensors whose byte
// size overflows, expressions and loops nested past the limits, program files
// that are huge, endless or not files at all, unclosed delimiters. Each one
// is one positioned error and exit code 1: never a signal, a hang, or a run
// that "succeeds" on a wrapped size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <cstdlib>

#include "cli_runner.h"
#include "hostir/limits.h"
#include "ir/expr.h"
#include "ir/verifier.h"
#include "sanitizers.h"
#include "test_util.h"

namespace hostir {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::testProgramText;

class HardeningCli : public testing::CliTest {
 protected:
  void TearDown() override {
    // A test makes a file unreadable; give it back before the directory goes.
    std::error_code ignored;
    std::filesystem::permissions(dir_ / "unreadable.hir", std::filesystem::perms::owner_all, ignored);
    CliTest::TearDown();
  }

  // Exit code 1, no signal, no hang, and stderr starting with `prefix`.
  void expectError(const CommandResult& r, const std::string& prefix, const std::string& message) {
    EXPECT_EQ(r.exitCode, 1) << r.err.substr(0, 2000);
    EXPECT_FALSE(r.signaled);
    EXPECT_THAT(r.err.substr(0, 2000), StartsWith(prefix));
    EXPECT_THAT(r.err.substr(0, 2000), HasSubstr(message));
  }
};

// ---------------------------------------------------------------------------
// Byte sizes

TEST_F(HardeningCli, TensorsWhoseByteSizeOverflowsAreRefusedByCheckAndRun) {
  struct Case {
    std::string name, text, where, message;
  };
  const std::vector<Case> cases = {
      // 2^64 bytes: `run` used to die with SIGSEGV.
      {"overflow.hir",
       "program p() {\n  input x : f32[4611686018427387904, 4]\n  output y : f32[4611686018427387904, 4]\n"
       "  y = copy(x)\n}\n",
       ":2:13: error: ", "f32[4611686018427387904, 4] needs more than 8 EiB; a tensor's byte size must fit in 63 bits"},
      // 2^64 + 4 bytes wraps to 4: `run --check` used to say ok on one element.
      {"wraps.hir",
       "program p() {\n  input x : f32[4611686018427387905]\n  output y : f32[4611686018427387905]\n"
       "  y = copy(x)\n}\n",
       ":2:13: error: ", "f32[4611686018427387905] needs more than 8 EiB"},
      {"allocate.hir", "program p(M = 4) {\n  t = allocate(f64[M, M, M])\n}\n",
       ":2:16: error: ", "f64[4, 4, 4] needs more than 8 EiB"},
      {"matmul.hir", testProgramText("tools/programs/matmul_result_overflows.hir"),
       ":7:7: error: ", "the result of 'matmul', bf16[4, 4], needs more than 8 EiB"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string file = write(c.name, c.text);
    // The allocate and matmul cases overflow only with M large.
    std::string set = c.name == "allocate.hir" ? " --set M=2097152"
                      : c.name == "matmul.hir" ? " --set M=2147483648"
                                               : "";
    std::string message = c.message;
    if (c.name == "allocate.hir") message = "f64[2097152, 2097152, 2097152] needs more than 8 EiB";
    if (c.name == "matmul.hir") message = "the result of 'matmul', bf16[2147483648, 2147483648], needs more than 8 EiB";
    for (const char* command : {"check", "run --check", "run --ranks 2"}) {
      SCOPED_TRACE(command);
      expectError(run(std::string(command) + " " + file + set), file + c.where, message);
    }
  }
}

// ---------------------------------------------------------------------------
// Depth

TEST_F(HardeningCli, SixtyThousandTermChainsAreOneError) {
  for (std::string op : {"+", "-", "*", "/", "%"}) {
    for (bool right : {false, true}) {
      SCOPED_TRACE(op + (right ? " right-leaning" : " left-leaning"));
      std::string expr = "1";
      for (int k = 1; k < 60000; ++k) expr += " " + op + (right ? " (1" : " 1");
      if (right) expr += std::string(59999, ')');
      std::string file = write("chain.hir", "program p() {\n  input x : f32[" + expr + "]\n}\n");
      // The 257th operator, or the 257th parenthesis.
      std::string where = ":2:" + std::to_string(right ? 5 * 257 + 16 : 4 * 257 + 15);
      for (const char* command : {"check", "opt"}) {
        auto r = run(std::string(command) + " " + file);
        expectError(r, file + where + ": error: ",
                    "expression nested too deeply: more than 256 levels of operators, parentheses and calls");
      }
    }
  }
}

TEST_F(HardeningCli, DeepParenthesesCallsAndLoopsAreOneError) {
  std::string calls, loops, closing;
  for (int k = 0; k < 60000; ++k) calls += "min(1, ";
  for (int k = 0; k < 100000; ++k) loops += "for j" + std::to_string(k) + " in range(1) {\n";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"parens.hir",
       "program p() {\n  n = max(" + std::string(60000, '(') + "1" + std::string(60000, ')') + ", 1)\n}\n",
       // The call of max is the first level, so the 256th '(' is one too many.
       ":2:" + std::to_string(11 + 255) + ": error: expression nested too deeply"},
      {"calls.hir", "program p() {\n  t = allocate(f32[" + calls + "1" + std::string(60000, ')') + "])\n}\n",
       ":2:" + std::to_string(20 + 7 * 256) + ": error: expression nested too deeply"},
      {"loops.hir", "program p() {\n" + loops + "e = record_event()\n" + std::string(100000, '}') + "\n}\n",
       ":66:1: error: blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'"},
  };
  for (const auto& [name, text, message] : cases) {
    SCOPED_TRACE(name);
    std::string file = write(name, text);
    for (const char* command : {"check", "opt", "run"})
      expectError(run(std::string(command) + " " + file), file + ":", file + message);
  }
}

// ---------------------------------------------------------------------------
// Unclosed delimiters

TEST_F(HardeningCli, UnclosedBraceIsReportedWithANoteAtTheBrace) {
  std::string file = write("unclosed.hir", "program p() {\n  for i in range(2) {\n    e = record_event()\n");
  auto r = run("check " + file);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.err, file +
                       ":4:1: error: expected '}' to close the loop body, found end of file\n"
                       "\n"
                       "^\n" +
                       file +
                       ":2:21: note: to match this '{' (the loop body)\n"
                       "  for i in range(2) {\n"
                       "                    ^\n");
  std::string program = write("program.hir", "program p(M = 4) {\n  t = allocate(f32[M])\n");
  auto body = run("opt " + program);
  EXPECT_EQ(body.exitCode, 1);
  EXPECT_THAT(body.err,
              HasSubstr(program + ":3:1: error: expected '}' to close the program body, found end of file\n"));
  EXPECT_THAT(body.err, HasSubstr(program + ":1:18: note: to match this '{' (the program body)\n"
                                            "program p(M = 4) {\n"
                                            "                 ^\n"));
  std::string paren = write("paren.hir", "program p() {\n  t = allocate(f32[(1 + 2], zero=true)\n}\n");
  auto p = run("check " + paren);
  EXPECT_EQ(p.exitCode, 1);
  EXPECT_THAT(p.err, StartsWith(paren + ":2:26: error: expected ')' to close the parenthesis, found ']'\n"));
  EXPECT_THAT(p.err, HasSubstr(paren + ":2:20: note: to match this '(' (a parenthesized expression)\n"));
}

// ---------------------------------------------------------------------------
// Program files

TEST_F(HardeningCli, ProgramFilesOverTheLimitAreRefused) {
  static_assert(kMaxProgramFileBytes == 16u << 20);
  // A valid program padded with comments to exactly the limit is read.
  std::string program = "program p() {\n  t = allocate(f32[4])\n}\n";
  std::string padded = program;
  std::string comment = "# " + std::string(1021, 'x') + "\n";  // 1 KiB lines
  while (padded.size() + comment.size() <= kMaxProgramFileBytes) padded += comment;
  padded += "#" + std::string(kMaxProgramFileBytes - padded.size() - 1, 'y');
  ASSERT_EQ(padded.size(), kMaxProgramFileBytes);
  std::string atLimit = write("at_limit.hir", padded);
  auto ok = run("check " + atLimit);
  EXPECT_EQ(ok.exitCode, 0) << ok.err.substr(0, 500);
  // One byte more is refused; so is 17 MiB, with both sizes stated.
  std::string over = write("over.hir", padded + "\n");
  expectError(run("check " + over),
              over + ": error: ", "the program file is over 16 MiB; hostir reads program files of at most 16 MiB");
  std::string huge = write("huge.hir", padded + std::string(1 << 20, '\n'));
  auto r = run("opt " + huge);
  EXPECT_EQ(r.err, huge + ": error: the program file is 17.0 MiB; hostir reads program files of at most 16 MiB\n");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
}

TEST_F(HardeningCli, EndlessAndNonRegularFilesNeitherHangNorFillMemory) {
  // Devices that never end: refused after reading one byte past the limit.
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    SCOPED_TRACE(device);
    auto r = run(std::string("check ") + device);
    EXPECT_EQ(r.err, std::string(device) +
                         ": error: the program is longer than 16 MiB; hostir reads program files of at most 16 MiB\n");
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_FALSE(r.signaled);
    EXPECT_LT(r.seconds, 30);
  }
  // A directory.
  std::string dir = (dir_ / "a_directory.hir").string();
  std::filesystem::create_directories(dir);
  auto d = run("check " + dir);
  EXPECT_EQ(d.err, dir + ": error: cannot read the program: it is a directory, not a file\n");
  EXPECT_EQ(d.exitCode, 1);
  // A FIFO nobody writes: no wait for a writer, an empty program.
  std::string fifo = (dir_ / "fifo.hir").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = run("check " + fifo);
  expectError(f, fifo + ":1:1: error: ", "a program must start with 'program NAME(...)'");
  EXPECT_LT(f.seconds, 30);
  // A FIFO with a writer is read like a file (process substitution, /dev/stdin).
  std::string program = write("p.hir", "program p() {\n  t = allocate(f32[4])\n}\n");
  // (The writer gives up after 30 s should hostir never open the FIFO.)
  auto piped = run("check " + fifo, "(timeout 30 sh -c 'cat " + program + " > " + fifo + "' &) ; sleep 0.2; ");
  EXPECT_EQ(piped.exitCode, 0) << piped.err;
  EXPECT_THAT(piped.out, HasSubstr("ok: program 'p' verified"));
  // Empty and missing files.
  auto null = run("check /dev/null");
  expectError(null, "/dev/null:1:1: error: ", "a program must start with 'program NAME(...)'");
  std::string missing = (dir_ / "missing.hir").string();
  auto m = run("check " + missing);
  EXPECT_EQ(m.err, missing + ": error: cannot open the program: No such file or directory\n");
  EXPECT_EQ(m.exitCode, 1);
  // A file that opens but cannot be read (the process's own memory at address 0).
  auto unreadableData = run("check /proc/self/mem");
  EXPECT_EQ(unreadableData.err, "/proc/self/mem: error: cannot read the program: Input/output error\n");
  EXPECT_EQ(unreadableData.exitCode, 1);
}

TEST_F(HardeningCli, UnreadableFileIsAClearError) {
  // Root reads files whatever their mode: drop to nobody for the run. The
  // checkout may sit in a folder only root can enter (mktemp -d): setpriv
  // still starts the binary, but then nobody cannot load the build's
  // libraries from there, so the run gets a copy of them it can read.
  std::string asUser;
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "running as root without setpriv";
    const std::filesystem::path libraries = dir_ / "lib";
    std::filesystem::copy(std::filesystem::path(HOSTIR_BINARY).parent_path().parent_path() / "lib", libraries,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    asUser = "env LD_LIBRARY_PATH=" + libraries.string() + " setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  std::string file = write("unreadable.hir", "program p() {\n}\n");
  std::filesystem::permissions(file, std::filesystem::perms::none);
  auto r = run("check " + file, "", asUser);
  EXPECT_EQ(r.err, file + ": error: cannot open the program: Permission denied\n");
  EXPECT_EQ(r.exitCode, 1);
}

// N top-level loops, each over S chunks of tensors of its own: independent
// iterations, so assign-streams rewrites them all and canonicalize then has
// two synchronizations per loop to prove (bench/many_loops.py).
std::string manyLoops(int loops) {
  std::string text = "program many(M = 64, S = 4) {\n";
  for (int i = 0; i < loops; ++i) text += fmt::format("  input x{0} : f32[M, M]\n  output y{0} : f32[M, M]\n", i);
  for (int i = 0; i < loops; ++i)
    text += fmt::format(
        "  y{0} = allocate(f32[M, M])\n  for j in range(S) {{\n    xj = shard_by_stream(x{0}, axis=0, index=j, "
        "chunks=S)\n    yj = shard_by_stream(y{0}, axis=0, index=j, chunks=S)\n    copy(xj, out=yj)\n  }}\n",
        i);
  return text + "}\n";
}

// Passes that prove or predict the whole program for each rewrite stop at
// kMaxPassWholeProgramWork on a long program, leave the rest as it is and
// say where, even without --remarks; what they give still checks.
TEST_F(HardeningCli, PassesOnALongProgramStopAtTheirLimitAndSayWhere) {
  // The limit is a fixed amount of proving: instrumented, it takes minutes.
  if (hostir::testing::kSanitized)
    GTEST_SKIP() << "a sanitizer build: the passes' fixed work limit takes minutes instrumented";
  const std::string path = write("many.hir", manyLoops(300));
  for (const auto& [passes, warning] :
       {std::pair<std::string, std::string>{"assign-streams,canonicalize",
                                            "warning: canonicalize: this synchronization and those before it kept "
                                            "unproved: the pass reached its limit of whole-program proofs \\([0-9]+ "
                                            "for a program of [0-9]+ statements\\)"},
        {"overlap --machine h100-nvlink",
         "warning: overlap: this loop and those after it left as they are: the pass reached its limit of "
         "whole-program proofs \\([0-9]+ for a program of [0-9]+ statements\\)"}}) {
    const std::string out = (dir_ / "out.hir").string();
    CommandResult r = run("opt " + path + " --passes " + passes + " -o " + out);
    ASSERT_EQ(r.exitCode, 0) << passes << ": " << r.err.substr(0, 2000);
    EXPECT_THAT(r.err, ::testing::ContainsRegex("^" + path + ":[0-9]+:[0-9]+: " + warning)) << passes;
    EXPECT_EQ(run("check " + out).exitCode, 0) << passes;
  }
  // Longer, the pass stops at a synchronization that assign-streams made,
  // which has no position of its own: the warning takes its neighbour's.
  const std::string longer = write("many1000.hir", manyLoops(1000));
  CommandResult r = run("opt " + longer + " --passes assign-streams,canonicalize -o " + (dir_ / "out.hir").string());
  ASSERT_EQ(r.exitCode, 0) << r.err.substr(0, 2000);
  EXPECT_THAT(r.err, ::testing::ContainsRegex("^" + longer + ":[0-9]+:[0-9]+: warning: canonicalize: "));
}

}  // namespace
}  // namespace hostir
