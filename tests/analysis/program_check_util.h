// Parses, verifies and checks a program text with checkProgram, failing the
// current test when the text does not parse or verify (so that a table row
// cannot rot into a program the checker never sees).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "analysis/program_check.h"
#include "hostir/parser.h"
#include "hostir/verifier.h"

namespace hostir::testing {

inline ProgramCheck checkText(const std::string& text, int64_t world, int64_t pool = 4,
                              const std::map<std::string, int64_t>& settings = {}) {
  auto program = parseProgram(text);
  EXPECT_TRUE(program) << renderDiagnostic(program.error(), "test.hir", text);
  if (!program) return {};
  Bindings bindings{settings, world};
  auto error = verifyProgram(*program, bindings);
  EXPECT_FALSE(error) << renderDiagnostic(*error, "test.hir", text);
  if (error) return {};
  return checkProgram(*program, *bindParams(*program, bindings), world, pool);
}

}  // namespace hostir::testing
