// OpenBLAS, loaded as the CPU backend is made rather than linked. A
// threaded OpenBLAS starts its thread pool as it loads and raises SIGINT
// when a thread cannot start (a stack limit too large for one), before any
// error of ours could explain it; loaded here, after OPENBLAS_NUM_THREADS=1
// is set (unless the environment sets it), it starts none. The CPU backend
// runs one GEMM per stream thread, each on that thread alone.
#pragma once

#include <cblas.h>

namespace hostir::cpu {

struct BlasLibrary {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  const char* (*config)() = nullptr;  // the build's description ("OpenBLAS 0.3.21 DYNAMIC_ARCH ...")
  // OpenBLAS's work-buffer allocator, where the library exports it (see blas_buffers.h); else null.
  void* (*memoryAlloc)(int) = nullptr;
  void (*memoryFree)(void*) = nullptr;
};

// The loaded library; throws std::runtime_error saying which library could
// not be loaded, and how to install it.
const BlasLibrary& blasLibrary();

}  // namespace hostir::cpu
