// `hostir simulate` as a user runs it: the predicted line, the trace in
// run's format, symmetry, and the errors.
#include <nlohmann/json.hpp>

#include <optional>
#include <regex>
#include <set>

#include "tests/cli_runner.h"
#include "tests/test_files.h"

namespace hostir::testing {
namespace {

using SimulateCli = CliTest;

// The figures of the `predicted:` line; fails the test when it is missing.
struct Predicted {
  double total = 0, compute = 0, comm = 0, exposed = 0, efficiency = 0;
};

Predicted predicted(const std::string& out) {
  static const std::regex line(
      R"(predicted: median_ms=([0-9.]+) compute_ms=([0-9.]+) comm_ms=([0-9.]+) exposed_comm_ms=([0-9.]+) E=(-?[0-9.]+))");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, line)) << out;
  if (m.empty()) return {};
  return {std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5])};
}

TEST_F(SimulateCli, TheIssueCommandPredictsAndWritesATraceInRunsFormat) {
  auto r = run("simulate " + example("row_parallel_linear.hir") +
               " --machine h100-nvlink --ranks 8 --passes assign-streams --trace " + (dir_ / "t.json").string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Predicted p = predicted(r.out);
  EXPECT_GT(p.total, 0);
  EXPECT_GE(p.total + 1e-9, std::max(p.compute, p.comm));  // overlap hides at most the shorter part
  EXPECT_LE(p.total, p.compute + p.comm + 0.01);
  EXPECT_NE(r.out.find("simulated: 1 rank standing for 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("busy_ms: host="), std::string::npos) << r.out;

  auto trace = nlohmann::json::parse(slurp(dir_ / "t.json"));
  std::set<std::string> names;
  std::set<int> tids;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    names.insert(event["name"].get<std::string>());
    tids.insert(event["tid"].get<int>());
    EXPECT_GE(event["dur"].get<double>(), 0);
  }
  EXPECT_TRUE(names.count("linear") && names.count("allreduce")) << trace.dump();
  EXPECT_GE(tids.size(), 5u);  // the host and four worker streams
}

// A profile whose figures have spreads (h100-shared's are measured) gives
// the range of the prediction with every figure at either end of its
// spread; one without spreads prints no range.
TEST_F(SimulateCli, SpreadsGiveARangeAroundThePrediction) {
  const std::string args = " --ranks 2 --passes assign-streams --set M=16384 --set K=256 --set N=8192 --set S=4";
  auto r = run("simulate " + example("row_parallel_linear.hir") + " --machine h100-shared" + args);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Predicted p = predicted(r.out);
  static const std::regex range(
      R"(\nrange: median_ms=([0-9.]+)\.\.([0-9.]+) \(the profile's figures at the fast and the slow ends of their spreads\)\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, range)) << r.out;
  EXPECT_LT(std::stod(m[1]), p.total) << r.out;
  EXPECT_GT(std::stod(m[2]), p.total) << r.out;
  auto plain = run("simulate " + example("row_parallel_linear.hir") + " --machine h100-nvlink" + args);
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(plain.out.find("range:"), std::string::npos) << plain.out;
}

// The speedup against the unchunked program (S=1), beside E: the S=1
// prediction over this one; 1 at S=1; absent without a chunk count.
std::optional<double> speedup(const std::string& out) {
  static const std::regex field(R"(E=-?[0-9.]+ speedup_vs_S1=([0-9.]+)\n)");
  std::smatch m;
  if (!std::regex_search(out, m, field)) return std::nullopt;
  return std::stod(m[1]);
}

TEST_F(SimulateCli, PrintsTheSpeedupAgainstTheUnchunkedProgram) {
  const std::string common = "simulate " + example("row_parallel_linear.hir") +
                             " --machine h100-nvlink --ranks 8 --passes assign-streams --set M=8192 --set K=4096";
  auto chunked = run(common + " --set S=4");
  auto unchunked = run(common + " --set S=1");
  ASSERT_EQ(chunked.exitCode, 0) << chunked.err;
  ASSERT_EQ(unchunked.exitCode, 0) << unchunked.err;
  ASSERT_TRUE(speedup(chunked.out)) << chunked.out;
  // The printed times have 4 decimals, the speedup 2.
  EXPECT_NEAR(*speedup(chunked.out), predicted(unchunked.out).total / predicted(chunked.out).total, 0.006)
      << chunked.out;
  EXPECT_EQ(speedup(unchunked.out), 1.0) << unchunked.out;
  // The program's default S (4) is its chunk count too.
  auto byDefault = run("simulate " + example("row_parallel_linear.hir") + " --machine h100-nvlink --ranks 2");
  ASSERT_EQ(byDefault.exitCode, 0) << byDefault.err;
  EXPECT_TRUE(speedup(byDefault.out)) << byDefault.out;
  auto unchunkedProgram = run("simulate " + example("broadcast.hir") + " --machine h100-nvlink --ranks 2");
  ASSERT_EQ(unchunkedProgram.exitCode, 0) << unchunkedProgram.err;
  EXPECT_EQ(unchunkedProgram.out.find("speedup_vs_S1"), std::string::npos) << unchunkedProgram.out;
}

// On the copy engines a communication holds no SM and a GEMM beside it
// neither slows nor is slowed (docs/cost-model.md): an overlapped
// row-parallel layer predicts no slower than with NCCL's SM kernels.
TEST_F(SimulateCli, TheCopyEngineCommunicatorIsPricedWithoutContentionAgainstGemms) {
  const std::string common = "simulate " + example("row_parallel_linear.hir") +
                             " --machine h100-nvlink --ranks 8 --passes assign-streams --set M=8192 --set K=4096";
  auto kernels = run(common + " --communicator nccl");
  auto copyEngines = run(common + " --communicator copy-engine");
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  ASSERT_EQ(copyEngines.exitCode, 0) << copyEngines.err;
  EXPECT_LT(predicted(copyEngines.out).total, predicted(kernels.out).total) << copyEngines.out << kernels.out;
  auto bad = run(common + " --communicator pigeons");
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
}

TEST_F(SimulateCli, OneStreamOverlapsNothing) {
  // As written, every chunk's GEMM and allreduce run on the main stream, one
  // after the other (at a shape where the work, not the host, sets the time).
  auto r = run("simulate " + example("row_parallel_linear.hir") +
               " --machine h100-nvlink --ranks 2 --set M=8192 --set K=8192 --set N=8192");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Predicted p = predicted(r.out);
  EXPECT_NEAR(p.efficiency, 0, 0.02) << r.out;
  EXPECT_NEAR(p.exposed, p.total - p.compute, 1e-3);
}

// strip-compute removes `y = linear(x, w)` as it removes `linear(x, w,
// out=y)`: the communication-only variant of a program without
// communication costs no GEMM, whichever form it is written in, and the
// two forms of a program that communicates predict the same comm_ms.
TEST_F(SimulateCli, ValueAndOutFormsStripAlikeForCommMs) {
  const std::string shapes = " --machine h100-nvlink --ranks 2 --set M=4096 --set K=4096 --set N=4096";
  auto program = [&](const std::string& name, const std::string& gemm, bool communicate) {
    return write(name,
                 "program p(M = 64, K = 64, N = 64) {\n  input x : f32[M, K]\n  input w : f32[N, K]\n"
                 "  output y : f32[M, N]\n" +
                     gemm + (communicate ? "  allreduce(y, op=sum)\n" : "") + "}\n");
  };
  const std::string valueForm = "  y = linear(x, w)\n";
  const std::string outForm = "  y = allocate(f32[M, N])\n  linear(x, w, out=y)\n";
  for (bool communicate : {false, true}) {
    SCOPED_TRACE(communicate ? "with an allreduce" : "without communication");
    auto value = run("simulate " + program("value.hir", valueForm, communicate) + shapes);
    auto out = run("simulate " + program("out.hir", outForm, communicate) + shapes);
    ASSERT_EQ(value.exitCode, 0) << value.err;
    ASSERT_EQ(out.exitCode, 0) << out.err;
    Predicted v = predicted(value.out), o = predicted(out.out);
    EXPECT_GT(v.compute, 1.0) << value.out;  // a 4096^3 GEMM: over a millisecond
    EXPECT_NEAR(v.comm, o.comm, 0.01) << value.out << out.out;
    if (!communicate) {
      EXPECT_EQ(v.comm, 0) << value.out;  // no communication, no comm_ms
      EXPECT_EQ(v.efficiency, 0) << value.out;
    }
  }
}

TEST_F(SimulateCli, AProgramThatNamesRankIsSimulatedOnEveryRank) {
  auto path = write("p.hir", testProgramText("tools/programs/rank_sized_allocation.hir"));
  auto r = run("simulate " + path + " --machine h100-nvlink --ranks 3");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("simulated: all 3 ranks"), std::string::npos) << r.out;
}

TEST_F(SimulateCli, EveryExampleSimulatesOnEveryShippedProfile) {
  for (const char* machine : {"h100-nvlink", "h200-nvlink"})
    for (const char* name :
         {"row_parallel_linear.hir", "all_gather.hir", "reduce_scatter.hir", "broadcast.hir", "events.hir"}) {
      auto r = run("simulate " + example(name) + " --machine " + machine + " --ranks 2 --passes assign-streams");
      EXPECT_EQ(r.exitCode, 0) << name << " on " << machine << ": " << r.err;
      EXPECT_GT(predicted(r.out).total, 0) << name;
    }
}

TEST_F(SimulateCli, AnUnknownMachineListsTheShippedOnes) {
  auto r = run("simulate " + example("row_parallel_linear.hir") + " --machine a100");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("h100-nvlink"), std::string::npos) << r.err;
  EXPECT_EQ(occurrences(r.err, "error"), 1u) << r.err;
}

TEST_F(SimulateCli, ABadProfileFileIsOneClearError) {
  auto profile = write("bad.json", "{\"format\": \"hostir-machine-profile\",\n \"version\": 1,\n}");
  auto r = run("simulate " + example("row_parallel_linear.hir") + " --machine " + profile);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
}

TEST_F(SimulateCli, TheMachineIsRequired) {
  auto r = run("simulate " + example("row_parallel_linear.hir"));
  EXPECT_EQ(r.exitCode, 2) << r.err;
}

TEST_F(SimulateCli, ARacyProgramIsRefusedAsRunRefusesIt) {
  auto path = write("racy.hir", testProgramText("tools/programs/racy_copy_on_worker_stream.hir"));
  auto r = run("simulate " + path + " --machine h100-nvlink");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("race"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("refusing to simulate"), std::string::npos) << r.err;
}

TEST_F(SimulateCli, AThousandRanksTakeSecondsBySymmetry) {
  auto r = run("simulate " + example("row_parallel_linear.hir") +
               " --machine h100-nvlink --ranks 1024 --set M=8192 --set K=16384 --set N=8192 --set S=8"
               " --passes assign-streams");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("1 rank standing for 1024"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace hostir::testing
