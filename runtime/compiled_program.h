// The evaluator's compiled form of a program (private to executor/): a flat
// list of instructions whose operands are resolved value slots and integer
// code, built once by the Evaluator's compiler and read by Evaluator::run
// and the issue rules (runtime/issue_rules.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/shapes.h"
#include "runtime/backend.h"
#include "runtime/evaluator.h"

namespace hostir {

enum class IntOpcode : uint8_t { Const, Slot, Add, Sub, Mul, Div, Mod, CeilDiv, Min, Max };

struct IntInstr {
  IntOpcode op;
  int64_t operand;  // Const: the value; Slot: the slot
};

// An integer expression in postfix form.
struct IntCode {
  std::vector<IntInstr> code;
};

constexpr std::array<int32_t, kMaxOperands> absentOperands() {
  std::array<int32_t, kMaxOperands> slots{};
  for (int32_t& slot : slots) slot = -1;
  return slots;
}

struct Instruction {
  enum class Kind : uint8_t { Op, LoopBegin, LoopEnd, WithBegin, WithEnd };
  Kind kind = Kind::Op;
  OpKind op = OpKind::Wait;
  SourceLoc loc;
  int32_t result = -1;
  // Per signature operand, read by the typed positions of ir/ops.h
  // (operands::Linear::bias): a value slot (names), an IntCode index
  // (integers, booleans as 0 or 1, and stream numbers), an index into
  // CompiledProgram::floats (FLOAT attributes), or -1 when absent.
  std::array<int32_t, kMaxOperands> operand = absentOperands();
  std::array<SourceLoc, kMaxOperands> operandLoc{};  // for run-time errors about one operand
  // Per signature operand: the slot of the tensor it accesses (for `out`,
  // the result of `y = op(...)`) and the effect, for OperationInfo.
  std::array<int32_t, kMaxOperands> accessSlot = absentOperands();
  std::array<Effect, kMaxOperands> effect{};
  uint16_t streamNumberMask = 0;  // which operands are `stream(e)` numbers
  static_assert(kMaxOperands <= 16, "streamNumberMask has a bit per operand");
  bool issuesWork = false;    // counted in issuedOperations (hostir::issuesWork)
  std::vector<int32_t> dims;  // allocate: IntCode per dim
  DType dtype = DType::F32;   // allocate's type, cast's target
  bool zero = false;          // allocate's zero=
  ReduceOp reduceOp = ReduceOp::Sum;
  // Loops: operand[kLoopStart] start, operand[kLoopEnd] end (IntCode); result
  // is the index slot, endSlot holds the bound; jump is the matching instruction.
  int32_t endSlot = -1;
  int32_t jump = -1;
  std::string resultName;  // for observers (race checker, traces)
};

// The operands of LoopBegin and LoopEnd.
enum : size_t { kLoopStart, kLoopEnd };

// WithBegin: operand[kWithStream] is the block's stream (a slot, or an
// IntCode with streamNumberMask); result is the slot that keeps the stream
// current before the block, which WithEnd (result, the same slot) restores.
enum : size_t { kWithStream };

struct RuntimeValue {
  int64_t integer = 0;
  TensorView tensor;
  Stream* stream = nullptr;
  Event event;
};

class CompiledProgram {
 public:
  std::vector<Instruction> code;
  std::vector<IntCode> ints;
  std::vector<double> floats;  // FLOAT attributes, by Instruction::operand
  size_t slotCount = 0;
  std::vector<std::pair<int32_t, int64_t>> paramSlots;
  std::vector<std::pair<int32_t, std::string>> inputSlots;
  std::vector<std::pair<int32_t, std::string>> outputSlots;
  std::vector<TensorSpec> inputs, outputs;
};

// Evaluates verified integer code: the verifier already ruled out overflow,
// division by zero and negative operands for these params and this rank.
// Inline: the issue rules in every runtime/issue_*.cpp evaluate operands.
inline int64_t evalInt(const IntCode& code, const std::vector<RuntimeValue>& values) {
  int64_t stack[64];
  std::vector<int64_t> deep;  // only for expressions nested deeper than the fixed stack
  int64_t* top = stack;
  if (code.code.size() > 64) {
    deep.resize(code.code.size());
    top = deep.data();
  }
  int64_t* sp = top;
  for (const IntInstr& i : code.code) {
    switch (i.op) {
      case IntOpcode::Const: *sp++ = i.operand; break;
      case IntOpcode::Slot: *sp++ = values[static_cast<size_t>(i.operand)].integer; break;
      default: {
        int64_t b = *--sp;
        int64_t a = *--sp;
        int64_t r = 0;
        switch (i.op) {
          case IntOpcode::Add: r = a + b; break;
          case IntOpcode::Sub: r = a - b; break;
          case IntOpcode::Mul: r = a * b; break;
          case IntOpcode::Div: r = a / b; break;
          case IntOpcode::Mod: r = a % b; break;
          case IntOpcode::CeilDiv: r = ceilDiv(a, b); break;
          case IntOpcode::Min: r = std::min(a, b); break;
          case IntOpcode::Max: r = std::max(a, b); break;
          default: break;
        }
        *sp++ = r;
      }
    }
  }
  return *(sp - 1);
}

}  // namespace hostir
