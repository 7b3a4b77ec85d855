#include "executor/cpu/blas_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace hostir::cpu {
namespace {

constexpr const char* kLibrary = "libopenblas.so.0";

BlasLibrary load() {
  // Read by OpenBLAS as it loads: one thread per call, no pool.
  ::setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = ::dlerror();
    bool missing = why.find("No such file") != std::string::npos;
    throw std::runtime_error(fmt::format("cannot load OpenBLAS ({}), which the CPU backend's GEMMs need: {}{}",
                                         kLibrary, why, missing ? " (install libopenblas0)" : ""));
  }
  auto symbol = [&](const char* name) {
    void* address = ::dlsym(handle, name);
    if (!address) throw std::runtime_error(fmt::format("{} has no {}", kLibrary, name));
    return address;
  };
  BlasLibrary blas;
  blas.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(symbol("cblas_sgemm"));
  blas.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(symbol("cblas_dgemm"));
  blas.config = reinterpret_cast<const char* (*)()>(symbol("openblas_get_config"));
  blas.memoryAlloc = reinterpret_cast<void* (*)(int)>(::dlsym(handle, "blas_memory_alloc"));
  blas.memoryFree = reinterpret_cast<void (*)(void*)>(::dlsym(handle, "blas_memory_free"));
  // Also when another part of the process loaded it first, with more threads.
  reinterpret_cast<void (*)(int)>(symbol("openblas_set_num_threads"))(1);
  return blas;
}

}  // namespace

const BlasLibrary& blasLibrary() {
  static std::once_flag once;
  static BlasLibrary blas;
  std::call_once(once, [] { blas = load(); });
  return blas;
}

}  // namespace hostir::cpu
