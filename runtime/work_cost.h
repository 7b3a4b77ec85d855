// What a backend call's work costs and how a trace files it, from the op
// table: the category of a trace slice and the FLOPs and bytes of one call,
// shared by every backend that records a trace.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <utility>

#include "ir/ops.h"
#include "runtime/backend.h"
#include "runtime/tensor.h"

namespace hostir {

// compute, communication, memory or sync: the op table's category of `kind`.
const char* traceCategory(OpKind kind);

// The op table's count of the FLOPs and bytes of `kind` over these operands
// (by signature position; null views are absent operands).
OpCost costOfCall(OpKind kind, std::initializer_list<std::pair<size_t, const TensorView*>> tensors);

// The same for a computation, over the call's operands (its `out` view,
// a staging temporary included, counts as the result).
OpCost costOfCall(const KernelCall& call);

// The extents of a call's operands, by signature position, for costOf and gemmShapeOf.
std::array<TensorExtent, kMaxOperands> extentsOf(const KernelCall& call);

// The same for a communication (its input and, except broadcast, its output):
// the message size as nccl-tests counts it, the larger side of the collective.
OpCost costOfCommunication(OpKind kind, const TensorView& input, const TensorView& output);

}  // namespace hostir
