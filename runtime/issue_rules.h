// The issue rules of the evaluator (private to executor/): what each
// operation asks of the Backend when Evaluator::run reaches it, grouped by
// category:
//
//   issue_compute.cpp        allocate, deallocate, shard_by_stream, reshape,
//                            copy, transpose, and every computation (linear, matmul,
//                            add, ...), whose rules live in that file only
//   issue_communication.cpp  allreduce, allgather, reduce_scatter, broadcast,
//                            sendrecv
//   issue_streams.cpp        wait, get/set_current_stream, synchronize,
//                            record_event, wait_event, ceildiv/min/max
//
// Evaluator::run dispatches to them through issueOperation: a table by
// OpKind of the rules ir/op_list.h names, so a rule missing for an
// operation fails to compile.
// They run once per issued operation: direct calls, arguments by reference,
// no allocation beyond what the operation itself needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/backend.h"
#include "runtime/compiled_program.h"

namespace hostir {

// The state of one Evaluator::run: every slot's value, the backend, the
// current stream, and the rank in its team. The rules read operands through
// it and rebind results and the current stream in it.
struct RunFrame {
  RunFrame(const CompiledProgram& program, Backend& backend, int64_t rank, int64_t world);

  RuntimeValue& value(int32_t slot) { return values[static_cast<size_t>(slot)]; }
  int64_t integer(int32_t code) const { return evalInt(program.ints[static_cast<size_t>(code)], values); }
  // Non-tensor operand `operand` of `in` as a number (an integer, a boolean
  // as 0 or 1, a FLOAT), or `absent` when the statement does not give it.
  double scalar(const Instruction& in, size_t operand, double absent = 0.0) const {
    int32_t code = slot(in, operand);
    if (code < 0) return absent;
    if (signatureOf(in.op).operands[operand].kind == OperandKind::Float)
      return program.floats[static_cast<size_t>(code)];
    return static_cast<double>(integer(code));
  }
  // Integer operand `operand` of `in` exactly, or `absent` when not given.
  int64_t integerOperand(const Instruction& in, size_t operand, int64_t absent = 0) const {
    const int32_t code = slot(in, operand);
    return code < 0 ? absent : integer(code);
  }
  // What operand `operand` of `in` holds (CompiledProgram's OperandEntry::value).
  int32_t slot(const Instruction& in, size_t operand) const { return program.operand(in, operand).value; }
  const TensorView& tensor(const Instruction& in, size_t operand) { return value(slot(in, operand)).tensor; }
  bool present(const Instruction& in, size_t operand) const { return slot(in, operand) >= 0; }
  // An instruction's IntCode dims (a type's, or a list's items), evaluated.
  Dims dims(const Instruction& in) const {
    Dims shape;
    for (int32_t code : program.dimsOf(in)) shape[shape.size++] = integer(code);
    return shape;
  }
  // The handle or event that operand `operand` of `in` names: a plain
  // name's, or the element of an array. An element this rank has not
  // issued (a run that skipped `check`) is an error at the operand.
  const Event& eventOperand(const Instruction& in, size_t operand);
  // Where the handle or event `in` defines goes; an element defined twice,
  // or at a negative index, is an error at the statement.
  Event& eventResult(const Instruction& in);
  // A stream operand: `stream(e)` is worker stream e, a name its captured stream.
  Stream* stream(const Instruction& in, size_t operand) {
    if (in.streamNumberMask & (1u << operand)) return backend.workerStream(integer(slot(in, operand)));
    return value(slot(in, operand)).stream;
  }

  const CompiledProgram& program;
  Backend& backend;
  const int64_t rank;
  const int64_t world;
  std::vector<RuntimeValue> values;  // by slot
  Stream* current = nullptr;
  // The call issueCommunication fills and hands over, reused: one made per
  // statement zeroes its two views first (a `rep stos` as costly as the rest
  // of issuing an allreduce). Backends copy what they keep of a call.
  CollectiveCall collective;
};

// issue_compute.cpp
void issueAllocate(RunFrame& frame, const Instruction& in);
void issueDeallocate(RunFrame& frame, const Instruction& in);
void issueShardByStream(RunFrame& frame, const Instruction& in);
void issueReshape(RunFrame& frame, const Instruction& in);
void issueTranspose(RunFrame& frame, const Instruction& in);
void issueCopy(RunFrame& frame, const Instruction& in);

// issue_communication.cpp: every collective and sendrecv.
void issueCommunication(RunFrame& frame, const Instruction& in);

// issue_streams.cpp
void issueWait(RunFrame& frame, const Instruction& in);
void issueGetCurrentStream(RunFrame& frame, const Instruction& in);
void issueSetCurrentStream(RunFrame& frame, const Instruction& in);
void issueSynchronize(RunFrame& frame, const Instruction& in);
void issueRecordEvent(RunFrame& frame, const Instruction& in);
void issueWaitEvent(RunFrame& frame, const Instruction& in);
void issueIntValue(RunFrame& frame, const Instruction& in);

using IssueRule = void (*)(RunFrame&, const Instruction&);
// Every operation's issue rule, by OpKind, as its row of ir/op_list.h names
// it (defined in issue_compute.cpp, beside the computations' rules).
extern const IssueRule kIssueRules[kOpKindCount];

// Issues one operation's work on the current stream.
inline void issueOperation(RunFrame& frame, const Instruction& in) { kIssueRules[opIndex(in.op)](frame, in); }

}  // namespace hostir
