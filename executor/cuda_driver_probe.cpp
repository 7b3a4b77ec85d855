#include "executor/cuda_driver_probe.h"

#include <dlfcn.h>

namespace hostir {
namespace {

// The driver API's entry points, by their documented C signatures (CUresult is an int).
using CuInit = int (*)(unsigned int);
using CuDeviceGetCount = int (*)(int*);

std::optional<std::string> probe() {
  // Never the toolkit's stub: only the driver's own library answers for the machine.
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return "no usable CUDA device: no CUDA driver is installed (libcuda.so.1 could not be loaded)";
  auto init = reinterpret_cast<CuInit>(::dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(::dlsym(driver, "cuDeviceGetCount"));
  // A driver that cannot say leaves the answer to the component, which words each case.
  constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
  if (init == nullptr || count == nullptr) return std::nullopt;
  int devices = 0;
  const int status = init(0);
  if (status == 0 && count(&devices) != 0) return std::nullopt;
  if (status == kNoDevice || (status == 0 && devices < 1))
    return "no usable CUDA device: the CUDA driver finds no device";
  if (status != 0) return std::nullopt;
  return std::nullopt;  // the driver stays loaded: the component will use it
}

}  // namespace

const std::optional<std::string>& cudaDriverProblem() {
  static const std::optional<std::string> problem = probe();
  return problem;
}

}  // namespace hostir
