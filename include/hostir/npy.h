// NumPy .npy files as host arrays (versions 1.0, 2.0 and 3.0), as
// `hostir run --input` reads them and `--output` writes them: f32 '<f4',
// f64 '<f8', f16 '<f2', i32 '<i4'; bf16 as its raw 16-bit patterns in a
// uint16 array ('<u2', NumPy having no bf16). Big-endian and Fortran-order
// files are read too (converted to little-endian C order); a malformed
// file is an error naming it, never a crash or an allocation larger than
// the file.
#pragma once

#include <optional>
#include <string>

#include "hostir/host_buffer.h"

namespace hostir::api {

// The array in `path`. With `expected` the file must hold that dtype
// (bf16 can only be read so). Throws Error (kind Program) naming the file.
HostArray readNpy(const std::string& path, std::optional<DType> expected = std::nullopt);

// Writes `buffer` to `path` (beside it first, then renamed over it, so that
// a failed write leaves the old file whole). Throws Error (kind Run)
// naming the file.
void writeNpy(const std::string& path, const HostBuffer& buffer);

}  // namespace hostir::api
