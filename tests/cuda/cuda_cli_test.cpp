// `hostir run --backend cuda|auto` as a user runs it, on any machine: with
// a usable device both run on it and pass --check; without one, `cuda`
// exits 1 naming the reason and `auto` falls back to the CPU. These two need
// no device, so they run (and must pass) everywhere; the rank-per-device
// check is skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "executor/backend_factory.h"
#include "executor/cuda/cuda_devices.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

struct CommandResult {
  int exitCode = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CommandResult runHostir(const std::string& args) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hostir_cuda_cli_" + std::to_string(::getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  const std::string command = std::string(HOSTIR_BINARY) + " " + args + " >" + (dir / "out").string() + " 2>" +
                              (dir / "err").string() + " </dev/null";
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

std::string example(const std::string& name) { return std::string(HOSTIR_SOURCE_DIR) + "/examples/" + name + ".hir"; }

// In-process ranks need a device each once CUDA runs them.
int ranksToUse() { return cuda::usableDeviceCount() == 1 ? 1 : 2; }

TEST(CudaCli, BackendCudaRunsOrNamesTheReason) {
  const std::string args =
      fmt::format("run {} --ranks {} --backend cuda --check", example("row_parallel_linear"), ranksToUse());
  CommandResult r = runHostir(args);
  if (std::optional<std::string> reason = cudaUnavailableReason()) {
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: backend cuda: " + *reason));
    EXPECT_EQ(r.out, "");
  } else {
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("check: ok"));
  }
}

// The CLI's --graph on a device: captured once, replayed by the warm-up and
// timed runs, and checked against the serial reference.
TEST(CudaCli, GraphRunsPassTheirCheck) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  for (const std::string communicator : {"nccl", "copy-engine"}) {
    const int ranks = communicator == "nccl" ? 1 : 2;  // copy engines: two ranks may share the device
    CommandResult r = runHostir(fmt::format(
        "run {} --passes assign-streams --ranks {} --backend cuda --communicator {} --graph --warmup 2 --repeat 3 "
        "--check",
        example("row_parallel_linear"), ranks, communicator));
    EXPECT_EQ(r.exitCode, 0) << communicator << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("check: ok")) << communicator;
  }
}

TEST(CudaCli, BackendAutoRunsEverywhere) {
  CommandResult r = runHostir(fmt::format("run {} --passes assign-streams --ranks {} --backend auto --check",
                                          example("row_parallel_linear"), ranksToUse()));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
  EXPECT_EQ(r.err, "");
}

// NCCL drives one device per rank: more ranks than devices with NCCL is
// the user's error, reported once with exit 1 (not an internal error),
// before any rank sets up NCCL.
TEST(CudaCli, MoreRanksThanDevicesIsReportedForNccl) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  const int devices = cuda::usableDeviceCount();
  CommandResult r = runHostir(
      fmt::format("run {} --ranks {} --backend cuda --communicator nccl", example("row_parallel_linear"), devices + 1));
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(fmt::format("error: backend cuda needs a CUDA device per rank for NCCL: {} ranks share "
                                           "this node's {} device",
                                           devices + 1, devices)));
  EXPECT_EQ(r.out, "");
}

// In-process ranks beyond the devices share them through the copy-engine
// communicator, which `auto` picks there.
TEST(CudaCli, MoreRanksThanDevicesShareThemThroughCopyEngines) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  const int devices = cuda::usableDeviceCount();
  for (const char* communicator : {"auto", "copy-engine"}) {
    CommandResult r =
        runHostir(fmt::format("run {} --passes assign-streams --ranks {} --backend cuda --communicator {} --check",
                              example("row_parallel_linear"), devices + 1, communicator));
    EXPECT_EQ(r.exitCode, 0) << communicator << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("check: ok")) << communicator;
  }
}

}  // namespace
}  // namespace hostir
