#include "hostir/ops.h"

#include <array>

namespace hostir {
namespace {

using K = OperandKind;
constexpr bool kReq = true, kOpt = false, kPos = true, kKw = false;

constexpr OperandSpec kAllocate[] = {{"type", K::Type, kReq, kPos}, {"zero", K::Bool, kOpt, kKw}};
constexpr OperandSpec kDeallocate[] = {{"t", K::Tensor, kReq, kPos}};
constexpr OperandSpec kShardByStream[] = {{"t", K::Tensor, kReq, kPos},
                                          {"axis", K::Int, kReq, kKw},
                                          {"index", K::Int, kReq, kKw},
                                          {"chunks", K::Int, kReq, kKw}};
constexpr OperandSpec kLinear[] = {{"x", K::Tensor, kReq, kPos},
                                   {"w", K::Tensor, kReq, kPos},
                                   {"bias", K::Tensor, kOpt, kPos},
                                   {"out", K::Tensor, kOpt, kKw}};
constexpr OperandSpec kMatmul[] = {{"a", K::Tensor, kReq, kPos},
                                   {"b", K::Tensor, kReq, kPos},
                                   {"out", K::Tensor, kOpt, kKw}};
constexpr OperandSpec kCopy[] = {{"src", K::Tensor, kReq, kPos}, {"out", K::Tensor, kOpt, kKw}};
constexpr OperandSpec kAdd[] = {{"a", K::Tensor, kReq, kPos},
                                {"b", K::Tensor, kReq, kPos},
                                {"out", K::Tensor, kOpt, kKw}};
constexpr OperandSpec kAllreduce[] = {{"t", K::Tensor, kReq, kPos},
                                      {"out", K::Tensor, kOpt, kKw},
                                      {"op", K::ReduceOp, kOpt, kKw}};
constexpr OperandSpec kAllgather[] = {{"t", K::Tensor, kReq, kPos},
                                      {"out", K::Tensor, kReq, kKw},
                                      {"axis", K::Int, kOpt, kKw}};
constexpr OperandSpec kReduceScatter[] = {{"t", K::Tensor, kReq, kPos},
                                          {"out", K::Tensor, kReq, kKw},
                                          {"axis", K::Int, kOpt, kKw},
                                          {"op", K::ReduceOp, kOpt, kKw}};
constexpr OperandSpec kBroadcast[] = {{"t", K::Tensor, kReq, kPos}, {"root", K::Int, kReq, kKw}};
constexpr OperandSpec kWait[] = {{"h", K::Handle, kReq, kPos}};
constexpr OperandSpec kStreamOperand[] = {{"s", K::Stream, kReq, kPos}};
constexpr OperandSpec kWaitEvent[] = {{"ev", K::Event, kReq, kPos}};
constexpr OperandSpec kIntValue[] = {{"a", K::Int, kReq, kPos}, {"b", K::Int, kReq, kPos}};

constexpr std::array<OpSignature, 18> kSignatures = {{
    {OpKind::Allocate, "allocate", kAllocate, ResultMode::Required, ValueKind::Tensor, true},
    {OpKind::Deallocate, "deallocate", kDeallocate, ResultMode::None, ValueKind::Tensor, false},
    {OpKind::ShardByStream, "shard_by_stream", kShardByStream, ResultMode::Required, ValueKind::Tensor, false},
    {OpKind::Linear, "linear", kLinear, ResultMode::OutOrResult, ValueKind::Tensor, true},
    {OpKind::Matmul, "matmul", kMatmul, ResultMode::OutOrResult, ValueKind::Tensor, true},
    {OpKind::Copy, "copy", kCopy, ResultMode::OutOrResult, ValueKind::Tensor, true},
    {OpKind::Add, "add", kAdd, ResultMode::OutOrResult, ValueKind::Tensor, true},
    {OpKind::Allreduce, "allreduce", kAllreduce, ResultMode::Optional, ValueKind::Handle, true},
    {OpKind::Allgather, "allgather", kAllgather, ResultMode::Optional, ValueKind::Handle, true},
    {OpKind::ReduceScatter, "reduce_scatter", kReduceScatter, ResultMode::Optional, ValueKind::Handle, true},
    {OpKind::Broadcast, "broadcast", kBroadcast, ResultMode::Optional, ValueKind::Handle, true},
    {OpKind::Wait, "wait", kWait, ResultMode::None, ValueKind::Handle, false},
    {OpKind::GetCurrentStream, "get_current_stream", {}, ResultMode::Required, ValueKind::Stream, false},
    {OpKind::SetCurrentStream, "set_current_stream", kStreamOperand, ResultMode::None, ValueKind::Stream, false},
    {OpKind::Synchronize, "synchronize", kStreamOperand, ResultMode::None, ValueKind::Stream, false},
    {OpKind::RecordEvent, "record_event", {}, ResultMode::Required, ValueKind::Event, false},
    {OpKind::WaitEvent, "wait_event", kWaitEvent, ResultMode::None, ValueKind::Event, false},
    // IntValue has three spellings; the table lists one, the parser maps all three.
    {OpKind::IntValue, "ceildiv", kIntValue, ResultMode::Required, ValueKind::Int, false},
}};

}  // namespace

std::string_view valueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::Int: return "integer";
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Stream: return "stream";
    case ValueKind::Event: return "event";
    case ValueKind::Handle: return "communication handle";
  }
  return "?";
}

std::string_view operandKindName(OperandKind kind) {
  switch (kind) {
    case K::Tensor: return "a tensor";
    case K::Int: return "an integer expression";
    case K::Type: return "a tensor type like f32[M, N]";
    case K::Stream: return "a stream";
    case K::Event: return "an event";
    case K::Handle: return "a communication handle";
    case K::Bool: return "true or false";
    case K::ReduceOp: return "one of sum, prod, min, max, avg";
  }
  return "?";
}

const OpSignature& signatureOf(OpKind kind) { return kSignatures[static_cast<size_t>(kind)]; }

std::optional<OpKind> opKindByName(std::string_view name) {
  for (const OpSignature& sig : kSignatures)
    if (sig.name == name && sig.kind != OpKind::IntValue) return sig.kind;
  return std::nullopt;
}

std::optional<size_t> operandIndex(const OpSignature& sig, std::string_view name) {
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].name == name) return i;
  return std::nullopt;
}

std::string_view reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

std::optional<ReduceOp> parseReduceOp(std::string_view name) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg})
    if (reduceOpName(op) == name) return op;
  return std::nullopt;
}

}  // namespace hostir
