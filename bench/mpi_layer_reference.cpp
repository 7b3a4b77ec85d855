// examples/row_parallel_linear.hir written by hand with MPI and OpenBLAS,
// without hostir: each rank multiplies its slice of K chunk by chunk
// (S chunks of M/S rows) straight into the output, and sums each chunk in
// place across ranks with MPI_Allreduce, one step after the other on one
// thread. It is the floor a machine sets for the layer's run-to-run spread:
// `hostir run` under mpirun is judged beside it (docs/performance.md,
// "MPI runs on a loaded node"). Rank 0 prints `hostir run`'s timing line.
//
//   mpirun -np 2 build/bench/mpi_layer_reference --set M=8192 --set K=16 --set N=1024 --set S=4
//     --warmup 2 --repeat 10
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/blas_library.h"

namespace {

struct Layer {
  std::map<std::string, long> params{{"M", 256}, {"K", 512}, {"N", 128}, {"S", 4}};
  int warmup = 0;
  int repeat = 1;
};

// --set NAME=INT, --warmup INT, --repeat INT, as `hostir run` takes them.
bool parse(int argc, char** argv, Layer& layer) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--warmup") {
      layer.warmup = std::atoi(value.c_str());
    } else if (flag == "--repeat") {
      layer.repeat = std::atoi(value.c_str());
    } else if (size_t eq = value.find('=');
               flag == "--set" && eq != std::string::npos && layer.params.count(value.substr(0, eq))) {
      layer.params[value.substr(0, eq)] = std::atol(value.c_str() + eq + 1);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && layer.repeat >= 1 && layer.warmup >= 0;
}

// Each timed run's milliseconds, between barriers.
std::vector<double> timeLayer(const Layer& layer, int rank, int size) {
  const auto& p = layer.params;
  const long m = p.at("M"), n = p.at("N"), s = p.at("S"), k = p.at("K") / size;
  const long rows = m / s;
  std::vector<float> x(m * k), w(n * k), y(m * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i + rank) % 7) / 7;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i + rank) % 5) / 5;
  const auto sgemm = hostir::cpu::blasLibrary().sgemm;

  std::vector<double> millis;
  for (int run = -layer.warmup; run < layer.repeat; ++run) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (long chunk = 0; chunk < s; ++chunk) {
      float* yi = y.data() + chunk * rows * n;
      // y_i = x_i · w^T, w being N×K as in the program.
      sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k),
            1.f, x.data() + chunk * rows * k, static_cast<int>(k), w.data(), static_cast<int>(k), 0.f, yi,
            static_cast<int>(n));
      MPI_Allreduce(MPI_IN_PLACE, yi, static_cast<int>(rows * n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (run >= 0) millis.push_back((MPI_Wtime() - start) * 1e3);
  }
  return millis;
}

}  // namespace

int main(int argc, char** argv) {
  // Waits as hostir's MPI sessions wait (comm/mpi_communicator.cpp): Open
  // MPI yields an idle core. A value the caller set wins.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Layer layer;
  if (!parse(argc, argv, layer) || layer.params["S"] < 1 || layer.params["M"] % layer.params["S"] != 0 ||
      layer.params["K"] % size != 0) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: mpi_layer_reference [--set M|K|N|S=INT]... [--warmup INT] [--repeat INT] "
                   "(S divides M, the ranks divide K)\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<double> millis = timeLayer(layer, rank, size);
  if (rank == 0) {
    std::sort(millis.begin(), millis.end());
    const size_t count = millis.size();
    const double median = count % 2 ? millis[count / 2] : (millis[count / 2 - 1] + millis[count / 2]) / 2;
    std::printf("timing: median_ms=%.3f min_ms=%.3f max_ms=%.3f runs=%zu\n", median, millis.front(), millis.back(),
                count);
  }
  MPI_Finalize();
  return 0;
}
