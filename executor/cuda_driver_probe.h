// Whether the CUDA driver is there and sees a device, asked of libcuda.so.1
// itself. The CUDA component (cuBLAS, NCCL: about 200 MB mapped) is loaded
// only when the driver says a device may serve, so a CPU run, and `auto` on
// a machine without a GPU, never pays for it.
#pragma once

#include <optional>
#include <string>

namespace hostir {

// Why no CUDA device can serve ("no usable CUDA device: ..."), or nullopt
// when the driver reports at least one (the component then checks more:
// its runtime's version, the devices' architectures). Asked once per process.
const std::optional<std::string>& cudaDriverProblem();

}  // namespace hostir
