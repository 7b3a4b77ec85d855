// Host memory the caller owns, handed to a run: inputs are read from it and
// outputs written into it. Always the global tensor, C-contiguous.
#pragma once

#include <cstdint>
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

  int64_t elements() const;
  int64_t bytes() const { return elements() * elementBytes(dtype); }
};

}  // namespace hostir::api
