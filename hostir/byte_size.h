// Sizes for people: "37.3 GiB" instead of a 20-digit byte count, in every
// message that names a size (allocations, program files, traces).
#pragma once

#include <cstdint>
#include <string>

namespace hostir {

// 1023 B, 1.5 KiB, 37.3 GiB, ... up to EiB; three significant digits.
std::string formatBytes(uint64_t bytes);

}  // namespace hostir
