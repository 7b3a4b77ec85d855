// Element types of tensors.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hostir {

enum class DType { F32, F16, BF16, F64 };

std::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType dtype);

}  // namespace hostir
