// A larger operation of a kind is never priced faster than a smaller one
// on the same profile and team: every operation of the op table, on every
// shipped profile (as read and at either edge of its spreads), at teams of
// 1, 2, 4 and 8, priced at sizes from one element to far past every grid in
// steps of 10%. Then the cases that found it, as `hostir simulate` predicts
// them, and the rule that makes a profile's measured times non-decreasing.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "hostir/catalog.h"
#include "hostir/hostir.h"
#include "ir/collectives.h"
#include "model/cost_model.h"
#include "model/machine_profile.h"
#include "model/point_times.h"
#include "test_util.h"

namespace hostir {
namespace {

constexpr DType kFloatingTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

// 1, then each size at least 10% above the one before, up to `largest`.
std::vector<int64_t> sizesUpTo(int64_t largest) {
  std::vector<int64_t> sizes{1};
  while (sizes.back() < largest)
    sizes.push_back(
        std::max(sizes.back() + 1, static_cast<int64_t>(std::ceil(static_cast<double>(sizes.back()) * 1.1))));
  return sizes;
}

// A profile to sweep, named for the messages.
struct Named {
  std::string name;
  MachineProfile profile;
};

// Every shipped profile as read, and at the fast and slow edges of its spreads.
const std::vector<Named>& sweptProfiles() {
  static const std::vector<Named> profiles = [] {
    std::vector<Named> out;
    for (const std::string& name : api::machineProfiles()) {
      Result<MachineProfile> profile = loadMachineProfile(name);
      EXPECT_TRUE(profile.ok()) << name;
      if (!profile.ok()) continue;
      out.push_back({name, *profile});
      out.push_back({name + " (fast edge)", atSpreadEdge(*profile, SpreadEdge::Fast)});
      out.push_back({name + " (slow edge)", atSpreadEdge(*profile, SpreadEdge::Slow)});
    }
    return out;
  }();
  return profiles;
}

// Where a sweep's price fell: one line per fall, the first few kept.
class Falls {
 public:
  // Prices `seconds(size)` over `sizes`; a size the profile cannot price
  // (no rates for the dtype) must be so from the first size on.
  void sweep(const std::string& what, const std::vector<int64_t>& sizes,
             const std::function<Result<double, std::string>(int64_t)>& seconds) {
    Result<double, std::string> first = seconds(sizes.front());
    if (!first.ok()) return;
    double before = *first;
    for (size_t i = 1; i < sizes.size(); ++i) {
      Result<double, std::string> now = seconds(sizes[i]);
      if (!now.ok()) {
        note(what + " at " + std::to_string(sizes[i]) + ": " + now.error());
        return;
      }
      if (*now < before)
        note(what + ": " + std::to_string(sizes[i - 1]) + " -> " + std::to_string(sizes[i]) + " takes " +
             std::to_string(before * 1e6) + " -> " + std::to_string(*now * 1e6) + " us");
      before = *now;
    }
    ++sweeps_;
  }
  size_t count() const { return count_; }
  size_t sweeps() const { return sweeps_; }
  const std::string& shown() const { return shown_; }

 private:
  void note(const std::string& line) {
    if (++count_ <= 20) shown_ += line + "\n";
  }
  size_t count_ = 0, sweeps_ = 0;
  std::string shown_;
};

// One call's operands: a shape per tensor slot (absent: no shape) and its scalars.
struct Operands {
  std::array<std::vector<int64_t>, kMaxOperands> dims;
  std::array<size_t, kMaxOperands> elementBytes{};
  std::array<double, kMaxOperands> scalars{};

  void tensor(size_t slot, std::vector<int64_t> shape, size_t bytes) {
    dims.at(slot) = std::move(shape);
    elementBytes.at(slot) = bytes;
  }
  Result<double, std::string> seconds(const MachineProfile& profile, OpKind kind, DType dtype) const {
    std::array<TensorExtent, kMaxOperands> tensors{};
    for (size_t i = 0; i < kMaxOperands; ++i) tensors[i] = TensorExtent{dims[i], elementBytes[i]};
    Result<ComputeCost, std::string> cost = computeCost(profile, kind, dtype, tensors, scalars);
    if (!cost.ok()) return cost.error();
    return cost->seconds;
  }
};

// A GEMM of (m, n, k) as `kind`'s operands: linear's x [m, k] · w [n, k]ᵀ or matmul's a [m, k] · b [k, n].
Operands gemmOperands(OpKind kind, int64_t m, int64_t n, int64_t k, size_t bytes) {
  Operands o;
  if (signatureOf(kind).cost == CostRule::Linear) {
    o.tensor(operands::Linear::x, {m, k}, bytes);
    o.tensor(operands::Linear::w, {n, k}, bytes);
    o.tensor(operands::Linear::out, {m, n}, bytes);
  } else {
    o.tensor(operands::Matmul::a, {m, k}, bytes);
    o.tensor(operands::Matmul::b, {k, n}, bytes);
    o.tensor(operands::Matmul::out, {m, n}, bytes);
  }
  return o;
}

// Attention of t queries and keys, 8 heads of dim d over 2 key/value heads.
Operands attentionOperands(int64_t t, int64_t d, bool causal, size_t bytes) {
  using A = operands::Attention;
  constexpr int64_t kHeads = 8, kKvHeads = 2;
  Operands o;
  o.tensor(A::q, {t, kHeads * d}, bytes);
  o.tensor(A::k, {t, kKvHeads * d}, bytes);
  o.tensor(A::v, {t, kKvHeads * d}, bytes);
  o.tensor(A::out, {t, kHeads * d}, bytes);
  o.tensor(A::lse, {t, kHeads}, 4);
  o.scalars[A::heads] = kHeads;
  o.scalars[A::kv_heads] = kKvHeads;
  o.scalars[A::causal] = causal ? 1 : 0;
  return o;
}

// Every tensor operand of `kind` as [rows, 64]: a kernel priced by its bytes grows with them.
Operands rowsOperands(OpKind kind, int64_t rows, size_t bytes) {
  Operands o;
  const OpSignature& sig = signatureOf(kind);
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].kind == OperandKind::Tensor) o.tensor(i, {rows, 64}, bytes);
  return o;
}

std::string label(const Named& p, OpKind kind, DType dtype, const std::string& axis) {
  return p.name + ": " + std::string(signatureOf(kind).name) + " " + std::string(dtypeName(dtype)) + " over " + axis;
}

void sweepGemm(Falls& falls, const Named& p, OpKind kind, DType dtype) {
  const size_t bytes = dtypeSize(dtype);
  const std::vector<int64_t> sizes = sizesUpTo(int64_t{1} << 18);
  for (int64_t other : {1, 512, 8192}) {
    auto price = [&](int64_t m, int64_t n, int64_t k) {
      return gemmOperands(kind, m, n, k, bytes).seconds(p.profile, kind, dtype);
    };
    const std::string at = " at " + std::to_string(other);
    falls.sweep(label(p, kind, dtype, "m" + at), sizes, [&](int64_t s) { return price(s, other, other); });
    falls.sweep(label(p, kind, dtype, "n" + at), sizes, [&](int64_t s) { return price(other, s, other); });
    falls.sweep(label(p, kind, dtype, "k" + at), sizes, [&](int64_t s) { return price(other, other, s); });
  }
}

void sweepAttention(Falls& falls, const Named& p, OpKind kind, DType dtype) {
  const size_t bytes = dtypeSize(dtype);
  for (bool causal : {false, true}) {
    const std::string mask = causal ? " causal" : "";
    for (int64_t d : {64, 128})
      falls.sweep(label(p, kind, dtype, "T at D " + std::to_string(d) + mask), sizesUpTo(int64_t{1} << 18),
                  [&](int64_t t) { return attentionOperands(t, d, causal, bytes).seconds(p.profile, kind, dtype); });
    for (int64_t t : {16, 1024})
      falls.sweep(label(p, kind, dtype, "D at T " + std::to_string(t) + mask), sizesUpTo(4096),
                  [&](int64_t d) { return attentionOperands(t, d, causal, bytes).seconds(p.profile, kind, dtype); });
  }
}

void sweepCommunication(Falls& falls, const Named& p, OpKind kind) {
  for (int64_t ranks : {1, 2, 4, 8})
    falls.sweep(
        p.name + ": " + std::string(signatureOf(kind).name) + " over bytes on " + std::to_string(ranks) + " ranks",
        sizesUpTo(int64_t{1} << 36),
        [&](int64_t bytes) { return communicationSeconds(p.profile, kind, bytes, ranks); });
}

void sweepKind(Falls& falls, const Named& p, OpKind kind) {
  const CostRule rule = signatureOf(kind).cost;
  if (rule == CostRule::Collective) return sweepCommunication(falls, p, kind);
  for (DType dtype : kFloatingTypes) {
    switch (rule) {
      case CostRule::Linear:
      case CostRule::Matmul: sweepGemm(falls, p, kind, dtype); break;
      case CostRule::Attention: sweepAttention(falls, p, kind, dtype); break;
      case CostRule::None:
      case CostRule::Elementwise:
      case CostRule::RowReduction:
      case CostRule::Gather:
      case CostRule::Copy:
      case CostRule::Fill:
      case CostRule::Collective:
        falls.sweep(label(p, kind, dtype, "rows"), sizesUpTo(int64_t{1} << 30), [&](int64_t rows) {
          return rowsOperands(kind, rows, dtypeSize(dtype)).seconds(p.profile, kind, dtype);
        });
        break;
    }
  }
}

TEST(MonotoneModel, EveryOperationOfTheOpTableCostsNoLessWhenLarger) {
  Falls falls;
  for (const Named& p : sweptProfiles())
    for (const OpSignature& sig : allSignatures()) sweepKind(falls, p, sig.kind);
  EXPECT_EQ(falls.count(), 0u) << falls.shown();
  EXPECT_GT(falls.sweeps(), 1000u);  // the profiles priced what they have rates for
}

// The shipped profiles have no strided figures; a calibrated CPU's have.
TEST(MonotoneModel, CopiesCostNoLessWhenLargerAtEveryRowLength) {
  std::vector<Named> profiles = sweptProfiles();
  Named strided{"strided", profiles.front().profile};
  strided.profile.memory.stridedRunBytes = {8, 64, 4096};
  strided.profile.memory.stridedSlowdown = {6, 3, 1.5};
  profiles.push_back(strided);
  Falls falls;
  for (const Named& p : profiles)
    for (int64_t run : {0, 4, 16, 64, 1000, 4096, 65536})
      falls.sweep(p.name + ": copy in rows of " + std::to_string(run) + " bytes", sizesUpTo(int64_t{1} << 36),
                  [&](int64_t bytes) -> Result<double, std::string> { return copySeconds(p.profile, bytes, run); });
  EXPECT_EQ(falls.count(), 0u) << falls.shown();
}

// A sweep the profile cannot price passes without a price: every shipped
// profile prices every collective at teams of 2, 4 and 8.
TEST(MonotoneModel, TheSweepsPriceEveryCollectiveOfEveryShippedProfile) {
  for (const Named& p : sweptProfiles())
    for (const CollectiveInfo& c : allCollectives())
      for (int64_t ranks : {2, 4, 8})
        EXPECT_TRUE(communicationSeconds(p.profile, c.op, 1 << 20, ranks).ok()) << p.name << " " << c.name;
}

// --- The rule that makes a profile's measured times non-decreasing ---

// Measured times that fall with size, as noise leaves them: a 4 KiB copy
// slower than a 64 KiB one, a launch-bound 64³ GEMM slower than a 256 x 64
// x 64 one, a 4 KiB allgather slower than the 16 KiB one.
constexpr const char* kNoisyProfile = R"({
  "format": "hostir-machine-profile", "version": 2, "name": "noisy",
  "rank": {"admission": "concurrent", "compute_units": 1, "gemm_units": 0, "elementwise_units": 0, "communication_units": 1},
  "gemm": {"f32": {"m": [64, 256], "n": [64], "k": [64], "tflops": [0.001, 0.1]}},
  "memory": {"bytes": [4096, 65536, 1048576], "gbps": [0.5, 10, 50]},
  "communication": [
    {"kind": "allgather", "ranks": 2, "algorithm": "flat", "latency_us": 40, "busbw_gbps": 10,
     "bytes": [1024, 4096, 16384, 65536], "us": [46, 63, 40.5, 80]}
  ],
  "overheads_us": {"issue": 1, "launch": 1, "sync": 1, "wakeup": 1}
})";

TEST(MonotoneModel, AMeasuredTimeAboveALargerOnesIsReadAsTheLargerOnes) {
  Result<MachineProfile> read = parseMachineProfile(kNoisyProfile, "noisy.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const MachineProfile& p = *read;
  // 4 KiB at 0.5 GB/s took 8.2 us, 64 KiB at 10 GB/s 6.6 us: the 4 KiB copy takes 6.6 us.
  EXPECT_NEAR(curvePointSeconds(p.memory, 0), 65536 / 10e9, 1e-18);
  EXPECT_LE(curvePointSeconds(p.memory, 0), curvePointSeconds(p.memory, 1));
  EXPECT_EQ(p.memory.gbps[1], 10);
  EXPECT_EQ(p.memory.gbps[2], 50);
  // The 64³ GEMM (0.52 ms) takes the 256 x 64 x 64 one's 21 us.
  const GemmGrid& gemm = p.gemm.at(DType::F32);
  EXPECT_NEAR(gemmPointSeconds(gemm, 0, 0, 0), 2.0 * 256 * 64 * 64 / 0.1e12, 1e-18);
  EXPECT_LE(gemmPointSeconds(gemm, 0, 0, 0), gemmPointSeconds(gemm, 1, 0, 0));
  // 46 and 63 us above 40.5 us at 16 KiB: both take 40.5.
  EXPECT_EQ(p.communication.at(0).measuredMicros, (std::vector<double>{40.5, 40.5, 40.5, 80}));
  // What it reads back is what it wrote: the rule holds of its own result.
  Result<MachineProfile> again = parseMachineProfile(machineProfileJson(p), "again.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->memory.gbps, p.memory.gbps);
  EXPECT_EQ(again->gemm.at(DType::F32).tflops, gemm.tflops);
}

TEST(MonotoneModel, TimesThatAlreadyGrowAreLeftAsMeasured) {
  MachineProfile p;
  p.gemm[DType::BF16] = GemmGrid{{64, 256}, {128}, {32, 128}, {10, 20, 30, 40}, {}};
  p.memory.bytes = {1024, 65536, 1 << 20};
  p.memory.gbps = {1, 30, 100};
  p.kernels.attention[DType::BF16] = AttentionGrid{{512, 4096}, {64, 128}, {100, 150, 300, 400}, {}};
  CommunicationCost allreduce;
  allreduce.measuredBytes = {1024, 4096};
  allreduce.measuredMicros = {12, 12};
  p.communication = {allreduce};
  MachineProfile fixed = p;
  makeTimesNonDecreasing(fixed);
  EXPECT_EQ(fixed.gemm.at(DType::BF16).tflops, p.gemm.at(DType::BF16).tflops);
  EXPECT_EQ(fixed.memory.gbps, p.memory.gbps);
  EXPECT_EQ(fixed.kernels.attention.at(DType::BF16).tflops, p.kernels.attention.at(DType::BF16).tflops);
  EXPECT_EQ(fixed.communication.at(0).measuredMicros, p.communication.at(0).measuredMicros);
}

// --- The cases that found it, as `hostir simulate` predicts them ---

double predictedMs(const api::Program& program, const std::string& machine, api::Params params, int64_t ranks) {
  api::SimulateOptions options;
  options.params = std::move(params);
  options.ranks = ranks;
  return api::simulate(program, machine, options).medianMs;
}

const api::Program& geluProgram() {
  static const api::Program program = api::Program::fromText(R"(program gelu_of(N = 8192) {
  input  x : f32[N]
  output y : f32[N]
  y = gelu(x)
}
)");
  return program;
}

// Was predicted at 0.0086 ms against 0.0091 ms for 8,192 elements.
TEST(MonotoneModel, GeluOver12288ElementsIsNoFasterThanOver8192OnH100Nvlink) {
  EXPECT_GE(predictedMs(geluProgram(), "h100-nvlink", {{"N", 12288}}, 1),
            predictedMs(geluProgram(), "h100-nvlink", {{"N", 8192}}, 1));
}

// The same kernel in bf16: was predicted 5.5% faster over 24,576 elements than over 16,384.
TEST(MonotoneModel, Bf16GeluOver24576ElementsIsNoFasterThanOver16384OnH100Nvlink) {
  static const api::Program program = api::Program::fromText(R"(program gelu_of(N = 16384) {
  input  x : bf16[N]
  output y : bf16[N]
  y = gelu(x)
}
)");
  EXPECT_GE(predictedMs(program, "h100-nvlink", {{"N", 24576}}, 1),
            predictedMs(program, "h100-nvlink", {{"N", 16384}}, 1));
}

// bf16 attention, 8 heads of 64, causal or not: was predicted 5.5% faster at T = 32 than at 16.
TEST(MonotoneModel, AttentionAtT32IsNoFasterThanAtT16OnH100Nvlink) {
  for (const char* causal : {"false", "true"}) {
    const api::Program program = api::Program::fromText(std::string(R"(program att(T = 16, H = 8, D = 64) {
  input  q : bf16[T, H * D]
  input  k : bf16[T, H * D]
  input  v : bf16[T, H * D]
  output o : bf16[T, H * D]
  o = attention(q, k, v, heads=H, causal=)") + causal + ")\n}\n");
    EXPECT_GE(predictedMs(program, "h100-nvlink", {{"T", 32}}, 1), predictedMs(program, "h100-nvlink", {{"T", 16}}, 1))
        << "causal=" << causal;
  }
}

// At two ranks: ring attention's blocks of T / 2 rows, the sendrecvs and
// attention between them; was predicted 26% faster at T = 1024 than at 512.
TEST(MonotoneModel, RingAttentionAtTwoRanksIsNoFasterAtT1024ThanAt512OnH200Shared) {
  static const api::Program program =
      api::Program::fromFile(std::string(HOSTIR_SOURCE_DIR) + "/examples/layers/ring_attention.hir");
  EXPECT_GE(predictedMs(program, "h200-shared", {{"T", 1024}}, 2),
            predictedMs(program, "h200-shared", {{"T", 512}}, 2));
}

// An all_to_all of T rows of 2 KiB per rank and destination: 4 KiB at T = 1,
// 16 KiB at T = 4, where h200-shared measured 4 KiB slower than 16 KiB.
TEST(MonotoneModel, AllToAllIsNoFasterAtT4ThanAtT1OnH200Shared) {
  static const api::Program program =
      api::Program::fromText(testing::testProgramText("model/programs/all_to_all_dispatch.hir"));
  EXPECT_GE(predictedMs(program, "h200-shared", {{"T", 4}}, 2), predictedMs(program, "h200-shared", {{"T", 1}}, 2));
}

}  // namespace
}  // namespace hostir
