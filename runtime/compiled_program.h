// The evaluator's compiled form of a program (private to executor/): a flat
// list of instructions whose operands are resolved value slots and integer
// code, built once by the Evaluator's compiler and read by Evaluator::run
// and the issue rules (runtime/issue_rules.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/shapes.h"
#include "runtime/backend.h"
#include "runtime/evaluator.h"

namespace hostir {

// Integer code also evaluates the conditions of `if` (ir/condition.h), to 0
// or 1: comparisons, `not`, and short-circuit `and`/`or` as jumps.
enum class IntOpcode : uint8_t {
  Const,
  Slot,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  CeilDiv,
  Min,
  Max,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  Not,
  // The left side of `and` is on the stack: when it is 0 it stays as the
  // result and evaluation goes on at `operand`; else it is popped and the
  // right side follows. OrJump is the same when the left side is not 0.
  AndJump,
  OrJump,
};

struct IntInstr {
  IntOpcode op;
  int64_t operand;  // Const: the value; Slot: the slot; AndJump, OrJump: the index to go on at
};

// An integer expression, or a condition, in postfix form.
struct IntCode {
  std::vector<IntInstr> code;
};

// One operand of an instruction, in CompiledProgram::operands (one entry
// per signature operand of an operation, two for a control instruction).
struct OperandEntry {
  // Read by the typed positions of ir/ops.h (operands::Linear::bias): a
  // value slot (names), an IntCode index (integers, booleans as 0 or 1, and
  // stream numbers), an index into CompiledProgram::floats (FLOAT
  // attributes), or -1 when absent.
  int32_t value = -1;
  // The slot of the tensor it accesses (for `out`, the result of
  // `y = op(...)`), or -1, and the effect, for OperationInfo.
  int32_t access = -1;
  Effect effect = Effect::None;
};

// What only errors, observers and traces read of an instruction.
struct InstructionDetail {
  SourceLoc loc;
  std::array<SourceLoc, kMaxOperands> operandLoc{};    // for run-time errors about one operand
  std::array<std::string, kMaxOperands> accessName{};  // the program's name of each accessed tensor
  std::string resultName;                              // for observers (race checker, traces)
};

// What the interpreter loop reads per instruction, in at most 64 bytes: the
// operands and dims live out of line (CompiledProgram's pools), the
// locations and names in its details.
struct Instruction {
  enum class Kind : uint8_t { Op, LoopBegin, LoopEnd, WithBegin, WithEnd, IfBegin, Else };
  Kind kind = Kind::Op;
  OpKind op = OpKind::Wait;
  DType dtype = DType::F32;  // allocate's and fill's type, cast's target
  bool zero = false;         // allocate's zero=
  bool issuesWork = false;   // counted in issuedOperations (hostir::issuesWork)
  ReduceOp reduceOp = ReduceOp::Sum;
  uint16_t streamNumberMask = 0;  // which operands are `stream(e)` numbers
  static_assert(kMaxOperands <= 16, "streamNumberMask has a bit per operand");
  int32_t result = -1;
  int32_t secondResult = -1;  // the slot of the second name of `v, i = top_k(...)`
  // Loops: operand kLoopStart is the start, kLoopEnd the end (IntCode);
  // result is the index slot, endSlot holds the bound; jump is the matching
  // instruction.
  int32_t endSlot = -1;
  int32_t jump = -1;
  // Handle and event arrays: the IntCode of the result's element index
  // (`h[e] = ...`) and of the handle or event operand's (`wait(h[e])`), or
  // -1 for a plain name; result and operand are then the array's slot.
  int32_t resultElement = -1;
  int32_t operandElement = -1;
  uint32_t firstOperand = 0;  // its entries in CompiledProgram::operands
  uint32_t firstDim = 0;      // its dims in CompiledProgram::dims: a type's, or a list's items
  uint32_t dimCount = 0;
  uint32_t detail = 0;  // its entry in CompiledProgram::details
};
static_assert(sizeof(Instruction) <= 64, "the interpreter's instruction fits a cache line");

// The operands of LoopBegin and LoopEnd.
enum : size_t { kLoopStart, kLoopEnd };

// IfBegin: operand[kIfCondition] is the condition (an IntCode of 0 or 1);
// when it is 0, jump is where to go on: the else branch, or the end of the
// block. Else ends the then branch (only an if with an else branch has
// one): jump is the end of the block. A branch's names are a scope of the
// compiler's, like a loop body's.
enum : size_t { kIfCondition };

// WithBegin: operand[kWithStream] is the block's stream (a slot, or an
// IntCode with streamNumberMask); result is the slot that keeps the stream
// current before the block, which WithEnd (result, the same slot) restores.
enum : size_t { kWithStream };

struct RuntimeValue {
  int64_t integer = 0;
  TensorView tensor;
  Stream* stream = nullptr;
  Event event;
  std::unordered_map<int64_t, Event> elements;  // a handle or event array, by index
};

class CompiledProgram {
 public:
  std::vector<Instruction> code;
  std::vector<OperandEntry> operands;  // by Instruction::firstOperand + position
  std::vector<int32_t> dims;           // IntCode per dim, by Instruction::firstDim
  std::vector<InstructionDetail> details;
  std::vector<IntCode> ints;
  std::vector<double> floats;  // FLOAT attributes, by Instruction::operand
  size_t slotCount = 0;
  std::vector<std::pair<int32_t, int64_t>> paramSlots;
  std::vector<std::pair<int32_t, std::string>> inputSlots;
  std::vector<std::pair<int32_t, std::string>> outputSlots;
  std::vector<TensorSpec> inputs, outputs;
  // The extents of the program's mesh on this team (empty without a mesh):
  // a communication's `over` operand holds a set of its axes (ir/mesh.h).
  std::vector<int64_t> meshExtents;
  std::vector<uint32_t> meshOvers;  // the sets of axes `over` operands name, sorted, each once

  const OperandEntry& operand(const Instruction& in, size_t position) const {
    return operands[in.firstOperand + position];
  }
  std::span<const int32_t> dimsOf(const Instruction& in) const { return {dims.data() + in.firstDim, in.dimCount}; }
  const InstructionDetail& detail(const Instruction& in) const { return details[in.detail]; }
};

// Evaluates verified integer code: the verifier already ruled out overflow,
// division by zero and negative operands for these params and this rank
// (in a condition, for the comparisons that short-circuiting reaches).
// Inline for the operands that are a literal or a name (most of them: the
// issue rules evaluate several per operation); runtime/compiled_program.cpp
// runs the stack machine for the rest.
int64_t evalIntExpression(const IntCode& code, const std::vector<RuntimeValue>& values);

inline int64_t evalInt(const IntCode& code, const std::vector<RuntimeValue>& values) {
  if (code.code.size() == 1) {
    const IntInstr& only = code.code.front();
    if (only.op == IntOpcode::Const) return only.operand;
    if (only.op == IntOpcode::Slot) return values[static_cast<size_t>(only.operand)].integer;
  }
  return evalIntExpression(code, values);
}

}  // namespace hostir
