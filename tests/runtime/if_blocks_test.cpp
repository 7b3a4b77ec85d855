// if blocks in the evaluator: each rank and loop iteration issues the
// statements of the branch its condition picks, and only those; conditions
// short-circuit and nest; a branch's names are its own. The expected
// statements come from evaluating each condition here, in C++.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "harness.h"
#include "runtime/evaluator.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

class MainStream : public Stream {
 public:
  int slot() const override { return -1; }
};

// Issues nothing: records the line of every operation it is told about.
class LineRecordingBackend : public Backend {
 public:
  std::vector<int> lines;

  std::string_view name() const override { return "line-recording"; }
  void beginOperation(const OperationInfo& info) override { lines.push_back(info.loc.line); }
  void beginRun() override {}
  Stream* mainStream() override { return &main_; }
  Stream* workerStream(int64_t) override { return &main_; }
  Event recordEvent(Stream* stream) override { return Event{stream, 0}; }
  void waitEvent(Stream*, const Event&) override {}
  void synchronizeHost() override {}
  TensorView allocate(DType dtype, const Dims& shape, Stream*, bool) override {
    TensorView view;
    view.dtype = dtype;
    view.shape = shape;
    return view;
  }
  void deallocate(const TensorView&, Stream*) override {}
  void compute(Stream*, const KernelCall&) override {}
  void copy(Stream*, const TensorView&, const TensorView&) override {}
  void collective(Stream*, const CollectiveCall&) override {}
  void upload(const void*, const TensorView&) override {}
  void download(const TensorView&, void*) override {}

 private:
  MainStream main_;
};

// The line of each statement the evaluator issues for `rank` of `world`.
std::vector<int> issuedLines(const std::string& text, int64_t rank, int64_t world, const Params& params = {}) {
  Program program = parseOrThrow(text, "if.hir");
  if (Status error = verifyFor(program, params, world)) throw std::runtime_error(error->message);
  Evaluator evaluator(program, bindAll(program, params), rank, world);
  LineRecordingBackend backend;
  TensorView x = backend.allocate(DType::F32, Dims{8}, backend.mainStream(), false);
  evaluator.run(backend, {{"x", x}});
  return backend.lines;
}

std::string branches() { return testing::testProgramText("runtime/programs/if_branches_per_rank.hir"); }

TEST(IfBlocks, EachRankAndIterationIssuesTheBranchItsConditionPicks) {
  for (int64_t world : {1, 2, 3}) {
    for (int64_t rank = 0; rank < world; ++rank) {
      SCOPED_TRACE(::testing::Message() << "rank " << rank << " of " << world);
      std::vector<int> want;
      for (int64_t i = 0; i < 4; ++i) {
        if (i == 0 || rank == world - 1) {
          want.push_back(5);
        } else {
          want.push_back(7);
          if (!(i % 2 == 1 && rank > 0)) want.push_back(9);
        }
        want.push_back(12);
      }
      EXPECT_EQ(issuedLines(branches(), rank, world), want);
    }
  }
}

TEST(IfBlocks, ShortCircuitSkipsWhatTheLeftSideDecides) {
  // On rank 0, `M / rank` and `(rank - 1) % 2` would divide by zero and take
  // a negative modulo: the verifier and the evaluator never reach them.
  const std::string text = testing::testProgramText("runtime/programs/if_short_circuit.hir");
  for (int64_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    std::vector<int> want;
    if (rank == 0 || 4 / rank >= 2) want.push_back(4);
    if (rank > 0 && (rank - 1) % 2 == 0) want.push_back(7);
    EXPECT_EQ(issuedLines(text, rank, 4), want);
  }
}

TEST(IfBlocks, ComparisonsOfEveryKindAgreeWithCpp) {
  const std::array<std::string, 6> ops = {"==", "!=", "<", "<=", ">", ">="};
  for (size_t k = 0; k < ops.size(); ++k) {
    std::string text =
        "program p(A = 0, B = 0) {\n  input x : f32[8]\n  if A " + ops[k] + " B {\n    y = copy(x)\n  }\n}\n";
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t b = 0; b < 3; ++b) {
        const bool holds = std::array<bool, 6>{a == b, a != b, a<b, a <= b, a> b, a >= b}[k];
        EXPECT_EQ(issuedLines(text, 0, 1, {{"A", a}, {"B", b}}).size(), holds ? 1u : 0u)
            << "A " << ops[k] << " B with A=" << a << " B=" << b;
      }
    }
  }
}

TEST(IfBlocks, BranchNamesAreScopesOfTheirOwn) {
  // Both branches define `t` and `n`: each its own, with its own value.
  const std::string text = testing::testProgramText("runtime/programs/if_branch_scopes.hir");
  Program program = parseOrThrow(text, "if.hir");
  ASSERT_FALSE(verifyFor(program, {}, 1).has_value());
  EXPECT_EQ(issuedLines(text, 0, 1), (std::vector<int>{8, 9, 5, 6, 8, 9}));
}

}  // namespace
}  // namespace hostir::reftest
