// CPU stream threads start at a stream's first task: a rank with a pool of
// 1024 streams that runs a program on two of them has two worker threads
// (and its main stream and watchdog), not 1024. Counted from the kernel's
// list of this process's threads, so no counter in the code can lie.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "comm/in_process_communicator.h"
#include "executor/cpu/blas_library.h"
#include "executor/cpu/cpu_backend.h"
#include "harness.h"
#include "runtime/evaluator.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

size_t threadsOfThisProcess() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

// Runs on the main stream, then stream(0), then stream(1), each after the last: y = 2x.
std::string twoStreams() { return testing::testProgramText("executor/programs/two_streams.hir"); }

std::vector<float> runTwoStreams(Backend& backend, int64_t rank, int64_t world) {
  Program program = parseOrThrow(twoStreams(), "two_streams.hir");
  if (Status error = verifyFor(program, {}, world)) throw std::runtime_error(error->message);
  Evaluator evaluator(program, bindAll(program, {}), rank, world);
  TensorView x = backend.allocate(DType::F32, Dims{8}, backend.mainStream(), false);
  std::vector<float> host(8);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  backend.upload(host.data(), x);
  auto outputs = evaluator.run(backend, {{"x", x}});
  backend.download(outputs.at("y"), host.data());
  return host;
}

TEST(LazyStreams, ATeamOfLargePoolsStartsOnlyTheStreamsItUses) {
  const int world = 8;
  const int64_t poolSize = 1024;
  InProcessTeam team(world);
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<std::unique_ptr<cpu::CpuBackend>> backends;
  // Threads that are not the backends': what loading OpenBLAS (once per
  // process) starts, and ThreadSanitizer's own, which it starts with the
  // process's first thread.
  cpu::blasLibrary();
  std::thread([] {}).join();
  const size_t before = threadsOfThisProcess();
  for (int rank = 0; rank < world; ++rank) {
    comms.push_back(team.communicator(rank));
    cpu::CpuBackendOptions options;
    options.streams = poolSize;
    backends.push_back(std::make_unique<cpu::CpuBackend>(options, *comms.back()));
  }
  // Nothing issued yet: each rank has its watchdog only.
  EXPECT_LE(threadsOfThisProcess(), before + world) << "8 ranks x 1024 streams";
  for (int rank = 0; rank < world; ++rank) {
    std::vector<float> y = runTwoStreams(*backends[static_cast<size_t>(rank)], rank, world);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], 2.0f * static_cast<float>(i)) << "rank " << rank;
  }
  // Each rank: its watchdog, its main stream and the two streams it used.
  EXPECT_LE(threadsOfThisProcess(), before + world * 4);
  backends.clear();
  EXPECT_LE(threadsOfThisProcess(), before);
}

TEST(LazyStreams, AStreamThatNeverRanHasReachedPositionZeroAndEndsAtOnce) {
  cpu::CpuStream stream(
      3, {}, [] { return false; }, [](std::exception_ptr) {});
  EXPECT_FALSE(stream.started());
  EXPECT_TRUE(stream.reached(0));
  EXPECT_FALSE(stream.reached(1));
  stream.waitFor(0);  // returns: nothing was issued
  EXPECT_EQ(stream.issued(), 0u);
  EXPECT_FALSE(stream.started());
}

TEST(LazyStreams, TheFirstTaskStartsTheThreadAndRunsInOrder) {
  cpu::CpuStream stream(
      0, {}, [] { return false; }, [](std::exception_ptr) {});
  std::vector<int> ran;
  uint64_t last = 0;
  for (int i = 0; i < 100; ++i) last = stream.enqueue([&ran, i] { ran.push_back(i); });
  EXPECT_TRUE(stream.started());
  stream.waitFor(last);
  ASSERT_EQ(ran.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[static_cast<size_t>(i)], i);
}

TEST(LazyStreams, AnEventOnAStreamThatNeverRanIsReachedAtOnce) {
  InProcessTeam team(1);
  auto comm = team.communicator(0);
  cpu::CpuBackendOptions options;
  options.streams = 16;
  cpu::CpuBackend backend(options, *comm);
  backend.beginRun();
  // stream(5) never ran anything: waiting for it queues nothing and starts nothing.
  Event event = backend.recordEvent(backend.workerStream(5));
  backend.waitEvent(backend.workerStream(2), event);
  EXPECT_FALSE(static_cast<cpu::CpuStream*>(backend.workerStream(2))->started());
  backend.synchronizeHost();
  EXPECT_FALSE(static_cast<cpu::CpuStream*>(backend.workerStream(5))->started());
}

}  // namespace
}  // namespace hostir::reftest
