// runOnMpi and compileOnMpi under mpirun: the caller initializes MPI, each
// rank passes the global inputs, rank 0 receives the global output; an
// executable runs many times; a bad program, or ranks that prepare
// different runs, fail on every rank without hanging. Prints
// "api_mpi_test: ok" on rank 0.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hostir/hostir.h"
#include "hostir/mpi.h"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "api_mpi_test: FAILED: %s\n", what);
  return 1;
}

constexpr int64_t M = 8, K = 6, N = 4;

// y = x @ w^T, within f32's rounding.
bool isProduct(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& y) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(x[m * K + k]) * w[n * K + k];
      if (std::abs(y[m * N + n] - want) > 1e-4 * (1 + std::abs(want))) return false;
    }
  return true;
}

// An executable on the communicator: compiled once, run with new inputs
// each time; a missing input is refused alike on every rank, which stay usable.
int checkExecutable(int rank, const hostir::api::Program& p, const hostir::api::RunOptions& options) {
  using hostir::api::DType;
  hostir::api::Executable exe = hostir::api::compileOnMpi(MPI_COMM_WORLD, p, options);
  std::vector<float> x(M * K), w(N * K), y(M * N, NAN);
  for (int call = 0; call < 3; ++call) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 3 + call) % 13) - 6;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5 + call) % 7) - 3;
    exe.run({{"x", {DType::F32, {M, K}, x.data()}}, {"w", {DType::F32, {N, K}, w.data()}}},
            {{"y", {DType::F32, {M, N}, y.data()}}});
    if (rank == 0 && !isProduct(x, w, y)) return fail("wrong output of the executable");
  }
  try {
    exe.run({{"x", {DType::F32, {M, K}, x.data()}}}, {});
    return fail("a call without input 'w' ran");
  } catch (const hostir::api::Error& error) {
    if (error.kind() != hostir::api::ErrorKind::Usage) return fail("a missing input is not a usage error");
  }
  exe.run({{"x", {DType::F32, {M, K}, x.data()}}, {"w", {DType::F32, {N, K}, w.data()}}},
          {{"y", {DType::F32, {M, N}, y.data()}}});
  if (rank == 0 && !isProduct(x, w, y)) return fail("wrong output after a refused call");
  exe.close();
  return 0;
}

int check(int rank) {
  hostir::api::Program p =
      hostir::api::Program::fromFile(std::string(HOSTIR_SOURCE_DIR) + "/examples/row_parallel_linear.hir");
  std::vector<float> x(M * K), w(N * K), y(M * N, NAN);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) - 5;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 7) - 3;
  hostir::api::RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 2}};
  options.passes = {"assign-streams"};
  options.backend = "cpu";
  using hostir::api::DType;
  hostir::api::runOnMpi(MPI_COMM_WORLD, p,
                        {{"x", {DType::F32, {M, K}, x.data()}}, {"w", {DType::F32, {N, K}, w.data()}}},
                        {{"y", {DType::F32, {M, N}, y.data()}}}, options);
  // y is replicated: every rank that gives a buffer for it gets its own copy.
  if (!isProduct(x, w, y)) return fail("wrong output");
  if (int code = checkExecutable(rank, p, options)) return code;
  // K = 5 does not split into 2 shards: every rank refuses it, none waits.
  options.params["K"] = 5;
  try {
    hostir::api::runOnMpi(MPI_COMM_WORLD, p, {}, {}, options);
    return fail("a program that does not verify ran");
  } catch (const hostir::api::Error& error) {
    if (error.kind() != hostir::api::ErrorKind::Program || error.line() == 0) return fail("unexpected error kind");
  }
  // Ranks that prepare different runs (here rank 0 chunks in 2, the others
  // in 4) would issue different communications: every rank refuses.
  options.params["K"] = K;
  options.params["S"] = rank == 0 ? 2 : 4;
  try {
    hostir::api::compileOnMpi(MPI_COMM_WORLD, p, options);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) return fail("ranks that prepared different runs ran");
  } catch (const hostir::api::Error& error) {
    if (error.kind() != hostir::api::ErrorKind::Usage ||
        std::string(error.what()).find("the ranks prepared different runs") == std::string::npos)
      return fail("ranks that prepared different runs failed with another error");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 0;
  try {
    code = check(rank);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "api_mpi_test: FAILED: %s\n", error.what());
    code = 1;
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst == 0) std::printf("api_mpi_test: ok\n");
  MPI_Finalize();
  return worst;
}
