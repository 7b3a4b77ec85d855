// Uses the installed hostir library: parses a row-parallel linear layer
// from a string, checks it, predicts its time on a shipped machine profile,
// runs it on 1 and 2 in-process ranks with buffers this program owns,
// compiles it once and runs it every step of a loop, and compares the
// results with plain loops. Shows the position of an error in a
// bad program. Exits non-zero on any mismatch or unexpected error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <hostir/hostir.h>

namespace api = hostir::api;

namespace {

// y = allreduce(x_r @ w_r^T): each rank holds a slice of K.
const char* kProgram = R"(program row_parallel_linear(M = 8, K = 16, N = 4) {
  input  x : f32[M, K] shard(1)
  input  w : f32[N, K] shard(1)
  output y : f32[M, N]

  y = allocate(f32[M, N])
  linear(x, w, out=y)
  c = allreduce(y, op=sum)
  wait(c)
}
)";

// A program with an unknown operation on its line 3.
const char* kBadProgram = R"(program bad(N = 4) {
  output y : f32[N]
  y = no_such_op(f32[N])
}
)";

constexpr int64_t M = 8, K = 16, N = 4;

// Runs on `ranks` ranks and compares y with x · wᵀ computed here.
// y == x · wᵀ, computed here.
bool matches(int64_t ranks, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& y) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(x[m * K + k]) * w[n * K + k];
      if (!(std::abs(y[m * N + n] - want) <= 1e-4 * (1 + std::abs(want)))) {
        std::fprintf(stderr, "mismatch on %lld ranks at y[%lld, %lld]: %g, want %g\n", static_cast<long long>(ranks),
                     static_cast<long long>(m), static_cast<long long>(n), y[m * N + n], want);
        return false;
      }
    }
  }
  return true;
}

bool runAndCompare(const api::Program& program, int64_t ranks, const std::vector<float>& x,
                   const std::vector<float>& w) {
  std::vector<float> y(M * N, NAN);
  api::RunOptions options;
  options.ranks = ranks;
  options.backend = "cpu";
  // HostBuffer is a view: hostir reads x and w and writes y in place.
  api::run(program,
           {{"x", {api::DType::F32, {M, K}, const_cast<float*>(x.data())}},
            {"w", {api::DType::F32, {N, K}, const_cast<float*>(w.data())}}},
           {{"y", {api::DType::F32, {M, N}, y.data()}}}, options);
  if (!matches(ranks, x, w, y)) return false;
  std::printf("run on %lld rank(s): y matches x . w^T\n", static_cast<long long>(ranks));
  return true;
}

// An embedding loop: compiled once (passes, proof, ranks, buffers), then
// one call per step with that step's inputs.
bool compileAndLoop(const api::Program& program, std::vector<float> x, const std::vector<float>& w) {
  api::RunOptions options;
  options.ranks = 2;
  options.backend = "cpu";
  api::Executable executable(program, options);
  std::vector<float> y(M * N, NAN);
  for (int step = 0; step < 10; ++step) {
    for (float& v : x) v = -v;  // this step's input
    executable.run(
        {{"x", {api::DType::F32, {M, K}, x.data()}}, {"w", {api::DType::F32, {N, K}, const_cast<float*>(w.data())}}},
        {{"y", {api::DType::F32, {M, N}, y.data()}}});
    if (!matches(2, x, w, y)) return false;
  }
  std::printf("compiled once, run 10 times: every y matches x . w^T\n");
  return true;
}

}  // namespace

int main() {
  try {
    api::Program program = api::Program::fromText(kProgram, "row_parallel_linear.hir");

    std::vector<float> x(M * K), w(N * K);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) - 5;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 7) - 3;

    api::CheckOptions checkOptions;
    checkOptions.ranks = 2;
    api::check(program, checkOptions);  // throws on a race or a mismatched communication
    std::printf("check on 2 ranks: ok\n");

    api::SimulateOptions simulateOptions;
    simulateOptions.ranks = 2;
    api::Prediction prediction = api::simulate(program, "h100-nvlink", simulateOptions);
    std::printf("predicted on h100-nvlink: %.4f ms (compute %.4f ms, communication %.4f ms)\n", prediction.medianMs,
                prediction.computeMs, prediction.commMs);
    if (!(prediction.medianMs > 0)) {
      std::fprintf(stderr, "the prediction is not positive\n");
      return 1;
    }

    if (!runAndCompare(program, 1, x, w) || !runAndCompare(program, 2, x, w)) return 1;
    if (!compileAndLoop(program, x, w)) return 1;
  } catch (const api::Error& e) {
    std::fprintf(stderr, "unexpected error: %s\n", e.what());
    return 1;
  }

  // Every failure is an api::Error; a bad program's says where it is.
  try {
    api::Program::fromText(kBadProgram, "bad.hir");
    std::fprintf(stderr, "a bad program parsed\n");
    return 1;
  } catch (const api::Error& e) {
    std::printf("bad program rejected at %s:%d:%d: %s\n", e.file().c_str(), e.line(), e.column(), e.message().c_str());
    if (e.kind() != api::ErrorKind::Program || e.file() != "bad.hir" || e.line() != 3) {
      std::fprintf(stderr, "unexpected error position:\n%s\n", e.what());
      return 1;
    }
  }
  std::printf("hostir example: ok\n");
  return 0;
}
