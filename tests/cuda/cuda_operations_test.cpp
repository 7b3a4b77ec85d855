// The CUDA backend's computations against the CPU backend's, on the same
// seeded inputs: sub and mul with add, b broadcast by NumPy's rule; relu,
// silu, gelu and scale; rms_norm and softmax over strided rows; cast
// between every pair of dtypes (bit for bit where both round once);
// matmul's transposes and batch axis; attention with GQA, causal offsets,
// rows that see no key and lse, also in many blocks of query rows;
// merge_attention with −inf on either side; gather_rows and
// scatter_add_rows with −1, repeated rows and strided tables; i32
// allocate, zero, copy, input and output. Every program runs in each
// dtype on one rank; those with a communication also on two in-process
// ranks (copy engines sharing the device; NCCL where there are two
// devices). An index out of range must fail the run with an error at its
// statement. Without a usable device every case is skipped, with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/output_comparison.h"
#include "executor/backend_factory.h"
#include "executor/cuda/cuda_attention.h"
#include "executor/cuda/cuda_devices.h"
#include "harness.h"
#include "op_programs.h"
#include "test_files.h"

namespace hostir::reftest {
namespace {

using hostir::testing::testProgramText;

HostTensor indexTensor(const std::vector<int64_t>& shape, const std::vector<int32_t>& values) {
  HostTensor t = makeHostTensor(DType::I32, Dims(shape));
  if (t.data.size() != values.size() * sizeof(int32_t)) throw std::logic_error("index tensor of the wrong size");
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// One program of the suite, "$T" standing for the dtype.
struct OpCase {
  OpCase(std::string name, std::string text) : name(std::move(name)), text(std::move(text)) {}
  std::string name;
  std::string text;
  std::map<std::string, HostTensor> given;  // inputs not seeded (indices)
  bool communicates = false;                // also run on two ranks
  // The outputs both backends must produce bit for bit in `dtype`.
  std::function<std::set<std::string>(DType)> exact = [](DType) { return std::set<std::string>{}; };
  size_t attentionBudget = 0;  // nonzero: CUDA attention's scores budget, to force many blocks
};

// ---- the programs ----------------------------------------------------------------

OpCase binaryBroadcast() { return {"binary_broadcast", testProgramText("cuda/programs/binary_broadcast.hir")}; }

OpCase activations() { return {"activations", testProgramText("cuda/programs/activations.hir")}; }

// Rows longer than a block's threads, and rows of a chunk along the last
// axis (row stride twice the row).
OpCase rows() { return {"rows", testProgramText("cuda/programs/rows.hir")}; }

OpCase casts() {
  OpCase c{"casts", testProgramText("cuda/programs/casts.hir")};
  // One rounding to nearest even gives one answer. From f64 the CPU may
  // round through f32 first (a tie can then differ by one unit); those
  // outputs are held to the dtype's tolerance instead.
  c.exact = [](DType dtype) {
    if (dtype == DType::F64) return std::set<std::string>{"to_f32", "to_f64"};
    return std::set<std::string>{"to_f32", "to_f16", "to_bf16", "to_f64", "back"};
  };
  return c;
}

OpCase matmuls() { return {"matmuls", testProgramText("cuda/programs/matmuls.hir")}; }

// Every form of attention: full, causal with offsets (q_offset past the
// keys; k_offset past some queries, so their rows see no key), GQA (4
// query heads on 2 key/value heads), MHA and MQA, keys from a strided view.
std::string attentionProgram() { return testProgramText("cuda/programs/attention.hir"); }

OpCase attention() { return {"attention", attentionProgram()}; }

// The same program with a scores budget of a few query rows per block:
// blocks whose rows see no key, and causal blocks that stop early.
OpCase attentionInBlocks() {
  OpCase c{"attention_blocks", attentionProgram()};
  c.attentionBudget = 2048;
  return c;
}

// Keys in two halves folded with merge_attention. Rows 0–5 see nothing of
// the second half: their part has lse −inf, and folding the first half
// into an all-−inf running result takes the part whole; folding two −inf
// sides leaves o and lse as they are.
OpCase mergeAttention() { return {"merge_attention", testProgramText("cuda/programs/merge_attention.hir")}; }

// Rows of 3 × W elements, indices with −1 and repeats (the repeated rows
// of scatter_add_rows add in idx's order), a table that is a strided chunk,
// a 1-d table; and i32 tensors allocated, zeroed, copied and output.
OpCase gatherScatter() {
  OpCase c{"gather_scatter", testProgramText("cuda/programs/gather_scatter.hir")};
  c.given["idx"] = indexTensor({2, 6}, {3, -1, 0, 9, 3, 5, -1, 9, 9, 2, 0, 7});
  // Gathers, i32 copies and zero-fills move bits.
  c.exact = [](DType) { return std::set<std::string>{"g", "gc", "g1", "idx_copy", "idx_half", "zeros"}; };
  return c;
}

// Ring-free sequence parallelism: each rank's query rows attend causally
// to every rank's keys, gathered; its q_offset is its first global row.
OpCase shardedAttention() {
  OpCase c{"sharded_attention", testProgramText("cuda/programs/sharded_attention.hir")};
  c.communicates = true;
  return c;
}

// MoE-style: every rank gathers and scatters its share of the indices
// (allgathered too, as i32), and an allreduce sums the scattered rows.
OpCase shardedIndexing() {
  OpCase c{"sharded_indexing", testProgramText("cuda/programs/sharded_indexing.hir")};
  c.given["idx"] = indexTensor({6}, {7, -1, 2, 2, 0, 7});
  c.communicates = true;
  c.exact = [](DType) { return std::set<std::string>{"g", "gathered"}; };
  return c;
}

std::vector<OpCase> opCases() {
  return {binaryBroadcast(), activations(),       rows(),           casts(),         matmuls(),
          attention(),       attentionInBlocks(), mergeAttention(), gatherScatter(), shardedAttention(),
          shardedIndexing()};
}

// ---- the runs --------------------------------------------------------------------

struct OpRun {
  OpCase op;
  DType dtype = DType::F32;
  int64_t world = 1;
  CommunicatorChoice communicator = CommunicatorChoice::Nccl;
  std::string label;
};

std::ostream& operator<<(std::ostream& os, const OpRun& r) { return os << r.label; }

std::vector<OpRun> opRuns() {
  std::vector<OpRun> runs;
  for (const OpCase& op : opCases()) {
    for (DType dtype : kDTypes) {
      runs.push_back(OpRun{op, dtype, 1, CommunicatorChoice::Nccl, fmt::format("{}_{}", op.name, dtypeName(dtype))});
      if (!op.communicates) continue;
      runs.push_back(OpRun{op, dtype, 2, CommunicatorChoice::CopyEngine,
                           fmt::format("{}_{}_world2_copy_engine", op.name, dtypeName(dtype))});
      runs.push_back(
          OpRun{op, dtype, 2, CommunicatorChoice::Nccl, fmt::format("{}_{}_world2", op.name, dtypeName(dtype))});
    }
  }
  return runs;
}

// Sets CUDA attention's scores budget for a scope (0: leaves it).
class ScopedAttentionBudget {
 public:
  explicit ScopedAttentionBudget(size_t bytes) : saved_(cuda::attentionScoresBudget()) {
    if (bytes) cuda::setAttentionScoresBudget(bytes);
  }
  ~ScopedAttentionBudget() { cuda::setAttentionScoresBudget(saved_); }
  ScopedAttentionBudget(const ScopedAttentionBudget&) = delete;
  ScopedAttentionBudget& operator=(const ScopedAttentionBudget&) = delete;

 private:
  size_t saved_;
};

std::optional<std::string> skipReason(int64_t world, CommunicatorChoice communicator) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) return reason;
  // NCCL needs a device per rank; copy engines share them.
  if (communicator == CommunicatorChoice::Nccl && world > cuda::usableDeviceCount())
    return fmt::format("NCCL needs {} CUDA devices, this machine has {}", world, cuda::usableDeviceCount());
  return std::nullopt;
}

// Runs `request` on `backend`; fails the test (and returns nullopt) on an error or a hang.
std::optional<RunResult> runOn(RunRequest request, BackendKind backend, int64_t world) {
  request.backend.kind = backend;
  auto result = runWithin(request, world, std::chrono::seconds(120));
  const char* name = backend == BackendKind::Cuda ? "cuda" : "cpu";
  if (!result) {
    ADD_FAILURE() << name << " run did not finish within 120 s";
    return std::nullopt;
  }
  if (!*result) {
    ADD_FAILURE() << name << " run failed: " << result->error().message;
    return std::nullopt;
  }
  return std::move(**result);
}

class CudaOperationsTest : public ::testing::TestWithParam<OpRun> {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = skipReason(GetParam().world, GetParam().communicator))
      GTEST_SKIP() << *reason;
  }
};

TEST_P(CudaOperationsTest, MatchesTheCpuBackend) {
  const OpRun& run = GetParam();
  Program program = parseOrThrow(withDType(run.op.text, run.dtype));
  // The programs are valid by the contract: a refusal is a failure here.
  Status invalid = verifyFor(program, {}, run.world);
  ASSERT_FALSE(invalid) << invalid->message;
  // Two worker streams and two runs: the second reuses the first's memory.
  RunRequest request = makeRequest(program, bindAll(program, {}), /*seed=*/17, /*streams=*/2);
  request.repeat = 2;
  request.inputs = run.op.given;
  std::optional<RunResult> cpu = runOn(request, BackendKind::Cpu, run.world);
  request.backend.communicator = run.communicator;
  std::optional<RunResult> gpu;
  {
    ScopedAttentionBudget budget(run.op.attentionBudget);
    gpu = runOn(request, BackendKind::Cuda, run.world);
  }
  ASSERT_TRUE(cpu && gpu);
  ASSERT_FALSE(cpu->outputs.empty());
  Comparison comparison = compareOutputs(gpu->outputs, cpu->outputs);
  EXPECT_TRUE(comparison.ok) << comparison.report;
  for (const std::string& name : run.op.exact(run.dtype)) {
    ASSERT_TRUE(cpu->outputs.count(name) && gpu->outputs.count(name)) << name;
    EXPECT_TRUE(gpu->outputs.at(name).data == cpu->outputs.at(name).data) << "output '" << name << "' differs in bits";
  }
}

INSTANTIATE_TEST_SUITE_P(NewOperations, CudaOperationsTest, ::testing::ValuesIn(opRuns()),
                         [](const auto& info) { return info.param.label; });

// ---- indices out of range --------------------------------------------------------

struct BadIndexCase {
  std::string label;
  std::string text;
  std::vector<int32_t> idx;
  uint32_t line;  // of the statement that must be named
  std::string message;
};

std::ostream& operator<<(std::ostream& os, const BadIndexCase& c) { return os << c.label; }

std::string badGather() { return testProgramText("cuda/programs/bad_gather.hir"); }

// On a worker stream.
std::string badScatter() { return testProgramText("cuda/programs/bad_scatter.hir"); }

std::vector<BadIndexCase> badIndexCases() {
  return {
      {"gather_past_the_rows", badGather(), {0, 4, -1}, 9, "index 4 of 'idx' is out of range for 'x' with 4 rows"},
      {"gather_below_minus_one", badGather(), {1, -1, -2}, 9, "index -2 of 'idx' is out of range for 'x' with 4 rows"},
      {"scatter_past_the_rows", badScatter(), {3, 9, 1}, 11, "index 9 of 'idx' is out of range for 'y' with 4 rows"},
      {"scatter_below_minus_one",
       badScatter(),
       {-1, -5, 0},
       11,
       "index -5 of 'idx' is out of range for 'y' with 4 rows"},
  };
}

class CudaBadIndexTest : public ::testing::TestWithParam<BadIndexCase> {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  }
};

// The run fails with the statement's position and the index, and the same
// program with its indices in range runs.
TEST_P(CudaBadIndexTest, FailsTheRunAtTheStatement) {
  const BadIndexCase& c = GetParam();
  Program program = parseOrThrow(c.text);
  Status invalid = verifyFor(program, {}, 1);
  ASSERT_FALSE(invalid) << invalid->message;
  RunRequest request = makeRequest(program, bindAll(program, {}), /*seed=*/5, /*streams=*/2);
  request.backend.kind = BackendKind::Cuda;
  request.inputs["idx"] = indexTensor({3}, c.idx);
  auto result = runWithin(request, 1, std::chrono::seconds(120));
  ASSERT_TRUE(result) << "the run did not finish within 120 s";
  ASSERT_FALSE(*result) << "a run with an index out of range succeeded";
  const Diagnostic& error = result->error();
  EXPECT_EQ(error.loc.line, c.line) << error.message;
  EXPECT_EQ(error.message, c.message);  // the CPU backend's wording (runtime/index_fault.h)

  request.inputs["idx"] = indexTensor({3}, {0, -1, 3});
  auto fine = runWithin(request, 1, std::chrono::seconds(120));
  ASSERT_TRUE(fine) << "the run did not finish within 120 s";
  EXPECT_TRUE(*fine) << fine->error().message;
}

INSTANTIATE_TEST_SUITE_P(Indices, CudaBadIndexTest, ::testing::ValuesIn(badIndexCases()),
                         [](const auto& info) { return info.param.label; });

// ---- the program files, without a device ----------------------------------------

// Every program of the suite parses and verifies in every dtype (on two
// ranks too where it communicates) with or without a device, so a missing
// or broken program file fails here where the runs above are skipped; and
// the line each bad-index case expects its error at is its indexing
// statement.
TEST(CudaOperationPrograms, EveryProgramVerifiesInEveryDType) {
  for (const OpCase& op : opCases()) {
    for (DType dtype : kDTypes) {
      SCOPED_TRACE(fmt::format("{}_{}", op.name, dtypeName(dtype)));
      Program program = parseOrThrow(withDType(op.text, dtype));
      for (int64_t world : {int64_t{1}, int64_t{2}}) {
        if (world == 2 && !op.communicates) continue;
        Status invalid = verifyFor(program, {}, world);
        EXPECT_FALSE(invalid) << "world " << world << ": " << invalid->message;
      }
    }
  }
  for (const BadIndexCase& c : badIndexCases()) {
    SCOPED_TRACE(c.label);
    Program program = parseOrThrow(c.text);
    Status invalid = verifyFor(program, {}, 1);
    EXPECT_FALSE(invalid) << invalid->message;
    std::istringstream lines(c.text);
    std::string line;
    for (uint32_t k = 0; k < c.line; ++k) std::getline(lines, line);
    EXPECT_TRUE(line.find("gather_rows(") != std::string::npos || line.find("scatter_add_rows(") != std::string::npos)
        << "line " << c.line << " is: " << line;
  }
}

}  // namespace
}  // namespace hostir::reftest
