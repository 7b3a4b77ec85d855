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

namespace hostir::reftest {
namespace {

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

OpCase binaryBroadcast() {
  return {"binary_broadcast", R"hir(
program binary_broadcast(M = 6, N = 40) {
  input  a    : $T[2, M, N]
  input  same : $T[2, M, N]
  input  row  : $T[N]
  input  row1 : $T[1, N]
  input  col  : $T[M, 1]
  output s    : $T[2, M, N]
  output d    : $T[2, M, N]
  output p    : $T[2, M, N]
  output e    : $T[2, M, N]
  output q    : $T[2, M, N]
  s = add(a, row)
  d = sub(a, col)
  p = mul(a, same)
  e = sub(a, row1)
  q = allocate($T[2, M, N])
  a1 = shard_by_stream(a, axis=2, index=1, chunks=2)
  s0 = shard_by_stream(same, axis=2, index=0, chunks=2)
  q0 = shard_by_stream(q, axis=2, index=0, chunks=2)
  q1 = shard_by_stream(q, axis=2, index=1, chunks=2)
  mul(a1, s0, out=q0)
  sub(s0, col, out=q1)
}
)hir"};
}

OpCase activations() {
  return {"activations", R"hir(
program activations(M = 8, N = 96) {
  input  x : $T[M, N]
  output r : $T[M, N]
  output s : $T[M, N]
  output g : $T[M, N]
  output c : $T[M, N]
  output y : $T[M, N]
  big = scale(x, by=4.0)
  r = relu(x)
  s = silu(big)
  g = gelu(big)
  c = scale(x, by=-0.375)
  y = allocate($T[M, N])
  copy(big, out=y)
  y1 = shard_by_stream(y, axis=1, index=1, chunks=3)
  gelu(y1, out=y1)
  y2 = shard_by_stream(y, axis=1, index=2, chunks=3)
  relu(y2, out=y2)
}
)hir"};
}

// Rows longer than a block's threads, and rows of a chunk along the last
// axis (row stride twice the row).
OpCase rows() {
  return {"rows", R"hir(
program rows(B = 2, M = 5, N = 600) {
  input  x  : $T[B, M, N]
  input  w  : $T[N]
  input  v  : $T[N]
  output n  : $T[B, M, N]
  output s  : $T[B, M, N]
  output sc : $T[B, M, N / 2]
  output nc : $T[B, M, N / 2]
  output t  : $T[N]
  n = rms_norm(x, w, eps=1e-5)
  big = scale(x, by=8.0)
  s = softmax(big)
  xc = shard_by_stream(big, axis=2, index=1, chunks=2)
  sc = softmax(xc)
  wc = shard_by_stream(w, axis=0, index=1, chunks=2)
  nc = rms_norm(xc, wc)
  t = softmax(v)
}
)hir"};
}

OpCase casts() {
  OpCase c{"casts", R"hir(
program casts(M = 7, N = 33) {
  input  x       : $T[M, N]
  output to_f32  : f32[M, N]
  output to_f16  : f16[M, N]
  output to_bf16 : bf16[M, N]
  output to_f64  : f64[M, N]
  output back    : $T[M, N]
  to_f32 = cast(x, dtype=f32)
  to_f16 = cast(x, dtype=f16)
  to_bf16 = cast(x, dtype=bf16)
  to_f64 = cast(x, dtype=f64)
  back = cast(to_bf16, dtype=$T)
}
)hir"};
  // One rounding to nearest even gives one answer. From f64 the CPU may
  // round through f32 first (a tie can then differ by one unit); those
  // outputs are held to the dtype's tolerance instead.
  c.exact = [](DType dtype) {
    if (dtype == DType::F64) return std::set<std::string>{"to_f32", "to_f64"};
    return std::set<std::string>{"to_f32", "to_f16", "to_bf16", "to_f64", "back"};
  };
  return c;
}

OpCase matmuls() {
  return {"matmuls", R"hir(
program matmuls(B = 3, M = 17, K = 24, N = 9) {
  input  a    : $T[B, M, K]
  input  at   : $T[B, K, M]
  input  b    : $T[B, K, N]
  input  bt   : $T[B, N, K]
  input  a2   : $T[M, K]
  input  b2t  : $T[N, K]
  output c_nn : $T[B, M, N]
  output c_tn : $T[B, M, N]
  output c_nt : $T[B, M, N]
  output c_tt : $T[B, M, N]
  output c2   : $T[M, N]
  output cs   : $T[M, N]
  output ch   : $T[B, 8, N]
  c_nn = matmul(a, b)
  c_tn = matmul(at, b, transpose_a=true)
  c_nt = matmul(a, bt, transpose_b=true)
  c_tt = matmul(at, bt, transpose_a=true, transpose_b=true)
  c2 = matmul(a2, b2t, transpose_b=true)
  ac = shard_by_stream(a2, axis=1, index=0, chunks=2)
  bc = shard_by_stream(b2t, axis=1, index=0, chunks=2)
  cs = matmul(ac, bc, transpose_b=true)
  ah = shard_by_stream(a, axis=1, index=1, chunks=2)
  ch = matmul(ah, b)
}
)hir"};
}

// Every form of attention: full, causal with offsets (q_offset past the
// keys; k_offset past some queries, so their rows see no key), GQA (4
// query heads on 2 key/value heads), MHA and MQA, keys from a strided view.
const char* const kAttention = R"hir(
program attn(Tq = 24, Tk = 40, H = 4, G = 2, D = 16) {
  input  q          : $T[Tq, H * D]
  input  k          : $T[Tk, G * D]
  input  v          : $T[Tk, G * D]
  output o_full     : $T[Tq, H * D]
  output o_causal   : $T[Tq, H * D]
  output lse_causal : f32[Tq, H]
  output o_late     : $T[Tq, H * D]
  output lse_late   : f32[Tq, H]
  output o_mha      : $T[Tq, H * D]
  output o_mqa      : $T[Tq, H * D]
  output lse_mqa    : f32[Tq, H]
  o_full = attention(q, k, v, heads=H, kv_heads=G)
  lse_causal = allocate(f32[Tq, H])
  o_causal = attention(q, k, v, heads=H, kv_heads=G, causal=true, q_offset=16, lse=lse_causal)
  lse_late = allocate(f32[Tq, H])
  o_late = attention(q, k, v, heads=H, kv_heads=G, causal=true, q_offset=0, k_offset=10, lse=lse_late)
  o_mha = attention(q, q, q, heads=H)
  k1 = shard_by_stream(k, axis=1, index=1, chunks=G)
  v1 = shard_by_stream(v, axis=1, index=0, chunks=G)
  lse_mqa = allocate(f32[Tq, H])
  o_mqa = attention(q, k1, v1, heads=H, kv_heads=1, causal=true, q_offset=20, k_offset=3, lse=lse_mqa)
}
)hir";

OpCase attention() { return {"attention", kAttention}; }

// The same program with a scores budget of a few query rows per block:
// blocks whose rows see no key, and causal blocks that stop early.
OpCase attentionInBlocks() {
  OpCase c{"attention_blocks", kAttention};
  c.attentionBudget = 2048;
  return c;
}

// Keys in two halves folded with merge_attention. Rows 0–5 see nothing of
// the second half: their part has lse −inf, and folding the first half
// into an all-−inf running result takes the part whole; folding two −inf
// sides leaves o and lse as they are.
OpCase mergeAttention() {
  return {"merge_attention", R"hir(
program merge(Tq = 12, Tk = 32, H = 2, D = 8) {
  input  q     : $T[Tq, H * D]
  input  k     : $T[Tk, H * D]
  input  v     : $T[Tk, H * D]
  output o     : $T[Tq, H * D]
  output l     : f32[Tq, H]
  output o2    : $T[Tq, H * D]
  output l2    : f32[Tq, H]
  output o3    : $T[Tq, H * D]
  output l3    : f32[Tq, H]
  k0 = shard_by_stream(k, axis=0, index=0, chunks=2)
  v0 = shard_by_stream(v, axis=0, index=0, chunks=2)
  k1 = shard_by_stream(k, axis=0, index=1, chunks=2)
  v1 = shard_by_stream(v, axis=0, index=1, chunks=2)
  l = allocate(f32[Tq, H])
  o = attention(q, k0, v0, heads=H, causal=true, q_offset=10, lse=l)
  l1 = allocate(f32[Tq, H])
  o1 = attention(q, k1, v1, heads=H, causal=true, q_offset=10, k_offset=16, lse=l1)
  l0 = allocate(f32[Tq, H])
  o0 = attention(q, k0, v0, heads=H, causal=true, q_offset=10, lse=l0)
  merge_attention(o, l, o1, l1)
  l2 = allocate(f32[Tq, H])
  o2 = attention(q, k1, v1, heads=H, causal=true, q_offset=10, k_offset=16, lse=l2)
  merge_attention(o2, l2, o0, l0)
  l3 = allocate(f32[Tq, H])
  o3 = attention(q, k1, v1, heads=H, causal=true, q_offset=10, k_offset=16, lse=l3)
  merge_attention(o3, l3, o1, l1)
}
)hir"};
}

// Rows of 3 × W elements, indices with −1 and repeats (the repeated rows
// of scatter_add_rows add in idx's order), a table that is a strided chunk,
// a 1-d table; and i32 tensors allocated, zeroed, copied and output.
OpCase gatherScatter() {
  OpCase c{"gather_scatter", R"hir(
program gather_scatter(R = 10, W = 24, N = 6) {
  input  x        : $T[R, 3, W]
  input  x1       : $T[R]
  input  idx      : i32[2, N]
  input  src      : $T[2, N, 3, W]
  output g        : $T[2, N, 3, W]
  output gc       : $T[2, N, 3, W / 2]
  output g1       : $T[2, N]
  output y        : $T[R, 3, W]
  output yc       : $T[R, 3, W]
  output y1       : $T[R]
  output idx_copy : i32[2, N]
  output idx_half : i32[2, N / 2]
  output zeros    : i32[5]
  g = gather_rows(x, idx)
  xc = shard_by_stream(x, axis=2, index=1, chunks=2)
  gc = gather_rows(xc, idx)
  g1 = gather_rows(x1, idx)
  y = allocate($T[R, 3, W])
  copy(x, out=y)
  scatter_add_rows(src, idx, out=y)
  yc = allocate($T[R, 3, W], zero=true)
  ych = shard_by_stream(yc, axis=2, index=0, chunks=2)
  sch = shard_by_stream(src, axis=3, index=1, chunks=2)
  scatter_add_rows(sch, idx, out=ych)
  y1 = allocate($T[R], zero=true)
  scatter_add_rows(g1, idx, out=y1)
  idx_copy = allocate(i32[2, N])
  copy(idx, out=idx_copy)
  ih = shard_by_stream(idx, axis=1, index=1, chunks=2)
  idx_half = allocate(i32[2, N / 2])
  copy(ih, out=idx_half)
  zeros = allocate(i32[5], zero=true)
}
)hir"};
  c.given["idx"] = indexTensor({2, 6}, {3, -1, 0, 9, 3, 5, -1, 9, 9, 2, 0, 7});
  // Gathers, i32 copies and zero-fills move bits.
  c.exact = [](DType) { return std::set<std::string>{"g", "gc", "g1", "idx_copy", "idx_half", "zeros"}; };
  return c;
}

// Ring-free sequence parallelism: each rank's query rows attend causally
// to every rank's keys, gathered; its q_offset is its first global row.
OpCase shardedAttention() {
  OpCase c{"sharded_attention", R"hir(
program sharded_attention(T = 16, H = 4, G = 2, D = 8) {
  input  q   : $T[T, H * D] shard(0)
  input  k   : $T[T, G * D] shard(0)
  input  v   : $T[T, G * D] shard(0)
  output o   : $T[T, H * D] shard(0)
  output lse : f32[T, H] shard(0)
  kall = allocate($T[T, G * D])
  h1 = allgather(k, out=kall, axis=0)
  vall = allocate($T[T, G * D])
  h2 = allgather(v, out=vall, axis=0)
  wait(h1)
  wait(h2)
  lse = allocate(f32[T / world, H])
  o = attention(q, kall, vall, heads=H, kv_heads=G, causal=true, q_offset=rank * (T / world), lse=lse)
}
)hir"};
  c.communicates = true;
  return c;
}

// MoE-style: every rank gathers and scatters its share of the indices
// (allgathered too, as i32), and an allreduce sums the scattered rows.
OpCase shardedIndexing() {
  OpCase c{"sharded_indexing", R"hir(
program sharded_indexing(R = 8, W = 16, N = 6) {
  input  x    : $T[R, W]
  input  idx  : i32[N] shard(0)
  input  src  : $T[N, W] shard(0)
  output g    : $T[N, W] shard(0)
  output y    : $T[R, W]
  output gathered : i32[N]
  g = gather_rows(x, idx)
  s = silu(src)
  y = allocate($T[R, W], zero=true)
  scatter_add_rows(s, idx, out=y)
  h = allreduce(y, op=sum)
  wait(h)
  gathered = allocate(i32[N])
  a = allgather(idx, out=gathered, axis=0)
  wait(a)
}
)hir"};
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

const char* const kBadGather = R"hir(program bad_gather(R = 4) {
  input  x   : f32[R, 8]
  input  idx : i32[3]
  output g   : f32[3, 8]
  output y   : f32[R, 8]
  y = relu(x)
  g = gather_rows(x, idx)
}
)hir";

// On a worker stream.
const char* const kBadScatter = R"hir(program bad_scatter(R = 4) {
  input  src : f32[3, 8]
  input  idx : i32[3]
  output y   : f32[R, 8]
  main = get_current_stream()
  y = allocate(f32[R, 8], zero=true)
  with stream(1) {
    synchronize(main)
    scatter_add_rows(src, idx, out=y)
  }
  synchronize(stream(1))
}
)hir";

std::vector<BadIndexCase> badIndexCases() {
  return {
      {"gather_past_the_rows", kBadGather, {0, 4, -1}, 7, "index 4 of 'idx' is out of range for 'x' with 4 rows"},
      {"gather_below_minus_one", kBadGather, {1, -1, -2}, 7, "index -2 of 'idx' is out of range for 'x' with 4 rows"},
      {"scatter_past_the_rows", kBadScatter, {3, 9, 1}, 9, "index 9 of 'idx' is out of range for 'y' with 4 rows"},
      {"scatter_below_minus_one", kBadScatter, {-1, -5, 0}, 9, "index -5 of 'idx' is out of range for 'y' with 4 rows"},
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

}  // namespace
}  // namespace hostir::reftest
