// The CUDA backend against the CPU backend: every program of examples/
// and every operation program (copy, add, linear with bias, matmul, the
// collectives with every op and axis, broadcast, strided views, in every
// dtype), as written and after assign-streams, on in-process teams of 1
// rank and of 2 ranks when there are 2 devices (NCCL), and of 2 and 3
// ranks sharing the devices there are (the copy-engine communicator). Both
// backends run the same request from the same seeded inputs; the outputs
// must agree within the dtype's tolerance. Then the CUDA trace, and
// stream-ordered frees. Without a usable device every case is skipped,
// with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "api/output_comparison.h"
#include "executor/backend_factory.h"
#include "executor/cuda/cuda_devices.h"
#include "harness.h"
#include "op_programs.h"
#include "test_files.h"
#include "trace_checks.h"

namespace hostir::reftest {
namespace {

struct CudaCase {
  std::string label;  // the test name's suffix
  std::function<Program()> program;
  Params overrides;
  int64_t world = 1;
  bool assignStreams = false;
  CommunicatorChoice communicator = CommunicatorChoice::Nccl;
};

std::ostream& operator<<(std::ostream& os, const CudaCase& c) { return os << c.label; }

std::string identifier(std::string text) {
  for (char& ch : text)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

// Each program as written and (when its iterations are independent) after
// assign-streams, for teams of 1 and 2 on NCCL and of 2 and 3 on copy engines.
void addVariants(std::vector<CudaCase>& cases, const std::string& label, const std::function<Program()>& program,
                 const Params& overrides, bool assignStreamsSafe) {
  for (auto [communicator, world] :
       {std::pair{CommunicatorChoice::Nccl, 1}, std::pair{CommunicatorChoice::Nccl, 2},
        std::pair{CommunicatorChoice::CopyEngine, 2}, std::pair{CommunicatorChoice::CopyEngine, 3}}) {
    for (bool assigned : {false, true}) {
      if (assigned && !assignStreamsSafe) continue;
      cases.push_back(CudaCase{fmt::format("{}_world{}{}{}", label, world, assigned ? "_assigned" : "",
                                           communicator == CommunicatorChoice::CopyEngine ? "_copy_engine" : ""),
                               program, overrides, world, assigned, communicator});
    }
  }
}

std::vector<CudaCase> exampleCases() {
  std::vector<CudaCase> cases;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/examples"))
    if (entry.path().extension() == ".hir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::string file = path.string();
    addVariants(
        cases, "example_" + identifier(path.stem().string()), [file] { return parseOrThrow(readText(file), file); }, {},
        true);
  }
  // The benchmark program of scripts/gpu-check.sh, at a small shape.
  std::string bench = sourceDir() + "/bench/row_parallel_bf16.hir";
  addVariants(
      cases, "bench_row_parallel_bf16", [bench] { return parseOrThrow(readText(bench), bench); },
      {{"T", 96}, {"H", 64}, {"S", 4}}, true);
  return cases;
}

std::vector<CudaCase> operationCases() {
  std::vector<CudaCase> cases;
  for (const OpProgram& op : opPrograms()) {
    for (DType dtype : kDTypes) {
      std::string text = withDType(op.text, dtype);
      addVariants(
          cases, fmt::format("{}_{}", op.name, dtypeName(dtype)), [text] { return parseOrThrow(text); }, {},
          op.assignStreamsSafe);
    }
  }
  return cases;
}

class CudaBackendTest : public ::testing::TestWithParam<CudaCase> {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
    // NCCL needs a device per rank; copy engines share them.
    if (GetParam().communicator == CommunicatorChoice::Nccl && GetParam().world > cuda::usableDeviceCount())
      GTEST_SKIP() << fmt::format("NCCL needs {} CUDA devices, this machine has {}", GetParam().world,
                                  cuda::usableDeviceCount());
  }

  // Runs `request` on `backend`; fails the test (and returns nullopt) on an error or a hang.
  std::optional<RunResult> runOn(RunRequest request, BackendKind backend, int64_t world) {
    request.backend.kind = backend;
    auto result = runWithin(request, world, std::chrono::seconds(120));
    const char* name = backend == BackendKind::Cuda ? "cuda" : "cpu";
    if (!result) {
      ADD_FAILURE() << name << " run did not finish within 120 s";
      return std::nullopt;
    }
    if (!*result) {
      ADD_FAILURE() << name << " run failed: " << result->error().message;
      return std::nullopt;
    }
    return std::move(**result);
  }
};

TEST_P(CudaBackendTest, MatchesTheCpuBackend) {
  const CudaCase& c = GetParam();
  Program program = c.program();
  if (Status invalid = verifyFor(program, c.overrides, c.world))
    GTEST_SKIP() << "the program does not verify for " << c.world << " ranks: " << invalid->message;
  // Proved for this team, as `run --passes assign-streams` does.
  if (c.assignStreams) program = assignStreams(program, c.world, c.overrides);
  // One stream (every worker stream shares a slot) and a pool of 4; three
  // runs each, so later runs reuse the first one's streams, event positions
  // and retired memory.
  for (int64_t streams : {1, 4}) {
    RunRequest request = makeRequest(program, bindAll(program, c.overrides), /*seed=*/11, streams);
    request.repeat = 3;
    std::optional<RunResult> cpu = runOn(request, BackendKind::Cpu, c.world);
    request.backend.communicator = c.communicator;
    std::optional<RunResult> gpu = runOn(request, BackendKind::Cuda, c.world);
    ASSERT_TRUE(cpu && gpu);
    Comparison comparison = compareOutputs(gpu->outputs, cpu->outputs);
    EXPECT_TRUE(comparison.ok) << "streams=" << streams << "\n" << comparison.report;
  }
}

std::string streamOrderedFreesProgram() {
  return hostir::testing::testProgramText("cuda/programs/stream_ordered_frees.hir");
}

// The program file of the test below parses and verifies with or without a
// device: a missing or broken file fails here where that test is skipped.
TEST(CudaProgramFiles, TheStreamOrderedFreesProgramVerifies) {
  Program program = parseOrThrow(streamOrderedFreesProgram());
  Status invalid = verifyFor(program, {}, 1);
  EXPECT_FALSE(invalid) << invalid->message;
}

// Stream-ordered frees: a temporary deallocated on a worker stream after
// other streams used it goes back to the pool during the run, so the peak
// is the live set (x, y and one temporary), not every allocation; and the
// memory reused across streams gives the CPU backend's result.
TEST(CudaStreamOrderedFrees, PeakIsTheLiveSetAndResultsMatch) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  const std::string text = streamOrderedFreesProgram();
  Program program = parseOrThrow(text);
  RunRequest request = makeRequest(program, bindAll(program, {}), /*seed=*/3, /*streams=*/4);
  request.repeat = 2;
  std::optional<Result<RunResult>> results[2];
  for (BackendKind kind : {BackendKind::Cpu, BackendKind::Cuda}) {
    request.backend.kind = kind;
    auto& slot = results[kind == BackendKind::Cuda];
    slot = runWithin(request, 1, std::chrono::seconds(120));
    ASSERT_TRUE(slot && *slot) << (slot ? (*slot).error().message : "no result within 120 s");
  }
  const RunResult& cpu = results[0]->value();
  const RunResult& gpu = results[1]->value();
  Comparison comparison = compareOutputs(gpu.outputs, cpu.outputs);
  EXPECT_TRUE(comparison.ok) << comparison.report;
  ASSERT_TRUE(gpu.peakMemoryBytes.has_value());
  EXPECT_EQ(*gpu.peakMemoryBytes, uint64_t{3} * 4 * 65536);  // counted when issued, freed when deallocated
}

// --trace on CUDA: a 2-rank row-parallel run (copy engines when one GPU
// holds both ranks), checked as the CPU backend's trace is.
TEST(CudaTrace, EveryRankRecordsEveryChunksLinearAndAllreduceOnItsStream) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("hostir_cuda_trace_{}.json", ::getpid());
  expectRowParallelTimeline(BackendKind::Cuda, /*world=*/2, /*streams=*/2, path.string());
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Examples, CudaBackendTest, ::testing::ValuesIn(exampleCases()),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Operations, CudaBackendTest, ::testing::ValuesIn(operationCases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace hostir::reftest
