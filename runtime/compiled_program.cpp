#include "runtime/compiled_program.h"

#include <algorithm>

namespace hostir {
namespace {

// `stack` holds at least code.code.size() values.
int64_t evalOn(int64_t* stack, const IntCode& code, const std::vector<RuntimeValue>& values) {
  int64_t* sp = stack;
  const size_t size = code.code.size();
  for (size_t pc = 0; pc < size; ++pc) {
    const IntInstr& i = code.code[pc];
    switch (i.op) {
      case IntOpcode::Const: *sp++ = i.operand; continue;
      case IntOpcode::Slot: *sp++ = values[static_cast<size_t>(i.operand)].integer; continue;
      case IntOpcode::Not: sp[-1] = sp[-1] == 0 ? 1 : 0; continue;
      case IntOpcode::AndJump:
      case IntOpcode::OrJump:
        if ((sp[-1] != 0) == (i.op == IntOpcode::OrJump)) {
          sp[-1] = sp[-1] != 0 ? 1 : 0;
          pc = static_cast<size_t>(i.operand) - 1;  // the loop's ++pc goes on at operand
        } else {
          --sp;
        }
        continue;
      default: break;
    }
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
      case IntOpcode::Equal: r = a == b; break;
      case IntOpcode::NotEqual: r = a != b; break;
      case IntOpcode::Less: r = a < b; break;
      case IntOpcode::LessEqual: r = a <= b; break;
      case IntOpcode::Greater: r = a > b; break;
      case IntOpcode::GreaterEqual: r = a >= b; break;
      default: break;
    }
    *sp++ = r;
  }
  return *(sp - 1);
}

}  // namespace

int64_t evalIntExpression(const IntCode& code, const std::vector<RuntimeValue>& values) {
  constexpr size_t kFixedStack = 64;
  if (code.code.size() > kFixedStack) {  // nested deeper than the fixed stack
    std::vector<int64_t> deep(code.code.size());
    return evalOn(deep.data(), code, values);
  }
  int64_t stack[kFixedStack];
  return evalOn(stack, code, values);
}

}  // namespace hostir
