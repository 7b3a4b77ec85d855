// Which CUDA devices this process can use.
#pragma once

#include <optional>
#include <string>

namespace hostir::cuda {

// The number of devices the CUDA runtime reports, 0 when it reports an
// error (no driver, no device) or this build has no code for the devices.
int usableDeviceCount();

// Why no device is usable ("no usable CUDA device: ..."), or nullopt.
std::optional<std::string> deviceProblem();

// Which device a rank drives, and how many ranks share a node, are
// runtime/backend_selection.h's.

}  // namespace hostir::cuda
