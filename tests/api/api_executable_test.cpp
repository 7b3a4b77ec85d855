// The executable through the public API: prepared once, run many times, on
// in-process teams; results against references the test computes itself.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"
#include "sanitizers.h"
#include "test_files.h"

namespace {

using hostir::api::DType;
using hostir::api::Error;
using hostir::api::ErrorKind;
using hostir::api::Executable;
using hostir::api::HostBuffer;
using hostir::api::Program;
using hostir::api::RunOptions;
using hostir::api::testing::errorOf;
using Clock = std::chrono::steady_clock;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";
constexpr int64_t M = 12, K = 16, N = 8;

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

// y = x @ w^T, in double.
void expectLinear(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& y) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += double(x[m * K + k]) * w[n * K + k];
      ASSERT_NEAR(y[m * N + n], sum, 1e-4 * (1 + std::abs(sum))) << "y[" << m << ", " << n << "]";
    }
}

RunOptions rowParallel(int64_t ranks) {
  RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 3}};
  options.ranks = ranks;
  options.passes = {"assign-streams"};
  return options;
}

// One step of a caller's loop: fresh inputs, the output checked.
struct Step {
  std::vector<float> x, w, y;
  explicit Step(unsigned seed) : x(randomValues(M * K, seed)), w(randomValues(N * K, seed + 1)), y(M * N, NAN) {}
  std::map<std::string, HostBuffer> inputs() {
    return {{"x", {DType::F32, {M, K}, x.data()}}, {"w", {DType::F32, {N, K}, w.data()}}};
  }
  std::map<std::string, HostBuffer> outputs() { return {{"y", {DType::F32, {M, N}, y.data()}}}; }
};

class ExecutableRun : public testing::TestWithParam<int64_t> {};

TEST_P(ExecutableRun, EveryCallMatchesTheProductAndRun) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  Executable exe(p, rowParallel(GetParam()));
  for (unsigned seed = 1; seed < 6; ++seed) {
    Step step(seed);
    hostir::api::RunStats stats = exe.run(step.inputs(), step.outputs());
    EXPECT_EQ(stats.runMillis.size(), 1u);
    expectLinear(step.x, step.w, step.y);
    std::vector<float> once(M * N, NAN);
    hostir::api::run(p, step.inputs(), {{"y", {DType::F32, {M, N}, once.data()}}}, rowParallel(GetParam()));
    EXPECT_EQ(once, step.y);  // the same ranks, streams and kernels: the same bits
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ExecutableRun, testing::Values(1, 2, 4));

TEST(Executable, TensorsAreTheCompiledDeclarations) {
  Executable exe(Program::fromFile(kExamples + "row_parallel_linear.hir"), rowParallel(2));
  ASSERT_EQ(exe.tensors().size(), 3u);
  EXPECT_EQ(exe.tensors()[0].name, "x");
  EXPECT_EQ(exe.tensors()[0].shape, (std::vector<int64_t>{M, K}));
  EXPECT_FALSE(exe.tensors()[2].input);
}

TEST(Executable, BadInputsNameTheInputAndLeaveItUsable) {
  Executable exe(Program::fromFile(kExamples + "row_parallel_linear.hir"), rowParallel(2));
  Step step(7);
  std::vector<float> wrong(M * K * 2);
  auto withInput = [&](const std::string& name, HostBuffer buffer) {
    auto inputs = step.inputs();
    inputs[name] = buffer;
    return inputs;
  };
  auto missing = step.inputs();
  missing.erase("w");
  struct Case {
    std::map<std::string, HostBuffer> inputs;
    std::string named;
  };
  std::vector<Case> cases{
      {missing, "input 'w' is missing"},
      {withInput("z", {DType::F32, {M, K}, wrong.data()}), "no input named 'z'"},
      {withInput("x", {DType::F32, {M, K + 1}, wrong.data()}), "input 'x'"},
      {withInput("x", {DType::F64, {M, K}, wrong.data()}), "input 'x'"},
      {withInput("x", {DType::F32, {M, K}, nullptr}), "input 'x'"},
  };
  for (Case& c : cases) {
    Error e = errorOf([&] { exe.run(c.inputs, step.outputs()); });
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(e.message().find(c.named), std::string::npos) << e.message();
  }
  Error e = errorOf([&] { exe.run(step.inputs(), {{"y", {DType::F32, {N, M}, step.y.data()}}}); });
  EXPECT_NE(e.message().find("output 'y'"), std::string::npos) << e.message();
  exe.run(step.inputs(), step.outputs());
  expectLinear(step.x, step.w, step.y);
}

TEST(Executable, MissingInputsAreFilledFromTheSeedWhenAsked) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  RunOptions options = rowParallel(2);
  options.fillMissingInputs = true;
  options.seed = 5;
  Executable exe(p, options);
  std::vector<float> y(M * N, NAN), once(M * N, NAN);
  exe.run({}, {{"y", {DType::F32, {M, N}, y.data()}}});
  hostir::api::run(p, {}, {{"y", {DType::F32, {M, N}, once.data()}}}, options);
  EXPECT_EQ(y, once);
}

TEST(Executable, AClosedExecutableRefusesToRun) {
  Executable exe(Program::fromFile(kExamples + "row_parallel_linear.hir"), rowParallel(2));
  EXPECT_FALSE(exe.closed());
  exe.close();
  exe.close();
  EXPECT_TRUE(exe.closed());
  Step step(3);
  Error e = errorOf([&] { exe.run(step.inputs(), step.outputs()); });
  EXPECT_EQ(e.kind(), ErrorKind::Usage);
  EXPECT_NE(e.message().find("closed"), std::string::npos) << e.message();
  Executable moved = std::move(exe);
  EXPECT_TRUE(moved.closed());
}

// Calls from several threads on one executable take turns; several
// executables run at once.
TEST(Executable, ConcurrentCallsTakeTurnsAndExecutablesRunAtOnce) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  Executable shared(p, rowParallel(2)), other(p, rowParallel(4));
  auto caller = [](Executable& exe, unsigned seed) {
    for (unsigned call = 0; call < 15; ++call) {
      Step step(seed + 10 * call);
      exe.run(step.inputs(), step.outputs());
      expectLinear(step.x, step.w, step.y);
    }
  };
  std::thread a(caller, std::ref(shared), 1), b(caller, std::ref(shared), 2), c(caller, std::ref(other), 3);
  a.join();
  b.join();
  c.join();
}

// The host issues every GEMM onto the main stream's queue in microseconds
// and then waits for the stream: about a second of queued work per run on
// two cores, of which a cancelled call must run at most one GEMM more.
std::string queued() { return hostir::testing::testProgramText("api/programs/queued_gemms.hir"); }

TEST(Executable, ACancelStopsQueuedWorkWithinASecond) {
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.ranks = 2;
  options.repeat = 1'000'000;  // longer than any machine takes to reach the cancel
  options.cancel = &cancel;
  options.fillMissingInputs = true;
  Executable exe(Program::fromText(queued(), "queued.hir"), options);
  std::optional<Error> error;
  std::thread caller([&] { error = errorOf([&] { exe.run({}, {}); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Clock::time_point set = Clock::now();
  cancel = true;
  caller.join();
  EXPECT_LT(Clock::now() - set, std::chrono::seconds(1));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::Run);
  EXPECT_NE(std::string(error->what()).find("the run was cancelled"), std::string::npos) << error->what();
}

// An interrupt that only the calling thread can see (Python's signals) is
// asked for while the caller waits.
TEST(Executable, AnInterruptCheckCancelsTheCallWithinASecond) {
  RunOptions options;
  options.ranks = 2;
  options.repeat = 1'000'000;
  options.fillMissingInputs = true;
  Clock::time_point runStart = Clock::time_point::max();  // set before the call; asked only during it
  std::atomic<int> checks{0};
  options.interruptCheck = [&] {
    ++checks;
    return Clock::now() - runStart > std::chrono::milliseconds(300);
  };
  Executable exe(Program::fromText(queued(), "queued.hir"), options);
  runStart = Clock::now();
  Error e = errorOf([&] { exe.run({}, {}); });
  EXPECT_NE(std::string(e.what()).find("the run was cancelled"), std::string::npos) << e.what();
  EXPECT_LT(Clock::now() - runStart, std::chrono::milliseconds(1300));
  EXPECT_GT(checks.load(), 1);
}

TEST(Executable, AFailedCallLeavesItUsable) {
  std::atomic<bool> cancel{false};
  RunOptions options = rowParallel(2);
  options.cancel = &cancel;
  Executable exe(Program::fromFile(kExamples + "row_parallel_linear.hir"), options);
  Step step(5);
  for (int attempt = 0; attempt < 2; ++attempt) {
    cancel = true;
    Error e = errorOf([&] { exe.run(step.inputs(), step.outputs()); });
    EXPECT_EQ(e.message(), "the run was cancelled");
    cancel = false;
    exe.run(step.inputs(), step.outputs());  // the ranks are started afresh
    expectLinear(step.x, step.w, step.y);
  }
}

TEST(Executable, ACancelDuringThePassesStopsTheCompilationWithinASecond) {
  std::string text = "program many(M = 8, K = 8, N = 8, S = 2) {\n  input x : f32[M, K]\n  input w : f32[N, K]\n";
  for (int l = 0; l < 800; ++l)
    text += "  a" + std::to_string(l) +
            " = allocate(f32[M, N])\n  for i in range(S) {\n    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
            "    ai = shard_by_stream(a" +
            std::to_string(l) + ", axis=0, index=i, chunks=S)\n    linear(xi, w, out=ai)\n  }\n";
  // A last loop that accumulates: the pass then proves the loops one by one (seconds).
  text += "  b = allocate(f32[M, N], zero=true)\n  for i in range(S) {\n    add(b, b, out=b)\n  }\n}\n";
  Program p = Program::fromText(text, "many.hir");
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.passes = {"assign-streams"};
  options.cancel = &cancel;
  std::optional<Error> error;
  std::thread compiler([&] { error = errorOf([&] { Executable exe(p, options); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Clock::time_point set = Clock::now();
  cancel = true;
  compiler.join();
  EXPECT_LT(Clock::now() - set, std::chrono::seconds(1));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message(), "the run was cancelled");
}

size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

// A thousand calls hold the memory of a few: buffers are pooled, outputs
// gathered into the caller's, nothing is kept per call.
TEST(Executable, MemoryStaysFlatOverAThousandCalls) {
  if (hostir::testing::kSanitized)
    GTEST_SKIP() << "a sanitizer keeps freed memory (quarantine, history): resident memory grows by design";
  Executable exe(Program::fromFile(kExamples + "row_parallel_linear.hir"), rowParallel(2));
  Step step(11);
  for (int call = 0; call < 50; ++call) exe.run(step.inputs(), step.outputs());
  const size_t before = residentBytes();
  for (int call = 0; call < 1000; ++call) exe.run(step.inputs(), step.outputs());
  const size_t grown = residentBytes() > before ? residentBytes() - before : 0;
  EXPECT_LT(grown, size_t{4} << 20) << "resident memory grew by " << grown << " bytes over 1000 calls";
  expectLinear(step.x, step.w, step.y);
}

}  // namespace
