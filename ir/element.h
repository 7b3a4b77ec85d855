// Reading and writing one element of any dtype through a byte pointer,
// computing in `Compute` (float or double); f16 and bf16 round on store,
// i32 converts as C++ does (indices: whole numbers within range).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ir/dtype.h"
#include "ir/half.h"

namespace hostir {

template <typename Compute>
Compute loadElement(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return static_cast<Compute>(v);
    }
    case DType::F64: {
      double v;
      std::memcpy(&v, p, 8);
      return static_cast<Compute>(v);
    }
    case DType::F16: {
      Half h;
      std::memcpy(&h.bits, p, 2);
      return static_cast<Compute>(toFloat(h));
    }
    case DType::BF16: {
      BFloat16 h;
      std::memcpy(&h.bits, p, 2);
      return static_cast<Compute>(toFloat(h));
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<Compute>(v);
    }
  }
  return 0;
}

// `value` as an f32 that rounds to f16 or bf16 as `value` itself would: the
// exact f32 when there is one, else the f32 neighbour towards zero with its
// last bit set (round to odd), so that f64 → f32 → f16 rounds only once.
template <typename Compute>
float narrowingIntermediate(Compute value) {
  float f = static_cast<float>(value);
  if constexpr (sizeof(Compute) > sizeof(float)) {
    if (std::isnan(value) || static_cast<Compute>(f) == value) return f;
    if (std::fabs(static_cast<Compute>(f)) > std::fabs(value)) f = std::nextafter(f, 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= 1u;
    std::memcpy(&f, &bits, 4);
  }
  return f;
}

template <typename Compute>
void storeElement(DType dtype, std::byte* p, Compute value) {
  switch (dtype) {
    case DType::F32: {
      float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::F64: {
      double v = static_cast<double>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::F16: {
      Half h = toHalf(narrowingIntermediate(value));
      std::memcpy(p, &h.bits, 2);
      return;
    }
    case DType::BF16: {
      BFloat16 h = toBFloat16(narrowingIntermediate(value));
      std::memcpy(p, &h.bits, 2);
      return;
    }
    case DType::I32: {
      auto v = static_cast<int32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
  }
}

}  // namespace hostir
