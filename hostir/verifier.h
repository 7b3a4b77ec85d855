// The verifier. Without bindings it checks names, scopes, value kinds and
// dtypes; with the params bound it runs the program's host part (loops
// unrolled) for every rank and checks every shape, extent and integer.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "hostir/ir.h"

namespace hostir {

struct Bindings {
  std::map<std::string, int64_t> params;  // overrides of the defaults (`--set`)
  int64_t world = 1;                      // team size the shapes are checked for
};

// Names, scopes, kinds and dtypes; independent of param values.
Status verifyStructure(const Program& program);

// Structure, then shapes and integers with the params bound, for every rank.
Status verifyProgram(const Program& program, const Bindings& bindings = {});

// The value each param takes under `bindings`; fails on an unknown name.
Result<std::map<std::string, int64_t>> bindParams(const Program& program, const Bindings& bindings);

// Statement instances the bound check walks at most before it gives up, so
// that a loop of 10^12 iterations is an error, not a hang.
inline constexpr int64_t kMaxUnrolledStatements = 10'000'000;

}  // namespace hostir
