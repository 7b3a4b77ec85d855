// Element types of tensors: four floating-point types for arithmetic and
// i32 for indices (gather_rows, scatter_add_rows), which only moves.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hostir {

enum class DType { F32, F16, BF16, F64, I32 };

// Every dtype, in enum order.
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32};

std::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType dtype);

// Whether arithmetic accepts the dtype (every dtype but i32).
constexpr bool isFloating(DType dtype) { return dtype != DType::I32; }

}  // namespace hostir
