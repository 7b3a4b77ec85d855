#include "runtime/work_cost.h"

#include <array>
#include <span>

namespace hostir {
namespace {

TensorExtent extentOf(const TensorView& v) {
  return TensorExtent{std::span(v.shape.begin(), v.shape.size), dtypeSize(v.dtype)};
}

}  // namespace

const char* traceCategory(OpKind kind) {
  switch (signatureOf(kind).category) {
    case OpCategory::Compute: return "compute";
    case OpCategory::Communication: return "communication";
    case OpCategory::Copy:
    case OpCategory::Allocation: return "memory";
    case OpCategory::Deallocation:
    case OpCategory::Synchronization:
    case OpCategory::View:
    case OpCategory::Host: return "sync";
  }
  return "sync";
}

OpCost costOfCall(OpKind kind, std::initializer_list<std::pair<size_t, const TensorView*>> tensors) {
  std::array<TensorExtent, kMaxOperands> extents{};
  for (auto [index, view] : tensors)
    if (view) extents[index] = extentOf(*view);
  return costOf(kind, extents);
}

std::array<TensorExtent, kMaxOperands> extentsOf(const KernelCall& call) {
  std::array<TensorExtent, kMaxOperands> extents{};
  for (size_t i = 0; i < call.positions(); ++i)
    if (call.operands[i]) extents[i] = extentOf(*call.operands[i]);
  return extents;
}

OpCost costOfCall(const KernelCall& call) { return costOf(call.kind, extentsOf(call), call.scalars); }

OpCost costOfCommunication(OpKind kind, const TensorView& input, const TensorView& output) {
  static_assert(size_t{operands::Allreduce::t} == size_t{operands::Broadcast::t} &&
                size_t{operands::Allreduce::t} == size_t{operands::SendRecv::src} &&
                size_t{operands::Allreduce::out} == size_t{operands::SendRecv::out} &&
                size_t{operands::Allreduce::out} == size_t{operands::Allgather::out} &&
                size_t{operands::Allgather::out} == size_t{operands::ReduceScatter::out});
  const TensorView* out = kind == OpKind::Broadcast ? nullptr : &output;  // broadcast works in place
  return costOfCall(kind, {{operands::Allreduce::t, &input}, {operands::Allreduce::out, out}});
}

}  // namespace hostir
