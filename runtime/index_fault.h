// The wording of an index out of range in gather_rows or scatter_add_rows,
// one for every backend: "index 7 of 'idx' is out of range for 'x' with 4
// rows", and " (on rank 1)" after it in a team of several ranks.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "ir/ops.h"

namespace hostir {

// The operand whose rows `kind`'s idx indexes: gather_rows reads rows of x,
// scatter_add_rows adds into rows of out.
constexpr const char* indexedOperand(OpKind kind) { return kind == OpKind::GatherRows ? "x" : "out"; }

inline std::string indexOutOfRange(OpKind kind, int64_t index, int64_t rows) {
  return fmt::format("index {} of 'idx' is out of range for '{}' with {} rows", index, indexedOperand(kind), rows);
}

// `message` about rank `rank` of a team of `size`: the rank is named only when there are several.
inline std::string onRank(const std::string& message, int rank, int size) {
  return size > 1 ? fmt::format("{} (on rank {})", message, rank) : message;
}

}  // namespace hostir
