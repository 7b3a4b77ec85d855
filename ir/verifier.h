// The verifier. Without bindings it checks names, scopes, value kinds and
// dtypes; with the params bound it runs the program's host part (loops
// unrolled, the branch taken of each if) for every rank and checks every
// shape, extent and integer.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"

namespace hostir {

struct Bindings {
  std::map<std::string, int64_t> params;  // overrides of the defaults (`--set`)
  int64_t world = 1;                      // team size the shapes are checked for
};

// Names, scopes, kinds and dtypes, operands against their signatures, and the
// limits: expression depth and size (kMaxExprLevels, kMaxExprNodes in
// ir/expr.h), loop and with nesting, tensor rank; independent of param values.
// Programs built in C++ meet here the checks the parser makes on text.
Status verifyStructure(const Program& program);

// Structure, then shapes and integers with the params bound, for every rank;
// every tensor's byte size (element count x dtype size) must fit in int64.
// Throws Cancelled (ir/cancellation.h) once `cancel` is set: a program that
// unrolls to the limit below takes seconds.
Status verifyProgram(const Program& program, const Bindings& bindings = {}, const std::atomic<bool>* cancel = nullptr);

// The value each param takes under `bindings`; fails on an unknown name.
Result<std::map<std::string, int64_t>> bindParams(const Program& program, const Bindings& bindings);

// Statement instances the bound check walks at most before it gives up, so
// that a loop of 10^12 iterations is an error, not a hang.
inline constexpr int64_t kMaxUnrolledStatements = 10'000'000;

// Expression nodes the bound check evaluates at most (over all statement
// instances and ranks), so that a huge expression in a long loop is an error,
// not a hang either. Real programs evaluate a few nodes per statement.
inline constexpr int64_t kMaxEvaluatedExprNodes = 10 * kMaxUnrolledStatements;

// Loops, with blocks and if blocks may nest at most this deep, counted together. Every
// walk of the statement tree (the printer, the verifier, the passes, the
// evaluator's compiler, destruction) recurses once per level; real programs
// nest two or three. The parser refuses deeper nests and verifyStructure
// refuses them in programs built in C++.
inline constexpr int kMaxLoopNesting = 64;

// Tensors have at most this many dimensions: the executor keeps shapes in
// fixed arrays of this size (runtime/tensor.h, kMaxTensorRank).
inline constexpr size_t kMaxTensorDims = 8;

}  // namespace hostir
