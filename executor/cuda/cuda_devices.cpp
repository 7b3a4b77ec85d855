#include "executor/cuda/cuda_devices.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <string_view>

namespace hostir::cuda {
namespace {

struct DeviceSurvey {
  int count = 0;
  std::optional<std::string> problem;
};

// The runtime's reason in a user's words. Without a driver the runtime
// says "driver version is insufficient", which sends users looking for an
// upgrade; whether libcuda.so.1 is loaded tells the two cases apart (the
// runtime has already tried to load it).
std::string runtimeProblem(cudaError_t status) {
  if (status == cudaErrorInsufficientDriver) {
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(driver);
      int driverVersion = 0, runtimeVersion = 0;
      cudaDriverGetVersion(&driverVersion);
      cudaRuntimeGetVersion(&runtimeVersion);
      return fmt::format("the CUDA driver supports CUDA {}.{}, older than this build's runtime {}.{}",
                         driverVersion / 1000, driverVersion % 1000 / 10, runtimeVersion / 1000,
                         runtimeVersion % 1000 / 10);
    }
    return "no CUDA driver is installed (libcuda.so.1 could not be loaded)";
  }
  if (status == cudaErrorNoDevice) return "the CUDA driver finds no device";
  return cudaGetErrorString(status);
}

// Asked once per process: the answer does not change while it runs.
const DeviceSurvey& survey() {
  static const DeviceSurvey result = [] {
    DeviceSurvey s;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();  // leave no error behind for later calls to report
      s.problem = fmt::format("no usable CUDA device: {}", runtimeProblem(status));
      return s;
    }
    if (count < 1) {
      s.problem = "no usable CUDA device: the CUDA runtime reports none";
      return s;
    }
    // A device older than every architecture this build has code for
    // cannot run its kernels. Attributes are read without creating a
    // context, so no process touches a device it does not drive.
    for (int device = 0; device < count; ++device) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      if (major * 10 + minor < HOSTIR_CUDA_MIN_ARCHITECTURE) {
        s.problem = fmt::format(
            "no usable CUDA device: device {} has compute capability {}.{}, and this build "
            "targets CUDA architectures {} and up",
            device, major, minor, HOSTIR_CUDA_MIN_ARCHITECTURE);
        return s;
      }
    }
    s.count = count;
    return s;
  }();
  return result;
}

}  // namespace

int usableDeviceCount() { return survey().count; }

std::optional<std::string> deviceProblem() {
  if (!survey().problem) return std::nullopt;
  return *survey().problem + " (without a device, --backend auto or cpu runs on the CPU)";
}

}  // namespace hostir::cuda
