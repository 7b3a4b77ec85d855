// The price of the kernels that are neither GEMMs nor copies: costOf's
// flops and bytes of each against hand counts (attention's causal pairs
// against a loop over every pair), computeCost's seconds against the
// profile's curves and rates or the assumption it states without them,
// and the contention class of each cost rule (only GEMMs are GEMMs).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <deque>
#include <vector>

#include "model/cost_model.h"

namespace hostir {
namespace {

// A tensor operand's shape and element size, held for TensorExtent's span.
struct Shape {
  std::vector<int64_t> dims;
  size_t elementBytes = 4;
  TensorExtent extent() const { return TensorExtent{dims, elementBytes}; }
  double numel() const {
    double n = 1;
    for (int64_t d : dims) n *= static_cast<double>(d);
    return n;
  }
  double bytes() const { return numel() * static_cast<double>(elementBytes); }
};

struct Call {
  std::array<TensorExtent, kMaxOperands> tensors{};
  std::array<double, kMaxOperands> scalars{};
  Call& tensor(size_t index, const Shape& shape) {
    tensors[index] = shape.extent();
    return *this;
  }
  Call& scalar(size_t index, double value) {
    scalars[index] = value;
    return *this;
  }
  OpCost cost(OpKind kind) const { return costOf(kind, tensors, scalars); }
};

TEST(KernelCosts, ElementwiseFlopsPerElementAndBytesOfEveryOperand) {
  Shape x{{8, 16}}, row{{16}};
  struct Case {
    OpKind kind;
    double flopsPerElement;
  };
  // Binary: a [8, 16], b broadcast from [16], out [8, 16].
  for (Case c : {Case{OpKind::Add, 1}, Case{OpKind::Sub, 1}, Case{OpKind::Mul, 1}}) {
    OpCost cost =
        Call().tensor(operands::Add::a, x).tensor(operands::Add::b, row).tensor(operands::Add::out, x).cost(c.kind);
    EXPECT_EQ(cost.flops, c.flopsPerElement * 128) << signatureOf(c.kind).name;
    EXPECT_EQ(cost.bytes, (128 + 16 + 128) * 4) << signatureOf(c.kind).name;
  }
  // relu 1, silu x/(1+e^-x) 4, gelu x·Φ(x) with erf 5 flops per element; x read, out written.
  for (Case c : {Case{OpKind::Relu, 1}, Case{OpKind::Silu, 4}, Case{OpKind::Gelu, 5}}) {
    OpCost cost = Call().tensor(operands::Unary::x, x).tensor(operands::Unary::out, x).cost(c.kind);
    EXPECT_EQ(cost.flops, c.flopsPerElement * 128) << signatureOf(c.kind).name;
    EXPECT_EQ(cost.bytes, 2 * 128 * 4) << signatureOf(c.kind).name;
  }
  OpCost scaled = Call()
                      .tensor(operands::Scale::x, x)
                      .scalar(operands::Scale::by, 0.5)
                      .tensor(operands::Scale::out, x)
                      .cost(OpKind::Scale);
  EXPECT_EQ(scaled.flops, 128);
  EXPECT_EQ(scaled.bytes, 2 * 128 * 4);
}

TEST(KernelCosts, RowReductionsCountTheirElementsWork) {
  Shape x{{8, 16}, 2}, w{{16}, 2};
  using N = operands::RmsNorm;
  OpCost norm = Call().tensor(N::x, x).tensor(N::w, w).tensor(N::out, x).cost(OpKind::RmsNorm);
  EXPECT_EQ(norm.flops, 4 * 128);  // x², the sum, · 1/rms, · w
  EXPECT_EQ(norm.bytes, (128 + 16 + 128) * 2);
  OpCost softmax = Call().tensor(operands::Unary::x, x).tensor(operands::Unary::out, x).cost(OpKind::Softmax);
  EXPECT_EQ(softmax.flops, 5 * 128);  // max, subtract, exp, sum, scale
  EXPECT_EQ(softmax.bytes, 2 * 128 * 2);
}

// Every (query, key) pair attention computes, by brute force over the pairs.
double pairsByLoop(int64_t tq, int64_t tk, bool causal, int64_t qOffset, int64_t kOffset) {
  double pairs = 0;
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j) pairs += !causal || kOffset + j <= qOffset + i;
  return pairs;
}

OpCost attention(int64_t tq, int64_t tk, int64_t heads, int64_t d, bool causal, int64_t qOffset = 0,
                 int64_t kOffset = 0, bool lse = false) {
  using A = operands::Attention;
  // q and out [Tq, H·D]; k and v [Tk, G·D] with G = H / 2 (grouped-query attention).
  static Shape q, kv, out, l;
  q = Shape{{tq, heads * d}};
  kv = Shape{{tk, heads / 2 * d}};
  out = q;
  l = Shape{{tq, heads}};
  Call call;
  call.tensor(A::q, q).tensor(A::k, kv).tensor(A::v, kv).tensor(A::out, out);
  if (lse) call.tensor(A::lse, l);
  call.scalar(A::heads, static_cast<double>(heads)).scalar(A::kv_heads, static_cast<double>(heads / 2));
  call.scalar(A::causal, causal ? 1 : 0).scalar(A::q_offset, static_cast<double>(qOffset));
  call.scalar(A::k_offset, static_cast<double>(kOffset));
  return call.cost(OpKind::Attention);
}

TEST(KernelCosts, AttentionIsFourFlopsPerPairAndHeadDimension) {
  // 4 · Tq · Tk · D per head: QKᵀ and PV, 2 · D each per pair.
  OpCost full = attention(32, 48, 4, 8, false);
  EXPECT_EQ(full.flops, 4.0 * 32 * 48 * (4 * 8));
  // q, k, v, out once each; the lse too when asked for.
  EXPECT_EQ(full.bytes, (32 * 32 + 48 * 16 * 2 + 32 * 32) * 4);
  EXPECT_EQ(attention(32, 48, 4, 8, false, 0, 0, true).bytes, full.bytes + 32 * 4 * 4);
}

TEST(KernelCosts, CausalAttentionCountsTheVisiblePairs) {
  // Square and causal: T(T+1)/2 pairs, about half of T².
  const int64_t t = 64;
  OpCost causal = attention(t, t, 2, 16, true);
  EXPECT_EQ(causal.flops, 4.0 * (t * (t + 1) / 2) * 32);
  EXPECT_NEAR(causal.flops / attention(t, t, 2, 16, false).flops, 0.5, 1.0 / t);
  // Ring attention's blocks (offsets): a block wholly before the queries is
  // full, one wholly after them empty, and every mix counts its pairs.
  struct Case {
    int64_t tq, tk, qOffset, kOffset;
  };
  for (Case c : {Case{16, 16, 0, 0}, Case{16, 16, 16, 0}, Case{16, 16, 0, 16}, Case{16, 24, 8, 0}, Case{24, 16, 0, 5},
                 Case{7, 30, 20, 3}, Case{30, 7, 2, 9}, Case{1, 100, 57, 0}, Case{5, 5, 0, 100}})
    EXPECT_EQ(attention(c.tq, c.tk, 2, 4, true, c.qOffset, c.kOffset).flops,
              4.0 * pairsByLoop(c.tq, c.tk, true, c.qOffset, c.kOffset) * 8)
        << c.tq << "x" << c.tk << " at " << c.qOffset << ", " << c.kOffset;
}

TEST(KernelCosts, MergeAttentionReadsAndWritesItsRunningResult) {
  using M = operands::MergeAttention;
  Shape o{{16, 64}}, lse{{16, 4}};
  OpCost cost = Call()
                    .tensor(M::o, o)
                    .tensor(M::lse, lse)
                    .tensor(M::part, o)
                    .tensor(M::part_lse, lse)
                    .cost(OpKind::MergeAttention);
  // Per element of o: two weighted parts added (3); per element of lse: max,
  // two differences, two exps, sum, log, add, two weights (10).
  EXPECT_EQ(cost.flops, 3.0 * 16 * 64 + 10.0 * 16 * 4);
  // o and lse read and written, part and part_lse read.
  EXPECT_EQ(cost.bytes, (2 * (1024 + 64) + 1024 + 64) * 4);
}

TEST(KernelCosts, GathersMoveOnlyTheRowsTheyName) {
  Shape table{{1000, 32}}, idx{{10}, 4}, rows{{10, 32}};
  using G = operands::GatherRows;
  OpCost gather = Call().tensor(G::x, table).tensor(G::idx, idx).tensor(G::out, rows).cost(OpKind::GatherRows);
  EXPECT_EQ(gather.flops, 0);
  EXPECT_EQ(gather.bytes, 10 * 4 + 2 * 10 * 32 * 4);  // idx, the rows read, the result written
  using S = operands::ScatterAddRows;
  Shape into{{1000, 32}, 2};
  OpCost scatter = Call().tensor(S::src, rows).tensor(S::idx, idx).tensor(S::out, into).cost(OpKind::ScatterAddRows);
  EXPECT_EQ(scatter.flops, 10 * 32);                                 // one add per element scattered
  EXPECT_EQ(scatter.bytes, 10 * 32 * 4 + 10 * 4 + 2 * 10 * 32 * 2);  // src, idx, out's rows read and written
}

TEST(KernelCosts, ACastReadsOneDtypeAndWritesAnother) {
  Shape x{{8, 8}, 4}, y{{8, 8}, 2};
  OpCost cost = Call().tensor(operands::Cast::x, x).tensor(operands::Cast::out, y).cost(OpKind::Cast);
  EXPECT_EQ(cost.flops, 0);
  EXPECT_EQ(cost.bytes, 64 * 4 + 64 * 2);
}

TEST(KernelCosts, GemmsAndAttentionAreTheGemmClass) {
  // Attention is compute-bound and fills the SMs as a GEMM does;
  // merge_attention only combines partial results, elementwise.
  for (const OpSignature& sig : allSignatures()) {
    const WorkClass c = workClassOf(sig.cost);
    const bool gemmLike = sig.kind == OpKind::Linear || sig.kind == OpKind::Matmul || sig.kind == OpKind::Attention;
    EXPECT_EQ(c == WorkClass::Gemm, gemmLike) << sig.name;
  }
  EXPECT_EQ(workClassOf(signatureOf(OpKind::MergeAttention).cost), WorkClass::Elementwise);
  EXPECT_EQ(workClassOf(CostRule::Elementwise), WorkClass::Elementwise);
  EXPECT_EQ(workClassOf(CostRule::RowReduction), WorkClass::Elementwise);
  EXPECT_EQ(workClassOf(CostRule::Attention), WorkClass::Gemm);
  EXPECT_EQ(workClassOf(CostRule::Gather), WorkClass::Memory);
  EXPECT_EQ(workClassOf(CostRule::Copy), WorkClass::Memory);  // cast
  EXPECT_EQ(workClassOf(CostRule::Collective), WorkClass::Communication);
}

// Memory at 100 GB/s; f32 GEMMs at 10 TFLOP/s; no kernel figures.
MachineProfile bareProfile() {
  MachineProfile p;
  p.name = "bare";
  p.memory = MemoryCurve{{1024, 1 << 30}, {100, 100}};
  p.gemm[DType::F32] = GemmGrid{{64, 4096}, {64, 4096}, {64}, {10, 10, 10, 10}};
  return p;
}

ComputeCost priced(const MachineProfile& p, OpKind kind, const Call& call, DType dtype = DType::F32) {
  auto cost = computeCost(p, kind, dtype, call.tensors, call.scalars);
  EXPECT_TRUE(cost.ok()) << (cost.ok() ? "" : cost.error());
  return cost.ok() ? *cost : ComputeCost{};
}

TEST(KernelCosts, ElementwiseAndRowKernelsRunAtTheirMeasuredBandwidth) {
  MachineProfile p = bareProfile();
  Shape x{{1024, 1024}}, w{{1024}};
  Call mul = Call().tensor(operands::Mul::a, x).tensor(operands::Mul::b, x).tensor(operands::Mul::out, x);
  using N = operands::RmsNorm;
  Call norm = Call().tensor(N::x, x).tensor(N::w, w).tensor(N::out, x);
  const double mulBytes = 3 * x.bytes(), normBytes = 2 * x.bytes() + w.bytes();
  // Without figures: the copy bandwidth, and the assumption said.
  ComputeCost assumed = priced(p, OpKind::Mul, mul);
  EXPECT_NEAR(assumed.seconds, mulBytes / 100e9, 1e-12 * assumed.seconds);
  EXPECT_EQ(assumed.workClass, WorkClass::Elementwise);
  ASSERT_TRUE(assumed.assumed);
  EXPECT_EQ(assumed.assumed->kind, PricingAssumption::Kind::ElementwiseAtCopyBandwidth);
  ASSERT_TRUE(priced(p, OpKind::RmsNorm, norm).assumed);
  EXPECT_EQ(priced(p, OpKind::RmsNorm, norm).assumed->kind, PricingAssumption::Kind::RowReductionAtCopyBandwidth);
  // With them: 40 to 60 GB/s for elementwise, 25 for rows, the rate geometric in log2(bytes) between points.
  p.kernels.elementwise = MemoryCurve{{1 << 20, 1 << 24}, {40, 60}};
  p.kernels.rowReduction = MemoryCurve{{1 << 20}, {25}};
  ComputeCost measured = priced(p, OpKind::Mul, mul);
  const double gbps = 40 * std::pow(1.5, (std::log2(mulBytes) - 20) / 4);
  EXPECT_NEAR(measured.seconds, mulBytes / (gbps * 1e9), 1e-15);
  EXPECT_FALSE(measured.assumed);
  EXPECT_NEAR(priced(p, OpKind::RmsNorm, norm).seconds, normBytes / 25e9, 1e-15);
  EXPECT_FALSE(priced(p, OpKind::RmsNorm, norm).assumed);
  EXPECT_EQ(priced(p, OpKind::RmsNorm, norm).workClass, WorkClass::Elementwise);
}

Call attentionCall(int64_t t, int64_t heads, int64_t d, bool causal) {
  using A = operands::Attention;
  static std::deque<Shape> keep;  // the calls' extents point into it: it never moves them
  keep.push_back(Shape{{t, heads * d}});
  const Shape& qkv = keep.back();
  return Call()
      .tensor(A::q, qkv)
      .tensor(A::k, qkv)
      .tensor(A::v, qkv)
      .tensor(A::out, qkv)
      .scalar(A::heads, static_cast<double>(heads))
      .scalar(A::causal, causal ? 1 : 0);
}

TEST(KernelCosts, AttentionRunsAtItsMeasuredRateOrItsDtypesGemmRate) {
  MachineProfile p = bareProfile();
  const int64_t t = 2048, heads = 8, d = 128;
  const double flops = 4.0 * t * t * heads * d;
  // No attention rates: the f32 GEMM rate (10 TFLOP/s), stated, in the GEMM class.
  ComputeCost assumed = priced(p, OpKind::Attention, attentionCall(t, heads, d, false));
  EXPECT_NEAR(assumed.seconds, flops / 10e12, 1e-12);
  EXPECT_EQ(assumed.workClass, WorkClass::Gemm);
  ASSERT_TRUE(assumed.assumed);
  EXPECT_EQ(assumed.assumed->kind, PricingAssumption::Kind::AttentionAtGemmRate);
  EXPECT_EQ(assumed.assumed->dtype, DType::F32);
  // Measured rates on t {512, 8192} x d {64, 128}: at t = 2048 (halfway in
  // log2) and d = 128, the geometric mean of 2 and 4 TFLOP/s.
  p.kernels.attention[DType::F32] = AttentionGrid{{512, 8192}, {64, 128}, {1, 2, 3, 4}, {}};
  ComputeCost measured = priced(p, OpKind::Attention, attentionCall(t, heads, d, false));
  EXPECT_NEAR(measured.seconds, flops / (std::sqrt(8.0) * 1e12), 1e-12);
  EXPECT_FALSE(measured.assumed);
  EXPECT_EQ(measured.workClass, WorkClass::Gemm);
  // Causal: the pairs T(T+1)/2, at the rate of an unmasked block of as many
  // pairs, t = sqrt(pairs), (log2 t - 9) / 4 of the way from 2 to 4 in log2.
  const double pairs = t * (t + 1) / 2.0;
  const double causalRate = 2 * std::pow(2.0, (std::log2(std::sqrt(pairs)) - 9) / 4);
  ComputeCost causal = priced(p, OpKind::Attention, attentionCall(t, heads, d, true));
  EXPECT_NEAR(causal.seconds, 4.0 * pairs * heads * d / (causalRate * 1e12), 1e-12);
  // Never faster than its bytes at the memory bandwidth: one query row against 8192 keys.
  using A = operands::Attention;
  Shape q{{1, heads * d}}, kv{{8192, heads * d}};
  Call decode = Call().tensor(A::q, q).tensor(A::k, kv).tensor(A::v, kv).tensor(A::out, q).scalar(A::heads, heads);
  EXPECT_DOUBLE_EQ(priced(p, OpKind::Attention, decode).seconds, (2 * q.bytes() + 2 * kv.bytes()) / 100e9);
  // Neither attention nor GEMM rates for the dtype: an error that says so.
  auto none = computeCost(p, OpKind::Attention, DType::BF16, attentionCall(t, heads, d, false).tensors,
                          attentionCall(t, heads, d, false).scalars);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error(), "the profile 'bare' has no bf16 attention or GEMM rates");
}

TEST(KernelCosts, KernelsThatOnlyMoveElementsAreMemoryWorkAtTheCopyBandwidth) {
  MachineProfile p = bareProfile();
  p.kernels.elementwise = MemoryCurve{{1024}, {1}};  // not theirs: they move elements like a copy
  Shape x{{256, 64}, 4}, y{{256, 64}, 2};
  ComputeCost cast = priced(p, OpKind::Cast, Call().tensor(operands::Cast::x, x).tensor(operands::Cast::out, y));
  EXPECT_EQ(cast.workClass, WorkClass::Memory);
  EXPECT_NEAR(cast.seconds, (x.bytes() + y.bytes()) / 100e9, 1e-12 * cast.seconds);
  EXPECT_FALSE(cast.assumed);
  Shape idx{{16}, 4}, rows{{16, 64}, 4};
  using G = operands::GatherRows;
  ComputeCost gather = priced(p, OpKind::GatherRows, Call().tensor(G::x, x).tensor(G::idx, idx).tensor(G::out, rows));
  EXPECT_EQ(gather.workClass, WorkClass::Memory);
  EXPECT_DOUBLE_EQ(gather.seconds, (idx.bytes() + 2 * rows.bytes()) / 100e9);
}

TEST(KernelCosts, GemmsStayGemmsAndABatchedMatmulRunsOncePerEntry) {
  MachineProfile p = bareProfile();
  p.memory = MemoryCurve{{1024}, {1e6}};  // the roofline far away
  using M = operands::Matmul;
  Shape a{{4, 256, 128}}, b{{4, 128, 512}}, out{{4, 256, 512}};
  ComputeCost batched = priced(p, OpKind::Matmul, Call().tensor(M::a, a).tensor(M::b, b).tensor(M::out, out));
  EXPECT_EQ(batched.workClass, WorkClass::Gemm);
  EXPECT_NEAR(batched.seconds, 4 * 2.0 * 256 * 512 * 128 / 10e12, 1e-15);
  EXPECT_EQ(batched.counted.flops, 4 * 2.0 * 256 * 512 * 128);
}

TEST(KernelCosts, AssumptionsSayWhatWasAssumedAndWhy) {
  EXPECT_EQ(describeAssumption({PricingAssumption::Kind::AttentionAtGemmRate, DType::BF16}, "h100-nvlink"),
            "attention (bf16) at the bf16 GEMM rate of (Tq, Tk, head dim): the profile "
            "'h100-nvlink' measured no bf16 attention rate");
  EXPECT_EQ(describeAssumption({PricingAssumption::Kind::ElementwiseAtCopyBandwidth, DType::F32}, "p.json"),
            "elementwise kernels (add, mul, silu, ...) at the copy bandwidth: the profile 'p.json' measured no "
            "elementwise bandwidth");
}

}  // namespace
}  // namespace hostir
