// Host memory the caller owns, handed to a run: inputs are read from it and
// outputs written into it. Always the global tensor, C-contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hostir::api {

enum class DType { F32, F16, BF16, F64, I32 };

// "f32", "f16", "bf16", "f64", "i32".
std::string toString(DType dtype);
// Bytes of one element.
int64_t elementBytes(DType dtype);

// A view the caller owns: `data` holds product(shape) elements of `dtype`,
// C order (f16 and bf16 as their 16-bit patterns). Not copied by hostir
// beyond the call that uses it.
struct HostBuffer {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  void* data = nullptr;

  // Both throw Error (kind Usage) for a negative extent or a count past int64.
  int64_t elements() const;
  int64_t bytes() const;
};

// An array that owns its memory: what readNpy returns, and a place for a
// run's outputs. Its buffer() is valid while the array lives and keeps
// its size.
struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;

  // product(shape) zero elements of `dtype`; Error (kind Runtime) when the
  // memory cannot be had.
  static HostArray zeros(DType dtype, std::vector<int64_t> shape);
  HostBuffer buffer();
};

// A run's outputs against a reference's (`hostir run --check`): every
// reference output must be in `actual` with its dtype and shape, each
// element within the dtype's tolerance of the reference's, relative to
// the element and the reference's rms (f64 1e-9, f32 1e-4, f16 1e-2,
// bf16 4e-2; i32 exactly). The report has a line per output, naming the
// worst element.
struct OutputComparison {
  bool ok = true;
  std::string report;
};
OutputComparison compareOutputs(const std::map<std::string, HostBuffer>& actual,
                                const std::map<std::string, HostBuffer>& reference);

}  // namespace hostir::api
