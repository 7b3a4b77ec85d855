// The verifier on well-formed programs: every operation verifies where the
// shapes divide, for teams of 1 to 4 ranks; params, integer bindings, rank-
// dependent expressions and loop scopes behave as the language doc says.
//
// The error cases written as text (this source, these settings, this error
// at this position) live in tests/diagnostics/*.hir; see its README.md. Here
// stay the programs that verify, and the errors of programs built in C++ or
// generated.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/strip_compute.h"
#include "test_files.h"

namespace {

using namespace hostir;

Program parse(const std::string& text) {
  auto parsed = parseProgram(text);
  EXPECT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "t.hir", text);
  return parsed.ok() ? *parsed : Program{};
}

// "" when the program verifies, else the rendered first line of the diagnostic.
std::string verifyText(const std::string& text, int64_t world = 1, std::map<std::string, int64_t> params = {}) {
  auto parsed = parseProgram(text);
  if (!parsed.ok()) return "parse error: " + renderDiagnostic(parsed.error(), "t.hir", text);
  Status status = verifyProgram(*parsed, Bindings{std::move(params), world});
  if (!status) return "";
  std::string rendered = renderDiagnostic(*status, "t.hir", text);
  return rendered.substr(0, rendered.find('\n'));
}

std::string error(const std::string& where, const std::string& message) {
  return "t.hir:" + where + ": error: " + message;
}

// ---------------------------------------------------------------------------
// Every operation of the language in a valid program.

struct OpProgram {
  std::string name;
  std::string source;
};

void PrintTo(const OpProgram& p, std::ostream* os) { *os << p.name; }

std::vector<OpProgram> opPrograms() {
  return {
      {"allocate",
       "program p(M = 12, N = 24) {\n"
       "  output y : f32[M, N]\n"
       "  y = allocate(f32[M, N])\n"
       "  z = allocate(bf16[N], zero=true)\n"
       "  s = allocate(f64[])\n"
       "  e = allocate(f16[M, 0], zero=false)\n"
       "}\n"},
      {"deallocate",
       "program p(M = 12) {\n"
       "  t = allocate(f32[M])\n"
       "  u = copy(t)\n"
       "  deallocate(t)\n"
       "  deallocate(u)\n"
       "  for i in range(3) {\n"
       "    v = allocate(f32[M])\n"
       "    deallocate(v)\n"
       "  }\n"
       "}\n"},
      {"shard_by_stream",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N] shard(1)\n"
       "  for i in range(5) {\n"
       "    v = shard_by_stream(x, axis=0, index=i, chunks=5)\n"
       "    w = shard_by_stream(v, axis=1, index=0, chunks=1)\n"
       "  }\n"
       "  first = shard_by_stream(x, axis=0, index=0, chunks=5)\n"
       "  a = allocate(f32[3, N / world])\n"
       "  copy(first, out=a)\n"
       "  last = shard_by_stream(x, axis=0, index=4, chunks=5)\n"
       "  e = allocate(f32[0, N / world])\n"
       "  copy(last, out=e)\n"
       "  mine = shard_by_stream(x, axis=0, index=rank, chunks=world)\n"
       "}\n"},
      {"linear",
       "program p(M = 12, K = 24, N = 12) {\n"
       "  input x : f32[M, K] shard(1)\n"
       "  input w : f32[N, K] shard(1)\n"
       "  input b : f32[N]\n"
       "  input x3 : f32[2, M, K]\n"
       "  input w3 : f32[N, K]\n"
       "  output y : f32[M, N]\n"
       "  y = linear(x, w)\n"
       "  o = allocate(f32[M, N])\n"
       "  linear(x, w, b, out=o)\n"
       "  z = linear(x3, w3, bias=b)\n"
       "  o3 = allocate(f32[2, M, N])\n"
       "  copy(z, out=o3)\n"
       "}\n"},
      {"matmul",
       "program p(M = 12, K = 24, N = 36) {\n"
       "  input a : f16[M, K] shard(1)\n"
       "  input b : f16[K, N] shard(0)\n"
       "  output c : f16[M, N]\n"
       "  c = matmul(a, b)\n"
       "  d = allocate(f16[M, N])\n"
       "  matmul(a, b, out=d)\n"
       "}\n"},
      {"copy_and_add",
       "program p(M = 12, N = 24) {\n"
       "  input x : f64[M, N] shard(0)\n"
       "  output y : f64[M, N] shard(0)\n"
       "  c = copy(x)\n"
       "  y = add(x, c)\n"
       "  o = allocate(f64[M / world, N])\n"
       "  add(y, c, out=o)\n"
       "  copy(o, out=c)\n"
       "}\n"},
      {"elementwise",
       "program p(M = 12, N = 24) {\n"
       "  input x : bf16[M, N] shard(0)\n"
       "  input row : bf16[N]\n"
       "  input col : bf16[M, 1] shard(0)\n"
       "  input s : bf16[]\n"
       "  output y : bf16[M, N] shard(0)\n"
       "  a = sub(x, row)\n"
       "  b = mul(a, col)\n"
       "  y = add(b, s)\n"
       "  r = relu(y)\n"
       "  g = gelu(r)\n"
       "  silu(g, out=g)\n"
       "  t = scale(g, by=0.125)\n"
       "  scale(t, by=-2e-3, out=y)\n"
       "}\n"},
      {"rows",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[2, M, N] shard(1)\n"
       "  input w : f32[N]\n"
       "  n = rms_norm(x, w)\n"
       "  o = allocate(f32[2, M / world, N])\n"
       "  rms_norm(x, w, eps=1e-5, out=o)\n"
       "  p = softmax(n)\n"
       "  softmax(p, out=p)\n"
       "}\n"},
      {"attention",
       "program p(T = 12, S = 16, H = 8, G = 2, D = 4) {\n"
       "  input q : f16[T, H * D] shard(0)\n"
       "  input k : f16[S, G * D]\n"
       "  input v : f16[S, G * D]\n"
       "  output o : f16[T, H * D] shard(0)\n"
       "  o = attention(q, k, v, heads=H, kv_heads=G)\n"
       "  l = allocate(f32[T / world, H])\n"
       "  p = attention(q, k, v, heads=H, kv_heads=G, causal=true, q_offset=rank * (T / world), k_offset=3, lse=l)\n"
       "  pl = allocate(f32[T / world, H])\n"
       "  attention(q, k, v, out=p, heads=H, kv_heads=1 + 1, causal=false, lse=pl)\n"
       "  merge_attention(p, l, o, pl)\n"
       "}\n"},
      {"gather_scatter_rows",
       "program p(R = 12, N = 12, D = 8) {\n"
       "  input x : f32[R, D]\n"
       "  input idx : i32[N, 2] shard(0)\n"
       "  input one : i32[]\n"
       "  output y : f32[N, 2, D] shard(0)\n"
       "  y = gather_rows(x, idx)\n"
       "  s = gather_rows(x, one)\n"
       "  z = allocate(f32[R, D], zero=true)\n"
       "  scatter_add_rows(y, idx, out=z)\n"
       "  i2 = copy(idx)\n"
       "}\n"},
      {"matmul_transposed_batched",
       "program p(B = 12, M = 12, K = 24, N = 8) {\n"
       "  input a : f64[K, M]\n"
       "  input b : f64[N, K]\n"
       "  input a3 : f64[B, M, K] shard(0)\n"
       "  input b3 : f64[B, N, K] shard(0)\n"
       "  output c : f64[M, N]\n"
       "  c = matmul(a, b, transpose_a=true, transpose_b=true)\n"
       "  c3 = matmul(a3, b3, transpose_b=true)\n"
       "  o = allocate(f64[B / world, M, N])\n"
       "  matmul(a3, b3, out=o, transpose_a=false, transpose_b=true)\n"
       "}\n"},
      {"cast",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N]\n"
       "  output h : f16[M, N]\n"
       "  output d : f64[M, N]\n"
       "  h = cast(x, dtype=f16)\n"
       "  b = cast(h, dtype=bf16)\n"
       "  d = allocate(f64[M, N])\n"
       "  cast(b, dtype=f64, out=d)\n"
       "}\n"},
      {"allreduce",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N]\n"
       "  h = allreduce(x)\n"
       "  wait(h)\n"
       "  o = allocate(f32[M, N])\n"
       "  h2 = allreduce(x, out=o, op=avg)\n"
       "  wait(h2)\n"
       "  allreduce(o, op=prod)\n"
       "  allreduce(o, op=min)\n"
       "  allreduce(o, op=max)\n"
       "  allreduce(o, op=sum)\n"
       "}\n"},
      {"allgather",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N] shard(0)\n"
       "  input z : f32[M, N] shard(1)\n"
       "  output y : f32[M, N]\n"
       "  y = allocate(f32[M, N])\n"
       "  h = allgather(x, out=y)\n"
       "  wait(h)\n"
       "  g = allocate(f32[M, N])\n"
       "  allgather(z, out=g, axis=1)\n"
       "  t = allocate(f32[2, 3])\n"
       "  big = allocate(f32[2 * world, 3])\n"
       "  allgather(t, out=big, axis=0)\n"
       "}\n"},
      {"reduce_scatter",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N]\n"
       "  output y : f32[M, N] shard(0)\n"
       "  y = allocate(f32[M / world, N])\n"
       "  h = reduce_scatter(x, out=y)\n"
       "  wait(h)\n"
       "  o = allocate(f32[M, N / world])\n"
       "  reduce_scatter(x, out=o, axis=1, op=max)\n"
       "  reduce_scatter(x, out=y, axis=0, op=avg)\n"
       "}\n"},
      {"all_to_all",
       "program p(M = 12, N = 24) {\n"
       "  input x : f32[M, N]\n"
       "  input idx : i32[M]\n"
       "  o = allocate(f32[M, N])\n"
       "  h = all_to_all(x, out=o)\n"
       "  wait(h)\n"
       "  c = allocate(f32[M, N])\n"
       "  all_to_all(x, out=c, axis=1)\n"
       "  j = allocate(i32[M])\n"
       "  all_to_all(idx, out=j, axis=0)\n"
       "}\n"},
      {"broadcast",
       "program p(M = 12, S = 8) {\n"
       "  input x : f32[M]\n"
       "  for i in range(S) {\n"
       "    h = broadcast(x, root=i % world)\n"
       "    wait(h)\n"
       "  }\n"
       "  broadcast(x, root=0)\n"
       "  broadcast(x, root=world - 1)\n"
       "}\n"},
      {"sendrecv",
       "program p(M = 12, S = 3) {\n"
       "  input x : f32[M, 2 * M]\n"
       "  output y : f32[M, 2 * M]\n"
       "  y = allocate(f32[M, 2 * M])\n"
       "  h = sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)\n"
       "  wait(h)\n"
       "  for i in range(S) {\n"
       "    xi = shard_by_stream(x, axis=1, index=i, chunks=S)\n"
       "    yi = shard_by_stream(y, axis=1, index=i, chunks=S)\n"
       "    sendrecv(xi, out=yi, to=(rank + i) % world, from=(rank + world - i % world) % world)\n"
       "  }\n"
       "  # Uneven blocks: rank r sends r + 1 elements and receives those of rank r - 1.\n"
       "  a = allocate(f32[rank + 1])\n"
       "  b = allocate(f32[(rank + world - 1) % world + 1])\n"
       "  sendrecv(a, out=b, to=(rank + 1) % world, from=(rank + world - 1) % world)\n"
       "  sendrecv(x, out=x, to=rank, from=rank)\n"
       "}\n"},
      {"streams",
       "program p(S = 6) {\n"
       "  main = get_current_stream()\n"
       "  for i in range(S) {\n"
       "    set_current_stream(stream(i))\n"
       "    synchronize(main)\n"
       "    mine = get_current_stream()\n"
       "    synchronize(mine)\n"
       "  }\n"
       "  set_current_stream(main)\n"
       "  for j in range(S) {\n"
       "    synchronize(stream(j))\n"
       "  }\n"
       "  set_current_stream(stream(world - rank - 1))\n"
       "  synchronize(stream(1000 * S))\n"
       "}\n"},
      {"events",
       "program p(M = 12) {\n"
       "  t = allocate(f32[M])\n"
       "  ev = record_event()\n"
       "  set_current_stream(stream(1))\n"
       "  wait_event(ev)\n"
       "  for i in range(2) {\n"
       "    e = record_event()\n"
       "    wait_event(e)\n"
       "    wait_event(ev)\n"
       "  }\n"
       "}\n"},
      {"integer_bindings",
       "program p(M = 10, S = 4) {\n"
       "  n = ceildiv(M, S)\n"
       "  lo = min(M, S)\n"
       "  hi = max(M, S)\n"
       "  t = allocate(f32[n * S])\n"
       "  for i in range(n) {\n"
       "    c = min(i, lo - 1)\n"
       "    v = shard_by_stream(t, axis=0, index=c, chunks=hi)\n"
       "  }\n"
       "}\n"},
      {"row_parallel_linear",
       "# Row-parallel linear: y = allreduce(x_r @ w_r^T), overlapped in S chunks.\n"
       "program row_parallel_linear(M = 240, K = 480, N = 120, S = 4) {\n"
       "  input  x : f32[M, K] shard(1)\n"
       "  input  w : f32[N, K] shard(1)\n"
       "  output y : f32[M, N]\n"
       "\n"
       "  y = allocate(f32[M, N])\n"
       "  for i in range(S) {\n"
       "    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
       "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
       "    linear(xi, w, out=yi)\n"
       "    c = allreduce(yi, op=sum)\n"
       "    wait(c)\n"
       "  }\n"
       "}\n"},
      {"unary_math",
       "program p(M = 12, N = 24) {\n"
       "  input x : f16[M, N] shard(0)\n"
       "  output y : f16[M, N] shard(0)\n"
       "  e = exp(x)\n"
       "  l = log(e)\n"
       "  r = sqrt(e)\n"
       "  q = rsqrt(r)\n"
       "  g = sigmoid(q)\n"
       "  t = tanh(g)\n"
       "  s = sin(t)\n"
       "  c = cos(s)\n"
       "  b = abs(c)\n"
       "  y = neg(b)\n"
       "}\n"},
      {"binary_math",
       "program p(M = 12, N = 24) {\n"
       "  input x : bf16[M, N] shard(0)\n"
       "  input row : bf16[N]\n"
       "  output y : bf16[M, N] shard(0)\n"
       "  q = div(x, row)\n"
       "  a = maximum(q, row)\n"
       "  b = minimum(a, x)\n"
       "  c = gt(b, row)\n"
       "  d = ge(c, x)\n"
       "  e = lt(d, row)\n"
       "  f = le(e, x)\n"
       "  g = eq(f, row)\n"
       "  y = ne(g, x)\n"
       "}\n"},
      {"layer_ops", hostir::testing::testProgramText("ir/programs/layer_ops.hir")},
  };
}

class VerifierOps : public ::testing::TestWithParam<OpProgram> {};

TEST_P(VerifierOps, VerifiesForWorldsOneToFour) {
  Program p = parse(GetParam().source);
  EXPECT_EQ(verifyStructure(p), std::nullopt);
  for (int64_t world = 1; world <= 4; ++world) {
    Status status = verifyProgram(p, Bindings{{}, world});
    EXPECT_FALSE(status.has_value()) << "world " << world << ": "
                                     << renderDiagnostic(*status, "t.hir", GetParam().source);
  }
}

INSTANTIATE_TEST_SUITE_P(Verifier, VerifierOps, ::testing::ValuesIn(opPrograms()),
                         [](const ::testing::TestParamInfo<OpProgram>& info) { return info.param.name; });

TEST(VerifierOpsCoverage, EveryOperationAppears) {
  std::set<OpKind> kinds;
  std::set<IntFunction> functions;
  for (const OpProgram& p : opPrograms()) {
    Program program = parse(p.source);
    walkStatements(program.body, [&](const Statement& stmt) {
      if (!stmt.isOp()) return;
      kinds.insert(stmt.op().kind);
      if (stmt.op().kind != OpKind::IntValue) return;
      const Expr& value = stmt.op().operands[operands::IntValue::value]->expr;
      if (value.kind() == ExprKind::Call) functions.insert(value.node().function);
    });
  }
  for (int k = 0; k <= static_cast<int>(OpKind::IntValue); ++k)
    EXPECT_TRUE(kinds.count(static_cast<OpKind>(k))) << "no program uses " << signatureOf(static_cast<OpKind>(k)).name;
  EXPECT_EQ(functions.size(), 3u);
}

// ---------------------------------------------------------------------------
// Shapes the verifier computes, observed through output declarations.

TEST(VerifierShapes, ShardByStreamChunks) {
  // Extent 10 in 4 chunks: 3, 3, 3, 1.
  const std::string text =
      "program p(E = 10, I = 0) {\n"
      "  input x : f32[E, 2]\n"
      "  output y : f32[3, 2]\n"
      "  v = shard_by_stream(x, axis=0, index=I, chunks=4)\n"
      "  y = copy(v)\n"
      "}\n";
  for (int64_t index : {0, 1, 2}) EXPECT_EQ(verifyText(text, 1, {{"I", index}}), "") << index;
  // Extent 12: 3 each.
  EXPECT_EQ(verifyText(text, 1, {{"I", 3}, {"E", 12}}), "");
  // The last chunk [1, 2] (I=3), and an empty one [0, 2] (E=2, I=2): outputs.hir.
}

TEST(VerifierShapes, ViewOfAShardedInput) {
  const std::string text =
      "program p(M = 8, N = 12) {\n"
      "  input x : f32[M, N] shard(1)\n"
      "  v = shard_by_stream(x, axis=0, index=0, chunks=2)\n"
      "  o = allocate(f32[4, 6])\n"
      "  copy(v, out=o)\n"
      "}\n";
  EXPECT_EQ(verifyText(text, 2), "");
  // One and three ranks: shapes.hir.
}

TEST(VerifierShapes, LinearAndMatmulResults) {
  const std::string text =
      "program p(M = 4, K = 6, N = 5) {\n"
      "  input x : f32[M, K]\n"
      "  input w : f32[N, K]\n"
      "  output y : f32[M, N]\n"
      "  output z : f32[M, M]\n"
      "  y = linear(x, w)\n"
      "  wt = allocate(f32[K, M])\n"
      "  z = matmul(x, wt)\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"M", 7}, {"N", 7}}), "");
  EXPECT_EQ(verifyText(text, 1, {{"K", 7}}), "");
}

// The shapes of the computations' results, observed through output declarations.
TEST(VerifierShapes, ResultsOfTheComputations) {
  const std::string text =
      "program p(B = 3, M = 4, K = 5, N = 6, T = 7) {\n"
      "  input a : f32[K, M]\n"
      "  input b : f32[N, K]\n"
      "  input a3 : f32[B, M, K]\n"
      "  input b3 : f32[B, K, N]\n"
      "  input x : f16[T, 2, 3]\n"
      "  input idx : i32[M, N]\n"
      "  input k : i32[]\n"
      "  input s : f16[]\n"
      "  output c : f32[M, N]\n"
      "  output c3 : f32[B, M, N]\n"
      "  output g : f16[M, N, 2, 3]\n"
      "  output one : f16[2, 3]\n"
      "  output d : f64[T, 2, 3]\n"
      "  output y : f16[T, 2, 3]\n"
      "  c = matmul(a, b, transpose_a=true, transpose_b=true)\n"
      "  c3 = matmul(a3, b3)\n"
      "  g = gather_rows(x, idx)\n"
      "  one = gather_rows(x, k)\n"
      "  d = cast(x, dtype=f64)\n"
      "  y = mul(x, s)\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  // Indices of rank 7 and rows of rank 2 make a result of 9 dimensions, one too many.
  std::string tooDeep = text;
  tooDeep.replace(tooDeep.find("i32[M, N]"), 9, "i32[1, 1, 1, 1, 1, M, N]");
  EXPECT_EQ(verifyText(tooDeep), error("18:7",
                                       "the result of 'gather_rows', [1, 1, 1, 1, 1, 4, 6, 2, 3], has 9 dimensions; "
                                       "tensors have at most 8"));
}

// strip-compute replaces each computation's result by an allocation of its
// symbolic type (ir/symbolic_types): the stripped program must verify too,
// with the outputs' declared shapes and dtypes.
TEST(VerifierShapes, SymbolicTypesOfTheComputationsMatchTheVerifier) {
  const std::string text =
      "program p(B = 2, M = 4, K = 6, N = 8, W = 2) {\n"
      "  input a : f32[K, M]\n"
      "  input b : f32[N, K]\n"
      "  input a3 : f32[B, M, K] shard(0)\n"
      "  input b3 : f32[B, N, K] shard(0)\n"
      "  input x : bf16[M, 3]\n"
      "  input idx : i32[N, W]\n"
      "  output c : f32[M, N]\n"
      "  output c3 : f32[B, M, N] shard(0)\n"
      "  output g : bf16[N, W, 3]\n"
      "  output h : f16[M, 3]\n"
      "  output p : bf16[M, 3]\n"
      "  c = matmul(a, b, transpose_a=true, transpose_b=true)\n"
      "  c3 = matmul(a3, b3, transpose_b=true)\n"
      "  g = gather_rows(x, idx)\n"
      "  h = cast(x, dtype=f16)\n"
      "  p = softmax(x)\n"
      "}\n";
  Program program = parse(text);
  ASSERT_EQ(verifyProgram(program, Bindings{{}, 2}), std::nullopt);
  StripComputePass strip;
  ASSERT_EQ(strip.run(program, PassContext{}), std::nullopt);
  for (const Statement& stmt : program.body) EXPECT_EQ(stmt.op().kind, OpKind::Allocate) << printProgram(program);
  Status status = verifyProgram(program, Bindings{{}, 2});
  EXPECT_FALSE(status.has_value()) << renderDiagnostic(*status, "stripped.hir", printProgram(program));
}

TEST(VerifierShapes, ShapesAreNotStructural) {
  const std::string text =
      "program p(M = 4, K = 6, N = 5) {\n"
      "  input x : f32[M, K]\n"
      "  input w : f32[N, K]\n"
      "  y = linear(x, w)\n"
      "  z = matmul(y, x)\n"
      "}\n";
  EXPECT_EQ(verifyStructure(parse(text)), std::nullopt) << "shapes are not a structural matter";
  // With the defaults 'matmul' contracts [4, 5] with [4, 6]: shapes.hir.
  EXPECT_EQ(verifyText(text, 1, {{"N", 4}}), "");
}

// ---------------------------------------------------------------------------
// Teams: every rank is checked; rank and world feed the integers.

TEST(VerifierWorlds, DocExampleNeedsKToDivide) {
  const std::string text =
      "program row_parallel_linear(M = 256, K = 512, N = 128, S = 4) {\n"
      "  input  x : f32[M, K] shard(1)\n"
      "  input  w : f32[N, K] shard(1)\n"
      "  output y : f32[M, N]\n"
      "  y = allocate(f32[M, N])\n"
      "  for i in range(S) {\n"
      "    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
      "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
      "    linear(xi, w, out=yi)\n"
      "    c = allreduce(yi, op=sum)\n"
      "    wait(c)\n"
      "  }\n"
      "}\n";
  for (int64_t world : {1, 2, 4, 8}) EXPECT_EQ(verifyText(text, world), "") << world;
  EXPECT_EQ(verifyText(text, 3, {{"K", 510}}), "");
  // K=512 over 3 ranks and K=510 over 4: collectives.hir.
}

TEST(VerifierWorlds, EveryRankIsChecked) {
  const std::string text =
      "program p(M = 12) {\n"
      "  input x : f32[M]\n"
      "  v = shard_by_stream(x, axis=0, index=rank, chunks=3)\n"
      "}\n";
  for (int64_t world : {1, 2, 3}) EXPECT_EQ(verifyText(text, world), "") << world;
  // Rank 3 of 4 asks for chunk 3 of 3: shapes.hir.
}

TEST(VerifierWorlds, RankDependentShapes) {
  const std::string text =
      "program p(M = 4) {\n"
      "  output y : f32[M]\n"
      "  t = allocate(f32[rank + 1])\n"
      "  deallocate(t)\n"
      "  y = allocate(f32[M + rank])\n"
      "}\n";
  EXPECT_EQ(verifyText(text, 1), "");
  // Rank 1 of 2 defines [5]: outputs.hir.
}

TEST(VerifierWorlds, BroadcastRootFromTheLoopIndex) {
  const std::string wrapped =
      "program p(S = 8) {\n"
      "  input x : f32[4]\n"
      "  for i in range(S) {\n"
      "    broadcast(x, root=i % world)\n"
      "  }\n"
      "}\n";
  const std::string raw =
      "program p(S = 4) {\n"
      "  input x : f32[4]\n"
      "  for i in range(S) {\n"
      "    broadcast(x, root=i)\n"
      "  }\n"
      "}\n";
  for (int64_t world = 1; world <= 4; ++world) EXPECT_EQ(verifyText(wrapped, world), "") << world;
  EXPECT_EQ(verifyText(raw, 4), "");
  // The raw index over 3 ranks, and over 4 with S=5: collectives.hir.
}

TEST(VerifierWorlds, LargeWorlds) {
  // A world of 0 or -2 ranks is an error: bindings.hir.
  EXPECT_EQ(verifyText("program p() {\n}\n", 64), "");
}

// ---------------------------------------------------------------------------
// Params and `--set` overrides.

TEST(VerifierParams, OverridesChangeShapes) {
  const std::string text =
      "program p(M = 8, N = 3) {\n"
      "  input x : f32[M, N]\n"
      "  output y : f32[8, 3]\n"
      "  y = copy(x)\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"M", 8}}), "");
  // M=6, M=6 N=4 (outputs.hir), M=-1 (integers.hir) and an unknown Q (bindings.hir) are errors.
}

TEST(VerifierParams, OverridesChangeLoopCounts) {
  const std::string text =
      "program p(S = 3) {\n"
      "  t = allocate(f32[S])\n"
      "  for i in range(S) {\n"
      "    v = shard_by_stream(t, axis=0, index=i, chunks=3)\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 1, {{"S", 2}}), "");
  EXPECT_EQ(verifyText(text, 1, {{"S", 0}}), "");
  // S=4 asks for chunk 3 of 3: shapes.hir.
}

TEST(VerifierParams, BindParams) {
  Program p = parse("program p(M = 8, N = 3) {\n}\n");
  auto values = bindParams(p, Bindings{{{"N", 5}}, 1});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::map<std::string, int64_t>{{"M", 8}, {"N", 5}}));
  auto defaults = bindParams(p, Bindings{});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(*defaults, (std::map<std::string, int64_t>{{"M", 8}, {"N", 3}}));
  auto unknown = bindParams(p, Bindings{{{"K", 5}}, 1});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "program 'p' has no parameter 'K' (its parameters: M, N)");
  auto none = bindParams(parse("program q() {\n}\n"), Bindings{{{"K", 5}}, 1});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "program 'q' has no parameter 'K' (its parameters: none)");
}

// ---------------------------------------------------------------------------
// Integer bindings: ceildiv, min, max.

TEST(VerifierIntegers, BindingsFeedShapes) {
  const std::string text =
      "program p(M = 10, S = 4) {\n"
      "  output y : f32[3, 4, 10]\n"
      "  n = ceildiv(M, S)\n"
      "  lo = min(M, S)\n"
      "  hi = max(M, S)\n"
      "  y = allocate(f32[n, lo, hi])\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  // M=13 and M=2 change the output's shape (outputs.hir); S=0 divides by zero (integers.hir).
}

TEST(VerifierIntegers, ChainedAndInLoops) {
  const std::string text =
      "program p(M = 10, S = 4) {\n"
      "  output y : f32[6]\n"
      "  n = ceildiv(M, S)\n"
      "  m = max(n, 1)\n"
      "  k = ceildiv(m * 2, 1)\n"
      "  y = allocate(f32[k])\n"
      "  for i in range(S) {\n"
      "    c = min(i, 2)\n"
      "    v = shard_by_stream(y, axis=0, index=c, chunks=n)\n"
      "    for j in range(c) {\n"
      "      d = max(j, c)\n"
      "      broadcast(v, root=d - c)\n"
      "    }\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  EXPECT_EQ(verifyText(text, 2), "");
  // M = 12 keeps k = 6.
  EXPECT_EQ(verifyText(text, 1, {{"M", 12}}), "");
  // M = 8 makes n = 2 chunks, but the index c still reaches 2 (shapes.hir); M = 4,
  // S = 2 keeps the indices in range and makes k = 4 (outputs.hir).
}

// ---------------------------------------------------------------------------
// Scopes.

TEST(VerifierScopes, SiblingLoopsReuseNames) {
  const std::string text =
      "program p() {\n"
      "  for i in range(2) {\n"
      "    t = allocate(f32[4])\n"
      "    e = record_event()\n"
      "  }\n"
      "  for i in range(3) {\n"
      "    t = allocate(f32[8])\n"
      "    e = record_event()\n"
      "    o = allocate(f32[8])\n"
      "    copy(t, out=o)\n"
      "    for j in range(2) {\n"
      "      u = copy(t)\n"
      "    }\n"
      "    for j in range(i) {\n"
      "      u = allocate(f32[i])\n"
      "      deallocate(u)\n"
      "    }\n"
      "    deallocate(t)\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(verifyStructure(parse(text)), std::nullopt);
  for (int64_t world = 1; world <= 4; ++world) EXPECT_EQ(verifyText(text, world), "") << world;
}

TEST(VerifierScopes, EachIterationHasItsOwnTensors) {
  // Deallocating iteration 0's t leaves iteration 1's t alive.
  const std::string text =
      "program p() {\n"
      "  for i in range(3) {\n"
      "    t = allocate(f32[4])\n"
      "    u = copy(t)\n"
      "    deallocate(t)\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
}

TEST(VerifierScopes, LoopRangeMayUseOuterIndex) {
  const std::string text =
      "program p() {\n"
      "  for i in range(1, 4) {\n"
      "    for j in range(i, 2 * i) {\n"
      "      t = allocate(f32[j - i])\n"
      "    }\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(verifyText(text), "");
  // A later loop's range cannot use an earlier loop's index: scopes.hir, with
  // shadowing and the names a loop leaves behind.
}

// ---------------------------------------------------------------------------
// Limits for programs built in C++: they bypass the parser, so the structure
// check refuses what the parser would (depth, size, nesting, rank, operands).

// The verifier's message, or "" when the program verifies.
std::string messageOf(const Program& p, int64_t world = 1, std::map<std::string, int64_t> params = {}) {
  Status status = verifyProgram(p, Bindings{std::move(params), world});
  return status ? status->message : "";
}

// 1 + 0 + 0 + ... with `levels` operators, left- or right-leaning: value 1.
Expr chainOfLevels(int levels, bool rightLeaning) {
  Expr e = Expr(1);
  for (int k = 0; k < levels; ++k) e = rightLeaning ? Expr(0) + e : e + Expr(0);
  return e;
}

// A program with `e` (whose value is 1) in one place where expressions stand.
struct BuiltPosition {
  std::string name;
  std::function<void(ProgramBuilder&, Expr)> build;
};

std::vector<BuiltPosition> builtPositions() {
  return {
      {"input_dim",
       [](ProgramBuilder& b, Expr e) {
         b.input("x", DType::F32, {4, e});
       }},
      {"output_dim",
       [](ProgramBuilder& b, Expr e) {
         b.output("y", DType::F32, {e});
         b.allocate(DType::F32, {1}, "y");
       }},
      {"allocate_dim",
       [](ProgramBuilder& b, Expr e) {
         b.allocate(DType::F32, {e, 2});
       }},
      {"loop_end", [](ProgramBuilder& b, Expr e) { b.forLoop("i", e, [](Expr) {}); }},
      {"loop_start", [](ProgramBuilder& b, Expr e) { b.forLoop("i", e, 3, [](Expr) {}); }},
      {"nested_loop_end",
       [](ProgramBuilder& b, Expr e) { b.forLoop("i", 2, [&](Expr) { b.forLoop("j", e, [](Expr) {}); }); }},
      {"shard_index",
       [](ProgramBuilder& b, Expr e) {
         Value x = b.input("x", DType::F32, {4});
         b.shardByStream(x, 0, e, 2);
       }},
      {"broadcast_root",
       [](ProgramBuilder& b, Expr e) {
         Value x = b.input("x", DType::F32, {4});
         b.broadcast(x, e);
       }},
      {"stream_number", [](ProgramBuilder& b, Expr e) { b.setCurrentStream(StreamRef::worker(e)); }},
      {"synchronize", [](ProgramBuilder& b, Expr e) { b.synchronize(StreamRef::worker(e)); }},
      {"int_value", [](ProgramBuilder& b, Expr e) { b.intValue(e); }},
  };
}

Program buildWith(const BuiltPosition& position, Expr e) {
  ProgramBuilder b("p");
  position.build(b, std::move(e));
  return b.build();
}

TEST(VerifierLimits, DeepExpressionsBuiltInCppAreErrorsEverywhere) {
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    // At the limit: verifies, and prints to text the parser accepts.
    Program atLimit = buildWith(position, chainOfLevels(kMaxExprLevels, true));
    EXPECT_EQ(messageOf(atLimit, 2), "");
    auto reparsed = parseProgram(printProgram(atLimit));
    ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
    EXPECT_EQ(*reparsed, atLimit);
    // 200,000 levels either way: an error from the structure check, no stack overflow.
    for (bool right : {false, true}) {
      Program deep = buildWith(position, chainOfLevels(200'000, right));
      Status structure = verifyStructure(deep);
      ASSERT_TRUE(structure.has_value());
      EXPECT_EQ(
          structure->message,
          "expression nested too deeply: 200000 levels of operators and calls; an expression may have at most 256");
      EXPECT_EQ(messageOf(deep, 2), structure->message);
    }
    Program overLimit = buildWith(position, chainOfLevels(kMaxExprLevels + 1, false));
    EXPECT_EQ(messageOf(overLimit, 2),
              "expression nested too deeply: 257 levels of operators and calls; an expression may have at most 256");
  }
}

TEST(VerifierLimits, SharedSubtreesBuiltInCppAreRefusedQuickly) {
  // `e = e + e` 64 times: a small object that stands for 2^65 nodes.
  Expr e = Expr(1);
  for (int k = 0; k < 64; ++k) e = e + e;
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(messageOf(buildWith(position, e)),
              "expression too large: more than 1048576 terms; an expression may have at most 1048576");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  }
}

TEST(VerifierLimits, MalformedExpressionsBuiltInCppAreErrors) {
  for (const BuiltPosition& position : builtPositions()) {
    SCOPED_TRACE(position.name);
    EXPECT_EQ(messageOf(buildWith(position, Expr() + Expr(1))),
              "malformed expression: an operator or call without its two operands");
    EXPECT_EQ(messageOf(buildWith(position, Expr::call(IntFunction::Min, {Expr(1)}))),
              "malformed expression: an operator or call without its two operands");
  }
  ProgramBuilder b("p");
  b.allocate(DType::F32, {Expr()});
  EXPECT_EQ(messageOf(b.build()), "missing integer expression");
}

// `depth` nested loops around one statement, built without recursion.
Program loopNest(int depth) {
  Operation event(OpKind::RecordEvent);
  event.results.push_back(NameDef{"e", {}});
  std::vector<Statement> body{Statement(event)};
  for (int k = depth; k-- > 0;) {
    ForLoop loop;
    loop.index = NameDef{"j" + std::to_string(k), {}};
    loop.end = Expr(1);
    loop.body = std::move(body);
    body = {Statement(std::move(loop))};
  }
  Program p;
  p.name = "p";
  p.body = std::move(body);
  return p;
}

TEST(VerifierLimits, LoopNestsBuiltInCppAreLimited) {
  EXPECT_EQ(messageOf(loopNest(kMaxLoopNesting)), "");
  EXPECT_EQ(messageOf(loopNest(kMaxLoopNesting + 1)),
            "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  EXPECT_EQ(messageOf(loopNest(1000)), "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  // The printed nest at the limit parses back; one more loop does not.
  auto reparsed = parseProgram(printProgram(loopNest(kMaxLoopNesting)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
  EXPECT_EQ(*reparsed, loopNest(kMaxLoopNesting));
  auto over = parseProgram(printProgram(loopNest(kMaxLoopNesting + 1)));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'");
  EXPECT_EQ(over.error().loc, (SourceLoc{66, 131}));
}

// Loops and with blocks count together towards the nesting limit; with
// blocks alone too.
TEST(VerifierLimits, WithBlocksCountTowardsTheNestingLimit) {
  auto nest = [](int loops, int withs) {
    Program p = loopNest(loops);
    std::vector<Statement> body = std::move(p.body);
    for (int k = 0; k < withs; ++k) {
      WithBlock with;
      with.stream = Arg::stream(Expr(k));
      with.body = std::move(body);
      body = {Statement(std::move(with))};
    }
    p.body = std::move(body);
    return p;
  };
  const std::string tooDeep = "blocks nested too deeply: more than 64 levels of 'for', 'with' and 'if'";
  EXPECT_EQ(messageOf(nest(32, 32)), "");
  EXPECT_EQ(messageOf(nest(32, 33)), tooDeep);
  EXPECT_EQ(messageOf(nest(0, 65)), tooDeep);
  auto reparsed = parseProgram(printProgram(nest(32, 32)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
  EXPECT_EQ(*reparsed, nest(32, 32));
  auto over = parseProgram(printProgram(nest(0, 65)));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, tooDeep);
}

// What the parser refuses in text, the structure check refuses in a with
// block built in C++: a stream that is not a stream, a tensor as the stream.
TEST(Verifier, WithBlocksBuiltInCppNeedAStream) {
  auto withStream = [](Arg stream) {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {Expr(4)});
    Program p = b.build();
    WithBlock with;
    with.stream = std::move(stream);
    p.body.push_back(Statement(std::move(with)));
    (void)x;
    return p;
  };
  EXPECT_EQ(messageOf(withStream(Arg::boolean(true))), "the stream of 'with' must be a captured stream or stream(e)");
  EXPECT_EQ(messageOf(withStream(Arg::integer(Expr(1)))),
            "the stream of 'with' must be a captured stream or stream(e)");
  EXPECT_EQ(messageOf(withStream(Arg::name("x"))), "'x' is a tensor, but the stream of 'with' must be a stream");
  EXPECT_EQ(messageOf(withStream(Arg::stream(Expr(2)))), "");
}

TEST(VerifierLimits, TensorRankAndShardAxisBuiltInCpp) {
  std::vector<Expr> eight(8, Expr(1)), nine(9, Expr(1));
  {
    ProgramBuilder b("p");
    b.input("x", DType::F32, eight, 7);
    b.allocate(DType::F64, eight);
    EXPECT_EQ(messageOf(b.build()), "");
  }
  {
    ProgramBuilder b("p");
    b.input("x", DType::F32, nine);
    EXPECT_EQ(messageOf(b.build()), "this tensor type has 9 dimensions; tensors have at most 8");
  }
  {
    ProgramBuilder b("p");
    b.allocate(DType::BF16, nine);
    EXPECT_EQ(messageOf(b.build()), "this tensor type has 9 dimensions; tensors have at most 8");
  }
  for (int64_t axis : {2, -1, 100}) {
    ProgramBuilder b("p");
    b.input("x", DType::F32, {4, 4}, axis);
    EXPECT_EQ(messageOf(b.build(), 2), fmt::format("shard axis {} is out of range for a tensor of rank 2", axis));
  }
}

TEST(VerifierLimits, HandBuiltOperationsMeetTheirSignatures) {
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Allocate);
    op.results.push_back(NameDef{"t", {}});
    b.append(op);  // no type
    EXPECT_EQ(messageOf(b.build()), "'allocate' is missing its operand 'type'");
  }
  {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {4, 4});
    Operation op(OpKind::Linear);
    op.operand("x") = Arg::integer(Expr(3));
    op.operand("w") = x.arg();
    op.results.push_back(NameDef{"y", {}});
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "operand 'x' of 'linear' must be a tensor");
  }
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Wait);
    op.kind = OpKind::Linear;  // one operand slot for a signature of four
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "malformed 'linear': 1 operand slots for a signature of 4");
  }
  {
    ProgramBuilder b("p");
    Operation op(OpKind::Allocate);
    op.operand("type") = Arg::ofType(TensorType{DType::F32, {4}, {}});
    b.append(op);  // no result
    EXPECT_EQ(messageOf(b.build()), "'allocate' defines 0 names here, which its signature does not allow");
  }
  {
    ProgramBuilder b("p");
    Value x = b.input("x", DType::F32, {4});
    Operation op(OpKind::Allreduce);
    op.operand("t") = x.arg();
    op.operand("op") = Arg::name("median");
    b.append(op);
    EXPECT_EQ(messageOf(b.build()), "operand 'op' of 'allreduce' must be one of sum, prod, min, max, avg");
  }
}

// ---------------------------------------------------------------------------
// Byte sizes: element count x dtype size must fit in int64.

TEST(VerifierSizes, EveryDtypeAtItsLargestExtent) {
  const std::string text =
      "program p(E = 1) {\n"
      "  input x : DT[E] shard(0)\n"
      "  t = allocate(DT[E])\n"
      "  v = shard_by_stream(t, axis=0, index=1, chunks=2)\n"
      "}\n";
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    std::string source = text;
    for (size_t at; (at = source.find("DT")) != std::string::npos;) source.replace(at, 2, dtypeName(dtype));
    SCOPED_TRACE(source);
    const int64_t largest = INT64_MAX / static_cast<int64_t>(dtypeSize(dtype));
    EXPECT_EQ(verifyText(source, 1, {{"E", largest}}), "");
    EXPECT_EQ(verifyText(source, 2, {{"E", largest - largest % 2}}), "");  // sharded over two ranks
    EXPECT_EQ(verifyText(source, 1, {{"E", largest + 1}}),
              error("2:13", fmt::format("{}[{}] needs more than 8 EiB; a tensor's byte size must fit in 63 bits",
                                        dtypeName(dtype), largest + 1)));
    // The same for an allocation alone.
    std::string allocation = "program p(E = 1) {\n  t = allocate(" + std::string(dtypeName(dtype)) + "[2, E])\n}\n";
    EXPECT_EQ(verifyText(allocation, 1, {{"E", largest / 2}}), "");
    EXPECT_EQ(verifyText(allocation, 1, {{"E", largest / 2 + 1}}),
              error("2:16", fmt::format("{}[2, {}] needs more than 8 EiB; a tensor's byte size must fit in 63 bits",
                                        dtypeName(dtype), largest / 2 + 1)));
  }
}

TEST(VerifierSizes, DerivedResultShapes) {
  // linear and matmul build [M, N] from [M, 1] and [1, N]: with M = 2^31 each
  // operand is 8 GiB, the result 2^64 bytes (byte_sizes.hir).
  // copy and add keep their operand's shape: the largest operand gives the largest result.
  const std::string same =
      "program p(M = 4) {\n  input a : f16[M]\n  input b : f16[M]\n  c = copy(a)\n  d = add(a, b)\n}\n";
  EXPECT_EQ(verifyText(same, 1, {{"M", 1}}), "");
  EXPECT_EQ(verifyText(same, 1, {{"M", INT64_MAX / 2}}), "");
  // The smallest shapes at which linear and matmul overflow, and the largest at which they do not.
  const std::string gemm =
      "program p(M = 4, N = 4) {\n  input a : f64[M, 1]\n  input b : f64[1, N]\n  c = matmul(a, b)\n}\n";
  EXPECT_EQ(verifyText(gemm, 1, {{"M", int64_t{1} << 30}, {"N", (int64_t{1} << 30) - 1}}), "");
  // N = 2^30 is one too many: byte_sizes.hir.
}

TEST(VerifierSizes, GatheredShapes) {
  // Every rank's 4 EiB gathered over two ranks is 8 EiB, one byte too many: byte_sizes.hir.
  EXPECT_EQ(verifyText("program p() {\n  input x : f32[4]\n  o = allocate(f32[8])\n  h = allgather(x, out=o)\n}\n", 2),
            "");
}

TEST(VerifierLimits, HugeExpressionsInLongLoopsAreRefusedQuickly) {
  // 10,000 terms in each of a million iterations: 10^10 evaluations. Refused
  // at the loop before unrolling it.
  std::string group = "(0";
  for (int k = 1; k < 100; ++k) group += " + 0";
  group += ")";
  std::string sum = group;
  for (int k = 1; k < 100; ++k) sum += " + " + group;
  const std::string text = "program p() {\n  for i in range(1000000) {\n    n = max(" + sum + ", i)\n  }\n}\n";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(verifyText(text),
            error("2:3",
                  "the program evaluates more than 100000000 expression terms with these parameters; too large "
                  "to verify"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // A thousand iterations are fine.
  std::string small = text;
  small.replace(small.find("1000000"), 7, "1000");
  EXPECT_EQ(verifyText(small), "");
}

}  // namespace
