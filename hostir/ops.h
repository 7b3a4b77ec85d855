// The operations of the language and their signatures: which operands each
// takes (positional or keyword), of which kind, and what it defines. The
// parser, printer, verifier and builder all read this one table.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace hostir {

enum class OpKind {
  Allocate,
  Deallocate,
  ShardByStream,
  Linear,
  Matmul,
  Copy,
  Add,
  Allreduce,
  Allgather,
  ReduceScatter,
  Broadcast,
  Wait,
  GetCurrentStream,
  SetCurrentStream,
  Synchronize,
  RecordEvent,
  WaitEvent,
  // `n = ceildiv(a, b)`, `min`, `max`: binds a name to a host integer.
  IntValue,
};

// The kinds of values names are bound to.
enum class ValueKind { Int, Tensor, Stream, Event, Handle };
std::string_view valueKindName(ValueKind kind);

// What an operand slot accepts.
enum class OperandKind {
  Tensor,    // a name bound to a tensor
  Int,       // an integer expression
  Type,      // DTYPE[dims]
  Stream,    // stream(e) or a name bound to a stream
  Event,     // a name bound to an event
  Handle,    // a name bound to a communication handle
  Bool,      // true | false
  ReduceOp,  // sum | prod | min | max | avg
};
std::string_view operandKindName(OperandKind kind);

struct OperandSpec {
  std::string_view name;
  OperandKind kind;
  bool required;
  bool positional;  // printed positionally; keyword operands are printed `name=value`
};

// How an operation defines names.
enum class ResultMode {
  None,         // defines nothing
  Required,     // exactly one name
  Optional,     // zero or one name (a communication's handle)
  OutOrResult,  // `y = op(...)` allocates y; `op(..., out=y)` writes into y
};

struct OpSignature {
  OpKind kind;
  std::string_view name;
  std::span<const OperandSpec> operands;
  ResultMode resultMode;
  ValueKind resultKind;  // meaningful unless resultMode is None
  // Computes or communicates (as opposed to views, host integers and pure
  // ordering steps such as synchronize): what assign-streams overlaps.
  bool doesWork;
};

const OpSignature& signatureOf(OpKind kind);
std::optional<OpKind> opKindByName(std::string_view name);

// Index of the operand called `name` in the signature, or nullopt.
std::optional<size_t> operandIndex(const OpSignature& sig, std::string_view name);

enum class ReduceOp { Sum, Prod, Min, Max, Avg };
std::string_view reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(std::string_view name);

}  // namespace hostir
