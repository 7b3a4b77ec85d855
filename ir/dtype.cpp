#include "ir/dtype.h"

namespace hostir {

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType d : kAllDTypes)
    if (dtypeName(d) == name) return d;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::F64: return 8;
    case DType::I32: return 4;
  }
  return 0;
}

}  // namespace hostir
