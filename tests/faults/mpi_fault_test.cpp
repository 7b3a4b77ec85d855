// Faults under mpirun: a rank that stops (SIGSTOP) or dies at set-up,
// between runs or at shutdown; a rank that cannot load its program; ranks
// started with different programs, parameters or options; communications
// that differ by rank under --unchecked; an allocation beyond memory. In
// every case every rank ends, non-zero, within --comm-timeout plus a few
// seconds, and the reason is printed. The faults are injected at chosen
// points (--inject-fault), so no test depends on when a signal lands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "programs.h"

namespace hostir::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Seconds past --comm-timeout that ending a job may take: mpirun's own
// start and tear-down on a loaded 2-core machine.
constexpr double kGraceSeconds = 20;

class MpiFaults : public CliTest {
 protected:
  // mpirun -np 1 hostir ARGS0 : -np 1 hostir ARGS1 ...: one process per entry.
  CommandResult mpirunEach(const std::vector<std::string>& perRank) {
    std::string command = "env " HOSTIR_MPI_ENV " " MPIEXEC_EXECUTABLE;
    for (size_t r = 0; r < perRank.size(); ++r)
      command += fmt::format("{} -np 1 {} {}", r ? " :" : "", HOSTIR_BINARY, perRank[r]);
    return shell(command);
  }
  CommandResult mpirun(int ranks, const std::string& args) {
    return shell(fmt::format("env {} {} -np {} {} {}", HOSTIR_MPI_ENV, MPIEXEC_EXECUTABLE, ranks, HOSTIR_BINARY, args));
  }
  // The side n of the row-parallel program whose serial reference (n³ f64
  // multiply-adds) takes about `seconds` on this machine now: the reference is
  // timed at a small size, in one process, and scaled by n³, so the test below
  // means the same on a faster or a slower machine.
  int64_t referenceSideLasting(double seconds) {
    constexpr int64_t kProbe = 384;
    auto timed = [&](const char* check) {
      std::string args = fmt::format(" run {} --set M={} --set K={} --set N={}{}",
                                     CliTest::example("row_parallel_linear.hir"), kProbe, kProbe, kProbe, check);
      CommandResult r = shell(HOSTIR_BINARY + args);
      EXPECT_EQ(r.exitCode, 0) << r.err;
      return r.seconds;
    };
    const double reference = std::max(timed(" --check") - timed(""), 1e-3);
    const double side = static_cast<double>(kProbe) * std::cbrt(seconds / reference);
    // A multiple of 64 (K is sharded over the ranks), within what a test may allocate.
    return std::clamp<int64_t>((static_cast<int64_t>(side) + 63) / 64 * 64, kProbe, 4096);
  }
  static void expectEndedWithReason(const CommandResult& r, double timeout, const std::string& reason) {
    EXPECT_NE(r.exitCode, 0) << r.err;
    EXPECT_LT(r.seconds, timeout + kGraceSeconds) << r.err;
    EXPECT_THAT(r.err, HasSubstr(reason));
    EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  }
};

TEST_F(MpiFaults, StoppedRankBetweenRunsEndsTheJob) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirun(2, "run " + p + " --repeat 5 --comm-timeout 2 --inject-fault stop:1:run:2");
  expectEndedWithReason(r, 2, "the barrier before run 3 has not completed after 2 s");
}

TEST_F(MpiFaults, StoppedRankInsideACommunicationIsNamedByThePeer) {
  std::string p = write("p.hir", kChunkedAllreduce);
  // Rank 1 stops just after the barrier that starts run 2: rank 0 goes on
  // into the run's first allreduce, which can never complete.
  auto r = mpirun(2, "run " + p + " --repeat 3 --comm-timeout 2 --inject-fault stop:1:running:1");
  expectEndedWithReason(r, 2, "(allreduce issued at 7:9) has not completed after 2 s");
}

TEST_F(MpiFaults, StoppedRankAtSetUpEndsTheJob) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirun(2, "run " + p + " --comm-timeout 2 --inject-fault stop:1:setup");
  expectEndedWithReason(r, 2, "the start-up agreement between the ranks has not completed after 2 s");
}

TEST_F(MpiFaults, StoppedRankAtShutdownEndsTheJob) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirun(2, "run " + p + " --comm-timeout 2 --inject-fault stop:1:exit");
  expectEndedWithReason(r, 2, "the barrier that ends the job has not completed after 2 s");
}

TEST_F(MpiFaults, KilledRankEndsTheJob) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirun(2, "run " + p + " --repeat 5 --comm-timeout 2 --inject-fault kill:1:run:1");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_LT(r.seconds, 2 + kGraceSeconds) << r.err;
}

TEST_F(MpiFaults, OneRankCannotOpenItsProgram) {
  std::string p = write("p.hir", kChunkedAllreduce);
  // A long timeout: the job must end because rank 1 said so, not by timing out.
  auto r = mpirunEach(
      {"run " + p + " --comm-timeout 120", "run " + (dir_ / "missing.hir").string() + " --comm-timeout 120"});
  expectEndedWithReason(r, 0, "missing.hir: error: cannot open the program");
  EXPECT_THAT(r.err, HasSubstr("rank 1"));
}

TEST_F(MpiFaults, OneRankHasABadCommandLine) {
  // Refused before MPI starts: mpirun ends the job when that rank exits.
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirunEach({"run " + p + " --comm-timeout 120", "run " + p + " --comm-timeout 120 --streams 0"});
  expectEndedWithReason(r, 0, "--streams: must be an integer from 1 to 1024, got '0'");
}

// Copy engines need one address space: MPI processes are refused by every
// rank before any work, with the reason, and the job ends.
TEST_F(MpiFaults, CopyEnginesAcrossProcessesAreRefused) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirun(2, "run " + p + " --backend cpu --communicator copy-engine --comm-timeout 120");
  expectEndedWithReason(r, 0, "error: backend cpu cannot use the copy-engine communicator across processes");
  EXPECT_EQ(r.exitCode, 2);  // what no machine can do is a usage error
}

TEST_F(MpiFaults, OneRankHasASyntaxError) {
  std::string p = write("p.hir", kChunkedAllreduce);
  std::string bad = write("bad.hir", "program bad(N = 4) {\n  input t : f32[N]\n  output y : f32[N\n}\n");
  auto r = mpirunEach({"run " + p + " --comm-timeout 120", "run " + bad + " --comm-timeout 120"});
  expectEndedWithReason(r, 0, "bad.hir:3:");
  EXPECT_THAT(r.err, HasSubstr("rank 1 of 2 could not start the run"));
}

TEST_F(MpiFaults, AnErrorEveryRankFindsIsPrintedOnce) {
  std::string bad = write("bad.hir", "program bad(N = 4) {\n  input t : f32[N]\n  oops\n}\n");
  auto r = mpirun(3, "run " + bad + " --comm-timeout 120");
  expectEndedWithReason(r, 0, "bad.hir:3:");
  EXPECT_EQ(occurrences(r.err, "bad.hir:3:"), 1u) << r.err;
}

TEST_F(MpiFaults, RanksWithDifferentParametersAreToldWhatDiffers) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirunEach({"run " + p + " --set M=64 --comm-timeout 120", "run " + p + " --set M=128 --comm-timeout 120"});
  expectEndedWithReason(r, 0, "parameter M is 64 on rank 0 but 128 on rank 1");
  EXPECT_EQ(r.exitCode, 2);
}

TEST_F(MpiFaults, RanksWithDifferentFloatOrDTypeParametersAreToldWhatDiffers) {
  std::string p = write("p.hir",
                        "program p(N = 8, lr = 0.5, DT = f32) {\n  input x : DT[N]\n  output y : DT[N]\n"
                        "  y = scale(x, by=lr)\n}\n");
  auto rate = mpirunEach({"run " + p + " --comm-timeout 120", "run " + p + " --set lr=0.25 --comm-timeout 120"});
  expectEndedWithReason(rate, 0, "parameter lr is '0.5' on rank 0 but something else on rank 1");
  EXPECT_EQ(rate.exitCode, 2);
  auto dtype = mpirunEach({"run " + p + " --set DT=f16 --comm-timeout 120", "run " + p + " --comm-timeout 120"});
  expectEndedWithReason(dtype, 0, "parameter DT is 'f16' on rank 0 but something else on rank 1");
}

TEST_F(MpiFaults, RanksWithDifferentOptionsAreToldWhatDiffers) {
  std::string p = write("p.hir", kChunkedAllreduce);
  auto r = mpirunEach({"run " + p + " --streams 4", "run " + p + " --streams 8", "run " + p + " --streams 4"});
  expectEndedWithReason(r, 0, "--streams is 4 on rank 0 but 8 on rank 1");
}

// The options that change the program the passes make, or how the ranks
// meet, are compared too: a rank with --unchecked used to wait 300 s for a
// peer that was making another communicator, and ranks with different
// --min-gain ran different programs with their collectives paired wrongly.
TEST_F(MpiFaults, RanksWithOptionsThatShapeTheRunAreToldWhatDiffers) {
  std::string p = write("p.hir", kChunkedAllreduce);
  const std::string overlap = " --passes overlap --machine h100-nvlink";
  struct Case {
    std::string first, second, reason;
  };
  for (const Case& c : std::vector<Case>{
           {"run " + p + " --unchecked", "run " + p, "--unchecked is 'true' on rank 0 but something else on rank 1"},
           {"run " + p + overlap + " --min-gain 0", "run " + p + overlap, "--min-gain is '0' on rank 0"},
           {"run " + p + overlap, "run " + p + " --passes overlap --machine h200-nvlink",
            "--machine is 'h100-nvlink' on rank 0"},
           {"run " + p, "run " + p + " --output y=" + (dir_ / "y.npy").string(),
            "--output's names is (none) on rank 0 but something else on rank 1"},
       }) {
    SCOPED_TRACE(c.second);
    auto r = mpirunEach({c.first, c.second});
    expectEndedWithReason(r, 0, "the ranks were started differently");
    EXPECT_THAT(r.err, HasSubstr(c.reason));
    EXPECT_EQ(r.exitCode, 2);
  }
}

// Rank 0's serial reference for --check is its own work and takes several
// times --comm-timeout here: its peers, waiting at the vote on races, hear
// it beat and wait; the healthy job ends well (it used to be aborted).
TEST_F(MpiFaults, ALongSerialReferenceOnRankZeroDoesNotEndAHealthyJob) {
  const int64_t n = referenceSideLasting(4.0);
  auto r = mpirun(2, fmt::format("run {} --set M={} --set K={} --set N={} --check --comm-timeout 1",
                                 example("row_parallel_linear.hir"), n, n, n));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
  EXPECT_GT(r.seconds, 2.0) << "the reference must outlast --comm-timeout for this test to mean anything";
}

TEST_F(MpiFaults, RanksWithDifferentProgramsAreToldSo) {
  std::string p = write("p.hir", kChunkedAllreduce);
  std::string q = write("q.hir", std::string(kChunkedAllreduce) + "# another program text\n");
  auto r = mpirunEach({"run " + p, "run " + q});
  expectEndedWithReason(r, 0, "the program text differs between rank 0 and rank 1");
  EXPECT_EQ(r.exitCode, 2);
}

TEST_F(MpiFaults, UncheckedRankDependentCommunicationsStopAtTheStatement) {
  for (const char* program : {kLoopByRank, kSizeByRank, kRootByRank}) {
    auto r = mpirun(2, "run " + write("p.hir", program) + " --unchecked --comm-timeout 120");
    expectEndedWithReason(r, 0, "does not match across ranks");
    EXPECT_THAT(r.err, AllOf(Not(HasSubstr("TRUNCATE")), HasSubstr("p.hir:")));
  }
}

// A NumPy .npy file (format 1.0) of `values` with dtype `descr` ('<i4',
// '<f4') and `shape` ("(6,)"), for --input.
template <typename T>
std::string npyBytes(const char* descr, const std::string& shape, const std::vector<T>& values) {
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  header.resize((10 + header.size() + 1 + 63) / 64 * 64 - 10 - 1, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return bytes;
}

// An index out of range on rank 1 is raised on a stream's thread, whose
// abort ends the job: it must say what the same run says in process, with
// the statement's position and the program's names, once.
TEST_F(MpiFaults, AnIndexOutOfRangeOnAStreamReachesTheUserWithItsPosition) {
  const std::string p = write("routed.hir", kRoutedGather);
  const std::string table = write("table.npy", npyBytes<float>("<f4", "(4, 3)", std::vector<float>(12, 1.0f)));
  const std::string routes = write("routes.npy", npyBytes<int32_t>("<i4", "(6,)", {0, -1, 3, 2, 9, 1}));
  auto r = mpirun(2, fmt::format("run {} --input table={} --input routes={} --comm-timeout 120", p, table, routes));
  const std::string error =
      "routed.hir:5:12: error: index 9 of 'routes' is out of range for 'table' with 4 rows (on rank 1)";
  expectEndedWithReason(r, 0, error);
  EXPECT_EQ(occurrences(r.err, error), 1u) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("a stream failed")));
}

TEST_F(MpiFaults, AllocationBeyondMemoryReachesTheUser) {
  auto r = mpirun(2, "run " + write("huge.hir", kHugeAllocation) + " --comm-timeout 120");
  expectEndedWithReason(r, 0, "huge.hir:4:9: error: cannot allocate 4.00 TiB for 'big'");
}

}  // namespace
}  // namespace hostir::testing
