// Memory a run cannot have: an allocation far beyond the machine (4 TiB)
// fails cleanly, as an error at the statement that names the size and the
// tensor, and the backend runs the next program as if nothing happened.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "comm/in_process_communicator.h"
#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/cpu_backend.h"
#include "harness.h"
#include "runtime/evaluator.h"
#include "sanitizers.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

// A program run by an Evaluator directly on one rank's CPU backend.
class OneRank : public ::testing::Test {
 protected:
  OneRank() : comm_(team_.communicator(0)), backend_(cpu::CpuBackendOptions{}, *comm_) {}

  // Runs `text` (which must verify) with every input filled with `fill`;
  // returns the outputs on the host, as f32.
  std::map<std::string, std::vector<float>> run(const std::string& text, float fill = 1.0f) {
    Program program = parseOrThrow(text, "p.hir");
    if (Status error = verifyFor(program, {}, 1)) throw std::runtime_error(error->message);
    Evaluator evaluator(program, bindAll(program, {}), 0, 1);
    std::map<std::string, TensorView> inputs;
    for (const TensorSpec& spec : evaluator.inputs()) {
      TensorView t = backend_.allocate(spec.dtype, spec.localShape, backend_.mainStream(), false);
      std::vector<float> host(static_cast<size_t>(t.numel()), fill);
      backend_.upload(host.data(), t);
      inputs[spec.name] = t;
    }
    std::map<std::string, std::vector<float>> outputs;
    for (const auto& [name, tensor] : evaluator.run(backend_, inputs)) {
      std::vector<float> host(static_cast<size_t>(tensor.numel()));
      backend_.download(tensor, host.data());
      outputs[name] = std::move(host);
    }
    return outputs;
  }

  // The error the run of `text` ends with; fails the test when it succeeds.
  Diagnostic failure(const std::string& text) {
    try {
      run(text);
    } catch (const DiagnosticError& e) {
      return e.diag;
    }
    ADD_FAILURE() << "the run succeeded";
    return {};
  }

  InProcessTeam team_{1};
  std::unique_ptr<Communicator> comm_;
  cpu::CpuBackend backend_;
};

constexpr const char* kSmallProgram = R"(program small() {
  input x : f32[4]
  output y : f32[4]
  y = add(x, x)
}
)";

TEST_F(OneRank, AnAllocationBeyondMemoryNamesTheStatementTheSizeAndTheTensor) {
  Diagnostic error = failure(R"(program big() {
  output y : f32[4]
  y = allocate(f32[4], zero=true)
  t = allocate(f32[1099511627776])
}
)");
  EXPECT_EQ(error.message, "cannot allocate 4.00 TiB for 't'");
  EXPECT_EQ(error.loc, (SourceLoc{4, 7}));
  // The backend and its memory pool are as usable as before.
  auto outputs = run(kSmallProgram, 1.5f);
  EXPECT_EQ(outputs.at("y"), (std::vector<float>{3, 3, 3, 3}));
}

TEST_F(OneRank, TheResultOfAnOperationBeyondMemoryNamesItsResult) {
  // Two 4 MiB operands whose product is 2^20 x 2^20 f32: 4 TiB.
  Diagnostic error = failure(testing::testProgramText("executor/programs/outer_product_beyond_memory.hir"));
  EXPECT_EQ(error.message, "cannot allocate 4.00 TiB for 'z'");
  EXPECT_EQ(error.loc.line, 6u);
  auto outputs = run(kSmallProgram, 2.0f);
  EXPECT_EQ(outputs.at("y"), (std::vector<float>{4, 4, 4, 4}));
}

TEST_F(OneRank, AShapeWhoseBytesOverflowIsABadAllocNotACrash) {
  // Only a verified program is guaranteed to fit in 63 bits; the backend
  // must not wrap around for anything else.
  const int64_t huge = int64_t{1} << 40;
  EXPECT_THROW(backend_.allocate(DType::F32, Dims{huge, huge}, backend_.mainStream(), false), std::bad_alloc);
  EXPECT_THROW(backend_.allocate(DType::F64, Dims{int64_t{1} << 61}, backend_.mainStream(), true), std::bad_alloc);
  auto outputs = run(kSmallProgram, 0.25f);
  EXPECT_EQ(outputs.at("y"), (std::vector<float>{0.5, 0.5, 0.5, 0.5}));
}

// Memory that runs out inside a kernel, on a stream's thread, is an error at
// the statement that issued it. A child process limits its own address
// space to what it uses plus 64 MiB, so that OpenBLAS's 128 MiB workspace
// for a new thread cannot fit: the GEMM must fail cleanly and say where
// (OpenBLAS itself would retry its mmap for ever).
TEST(OutOfMemory, InsideAKernelIsAnErrorAtItsStatement) {
  if (hostir::testing::kSanitized)
    GTEST_SKIP() << "a sanitizer's shadow memory does not fit under an address-space limit";
  if (cpu::BlasBufferPool::process().reserved() > 0) {
    // An earlier test's GEMMs left OpenBLAS buffers reserved, which would
    // serve this GEMM: run the test again in a fresh process.
    const std::string self = std::filesystem::read_symlink("/proc/self/exe");
    const std::string filter = "--gtest_filter=OutOfMemory.InsideAKernelIsAnErrorAtItsStatement";
    int status = std::system(fmt::format("'{}' '{}' >/dev/null 2>&1", self, filter).c_str());
    EXPECT_EQ(status, 0) << "the test failed in a fresh process: run " << self << " " << filter;
    return;
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    std::string message;
    try {
      Program program = parseOrThrow(R"(program gemm() {
  input x : f32[64, 64]
  output y : f32[64, 64]
  y = matmul(x, x)
}
)",
                                     "p.hir");
      limitAddressSpaceToUsedPlus64MiB();
      auto result = runInProcess(makeRequest(program, bindAll(program, {}), 1, 1), 1);
      message = result
                    ? "the run succeeded"
                    : fmt::format("{}:{} {}", result.error().loc.line, result.error().loc.col, result.error().message);
    } catch (const std::exception& e) {
      message = std::string("threw: ") + e.what();
    }
    (void)!::write(fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char chunk[256];
  for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) message.append(chunk, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died: " << message;
  EXPECT_EQ(message, "4:7 out of memory while running matmul");
}

}  // namespace
}  // namespace hostir::reftest
