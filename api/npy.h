// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0),
// for `hostir run --input x=x.npy` and `--output y=y.npy`.
//
// Supported element types (descr in the header):
//   f32  '<f4'    f64  '<f8'    f16  '<f2'    i32  '<i4' (indices)
//   bf16 '<u2'    NumPy has no bf16, so bf16 is stored as its raw 16-bit
//                 patterns in an ordinary uint16 array; the reader accepts
//                 '<u2' only when the caller expects bf16.
// On reading, big-endian ('>f4', '>f8', '>f2', '>i4', '>u2') and native
// ('=f4', 'f4') spellings are accepted too; data is byte-swapped to little
// endian. Fortran-order files (fortran_order: True) are accepted and
// transposed to C order. Anything else (other integers, complex, object
// and structured arrays) is rejected with a Diagnostic naming the file and
// the problem; no input file, however malformed, makes the reader crash or
// allocate more memory than the file holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/host_tensor.h"
#include "ir/diagnostic.h"
#include "ir/dtype.h"

namespace hostir {

// Reads the .npy file at `path`. When `expected` is given the file must hold
// that dtype (a mismatch is an error, nothing is converted); bf16 files can
// only be read with expected == DType::BF16, since on disk they are uint16.
Result<HostTensor> readNpy(const std::string& path, std::optional<DType> expected = std::nullopt);

// Writes `data` (C order, little endian, product(shape) elements of `dtype`)
// to `path` as a version 1.0 .npy file (2.0 when the header does not fit
// version 1.0), the header padded with spaces and '\n' so that the data
// starts at a multiple of 64 bytes. bf16 is written as '<u2' raw bits.
Status writeNpy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data);

}  // namespace hostir
