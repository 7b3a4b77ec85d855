// An index out of range in gather_rows or scatter_add_rows, and its wording,
// one for every backend: "index 7 of 'routes' is out of range for 'table'
// with 4 rows", with the names the statement's operands have in the
// program, and " (on rank 1)" after it in a team of several ranks.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ops.h"

namespace hostir {

// What a kernel met: the first index of idx that is neither -1 nor a row
// of the tensor it indexes. The backend that catches it knows the statement.
struct IndexOutOfRange {
  int64_t index;
  int64_t rows;
};

// The tensors an index fault names: the index and the tensor whose rows it
// indexes (gather_rows reads rows of x, scatter_add_rows adds into rows of out).
struct IndexedTensors {
  std::string index;
  std::string table;
};

// `kind`'s indexed tensors by the names the program gives them
// (OperationInfo::names); an operand the program's name is not known for
// is called by its own name in the op table ('idx', 'x', 'out').
inline IndexedTensors indexedTensors(OpKind kind, const std::array<std::string_view, kMaxOperands>& names) {
  const bool gather = kind == OpKind::GatherRows;
  const size_t index = gather ? size_t{operands::GatherRows::idx} : size_t{operands::ScatterAddRows::idx};
  const size_t table = gather ? size_t{operands::GatherRows::x} : size_t{operands::ScatterAddRows::out};
  auto name = [&](size_t operand) {
    return std::string(names[operand].empty() ? signatureOf(kind).operands[operand].name : names[operand]);
  };
  return IndexedTensors{name(index), name(table)};
}

inline std::string indexOutOfRange(const IndexedTensors& tensors, const IndexOutOfRange& fault) {
  return fmt::format("index {} of '{}' is out of range for '{}' with {} rows", fault.index, tensors.index,
                     tensors.table, fault.rows);
}

// `message` about rank `rank` of a team of `size`: the rank is named only when there are several.
inline std::string onRank(const std::string& message, int rank, int size) {
  return size > 1 ? fmt::format("{} (on rank {})", message, rank) : message;
}

}  // namespace hostir
