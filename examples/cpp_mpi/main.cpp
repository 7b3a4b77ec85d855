// Runs a row-parallel linear layer with hostir on MPI_COMM_WORLD (each rank
// of mpirun is one rank of the team) and compares the result, on rank 0,
// with plain loops. Exits non-zero on any mismatch or error; every rank
// agrees on the exit status.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <hostir/hostir.h>
#include <hostir/mpi.h>

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

constexpr int64_t M = 8, K = 16, N = 4;

// Whether y is x · wᵀ, computed here in double.
bool matches(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& y) {
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(x[m * K + k]) * w[n * K + k];
      if (!(std::abs(y[m * N + n] - want) <= 1e-4 * (1 + std::abs(want)))) {
        std::fprintf(stderr, "mismatch at y[%lld, %lld]: %g, want %g\n", static_cast<long long>(m),
                     static_cast<long long>(n), y[m * N + n], want);
        return false;
      }
    }
  }
  return true;
}

// This rank's verdict: the run's, and on rank 0 the comparison's.
bool runOnWorld(int rank) {
  std::vector<float> x(M * K), w(N * K), y(M * N, NAN);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) - 5;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 7) - 3;
  try {
    api::Program program = api::Program::fromText(kProgram, "row_parallel_linear.hir");
    api::RunOptions options;
    options.backend = "cpu";
    api::runOnMpi(MPI_COMM_WORLD, program,
                  {{"x", {api::DType::F32, {M, K}, x.data()}}, {"w", {api::DType::F32, {N, K}, w.data()}}},
                  {{"y", {api::DType::F32, {M, N}, y.data()}}}, options);
  } catch (const api::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return false;
  }
  return rank != 0 || matches(x, w, y);  // outputs are written on rank 0
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = provided == MPI_THREAD_MULTIPLE && runOnWorld(rank) ? 1 : 0;
  int allOk = 0;
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && allOk) std::printf("hostir mpi example: ok on %d ranks\n", size);
  MPI_Finalize();
  return allOk ? 0 : 1;
}
