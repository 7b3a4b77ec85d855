// The op table walked row by row: every computation has its rule in every
// layer an operation lives in, proved by running it there. A program of
// tests/executor/op_programs uses it; the program verifies (its shape rule);
// it runs on the CPU backend (its issue rule and CPU kernel) and as `run
// --check`'s serial reference (its f64 reference); and the model prices it
// above zero in a work class that is GEMM only for a GEMM (its cost). The
// CUDA kernels are walked the same way, without a device, by
// tests/cuda/cuda_kernel_table_test.cpp. The compiler holds each layer's
// dispatch to every kind (-Werror=switch); this test holds each rule to
// working.
#include <gtest/gtest.h>

#include <set>

#include "harness.h"
#include "model/machine_profile.h"
#include "model/simulation.h"
#include "op_programs.h"

namespace hostir::reftest {
namespace {

// The operations a program issues.
std::set<OpKind> kindsIn(const Program& program) {
  std::set<OpKind> kinds;
  walkStatements(program.body, [&](const Statement& stmt) {
    if (stmt.isOp()) kinds.insert(stmt.op().kind);
  });
  return kinds;
}

// The first op program that uses `kind`, at f32, or null.
const OpProgram* programUsing(OpKind kind) {
  for (const OpProgram& p : opPrograms())
    if (kindsIn(parseOrThrow(withDType(p.text, DType::F32))).count(kind)) return &p;
  return nullptr;
}

void runOnTheCpu(const Program& program, bool serialReference, const std::string& what) {
  RunRequest request = makeRequest(program, bindAll(program, {}), /*seed=*/1, /*streams=*/2);
  request.backend.cpu.reference = serialReference;
  auto result = runWithin(request, 1);
  ASSERT_TRUE(result.has_value()) << what << ": did not finish";
  EXPECT_TRUE(result->ok()) << what << ": " << (result->ok() ? "" : result->error().message);
}

TEST(OpTableRules, EveryComputationHasItsRuleInEveryLayer) {
  auto profile = loadMachineProfile("h100-nvlink");
  ASSERT_TRUE(profile.ok());
  int computations = 0;
  for (const OpSignature& sig : allSignatures()) {
    if (sig.category != OpCategory::Compute) continue;
    ++computations;
    SCOPED_TRACE(std::string(sig.name));
    const OpProgram* p = programUsing(sig.kind);
    ASSERT_NE(p, nullptr) << "no program of tests/executor/op_programs uses " << sig.name;
    Program program = parseOrThrow(withDType(p->text, DType::F32));
    EXPECT_EQ(verifyFor(program, {}, 1), std::nullopt) << "shape rule";
    runOnTheCpu(program, false, "issue rule and CPU kernel");
    runOnTheCpu(program, true, "serial reference");
    auto simulation = simulateProgram(program, bindAll(program, {}), 1, 2, *profile);
    ASSERT_TRUE(simulation.ok()) << simulation.error().message;
    bool priced = false;
    for (const WorkItem& item : simulation->work[0].items) {
      if (item.op != sig.kind || item.kind != WorkItem::Kind::Compute) continue;
      priced = priced || item.seconds > 0;
      // GEMMs and attention (two matrix products per head) contend as GEMMs.
      const bool gemmClass = isGemm(sig.cost) || sig.cost == CostRule::Attention;
      EXPECT_EQ(item.workClass == WorkClass::Gemm, gemmClass) << "work class";
    }
    EXPECT_TRUE(priced) << "the model prices no work of " << sig.name << " above zero";
  }
  EXPECT_GE(computations, 16);
}

}  // namespace
}  // namespace hostir::reftest
