// Every operation of the language (docs/hostir-language.md, section 3) in
// small programs, for every dtype and team sizes 1 to 4, each output
// compared with a naive f64 reference computed from the global inputs the
// run saw: seeded ones, or tensors the test builds and hands over through
// RunRequest.inputs. Also the --input/--output path of `hostir run`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "analysis/program_check.h"
#include "api/npy.h"
#include "harness.h"
#include "op_programs.h"
#include "test_util.h"

namespace hostir {
// gtest prints the dtype parameter by name.
inline void PrintTo(DType dtype, std::ostream* os) { *os << dtypeName(dtype); }
}  // namespace hostir

namespace hostir::reftest {
namespace {

using ::testing::HasSubstr;

// ---- the check ------------------------------------------------------------------

struct Check {
  std::string text;  // with $T for the dtype
  DType dtype = DType::F32;
  Params overrides;
  std::set<int64_t> worlds = {1, 2, 3, 4};  // the team sizes whose shapes divide
  bool alsoAssignStreams = true;
  std::vector<int64_t> streams = {1, 4};
  uint32_t delayMicros = 0;
  int repeat = 1;
  uint64_t seed = 5;
  // Explicit global inputs (by name) for a team size; the others are seeded.
  std::function<std::map<std::string, HostTensor>(const Params&, int64_t world)> explicitInputs;
  std::set<std::string> exact;  // outputs that must equal the reference exactly
  std::function<Outputs(const Inputs&, const Params&, int64_t world)> expect;
  bool serialReference = false;  // run as `--check`'s serial reference: one stream, f64-accumulating GEMMs
};

// Runs the program for every team size, variant and pool size; returns the number of runs.
int runCheck(const Check& c) {
  Program original = parseOrThrow(withDType(c.text, c.dtype));
  std::vector<std::pair<std::string, Program>> variants = {{"original", original}};
  if (c.alsoAssignStreams) {
    Program assigned = assignStreams(original);
    if (!(assigned == original)) variants.emplace_back("assign-streams", std::move(assigned));
  }
  Params params = bindAll(original, c.overrides);
  int runs = 0;
  std::set<int64_t> ran;
  for (int64_t world = 1; world <= 4; ++world) {
    Status invalid = verifyFor(original, c.overrides, world);
    if (!c.worlds.count(world)) {
      EXPECT_TRUE(invalid.has_value()) << original.name << " should not verify for world " << world;
      continue;
    }
    if (invalid) {
      ADD_FAILURE() << original.name << " world " << world << ": " << invalid->message;
      continue;
    }
    std::map<std::string, HostTensor> given = c.explicitInputs ? c.explicitInputs(params, world) : decltype(given){};
    auto inputs = globalInputs(original, params, world, c.seed, given);
    Outputs expected = c.expect(toRef(inputs), params, world);
    auto specs = outputSpecs(original, params, world);
    EXPECT_EQ(specs.size(), expected.size()) << "the reference must cover every output";
    for (const auto& [label, program] : variants) {
      for (int64_t streams : c.streams) {
        RunRequest request = makeRequest(program, params, c.seed, streams);
        request.inputs = given;
        request.repeat = c.repeat;
        request.backend.cpu.delays = {c.delayMicros, static_cast<uint64_t>(world * 10 + streams)};
        request.backend.cpu.reference = c.serialReference;
        std::string what =
            fmt::format("{} {} world={} {} streams={}", original.name, dtypeName(c.dtype), world, label, streams);
        auto result = runWithin(request, world);
        if (!result) {
          ADD_FAILURE() << what << ": did not finish within 60 s";
          continue;
        }
        if (!result->ok()) {
          ADD_FAILURE() << what << ": " << result->error().message;
          continue;
        }
        ++runs;
        for (const TensorSpec& spec : specs) {
          auto want = expected.find(spec.name);
          auto got = (*result)->outputs.find(spec.name);
          if (want == expected.end() || got == (*result)->outputs.end()) {
            ADD_FAILURE() << what << ": output " << spec.name << " missing";
            continue;
          }
          Match m = compare(spec.name, got->second, spec.dtype, want->second);
          EXPECT_TRUE(m.ok) << what << ": " << m.message;
          if (c.exact.count(spec.name)) {
            EXPECT_EQ(m.worstRatio, 0.0) << what << ": " << spec.name << " must be exact; " << m.message;
          }
        }
      }
    }
    ran.insert(world);
  }
  EXPECT_EQ(ran, c.worlds);
  return runs;
}

class Ops : public ::testing::TestWithParam<DType> {};

std::string dtypeLabel(const ::testing::TestParamInfo<DType>& info) { return std::string(dtypeName(info.param)); }

// ---- allocate, deallocate ---------------------------------------------------------

TEST_P(Ops, AllocateZeroAndDeallocate) {
  Check c;
  c.text = opProgram("alloc_zero").text;
  c.dtype = GetParam();
  c.repeat = 3;  // buffers of earlier runs come back; zero=true must still zero them
  c.delayMicros = 50;
  c.expect = opProgram("alloc_zero").expect;
  c.exact = {"y", "z", "v"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// ---- shard_by_stream ---------------------------------------------------------------

TEST_P(Ops, ShardByStreamOnAxes0And1And3d) {
  // S = 3: chunks 4,4,2 of 10 rows and 3,3,1 of 7 columns; S = 4 and 6 leave
  // short and empty chunks; S = 1 is the whole tensor.
  for (int64_t S : {3, 4, 6, 1}) {
    Check c;
    c.text = opProgram("views").text;
    c.dtype = GetParam();
    c.overrides = {{"S", S}};
    c.expect = opProgram("views").expect;
    c.exact = {"y", "v"};
    EXPECT_EQ(runCheck(c), 4 * 2 * 2) << "S=" << S;
  }
}

// ---- linear, matmul, copy, add ---------------------------------------------------------

TEST_P(Ops, LinearMatmulCopyAdd) {
  Check c;
  c.text = opProgram("gemms").text;
  c.dtype = GetParam();
  c.expect = opProgram("gemms").expect;
  c.exact = {"y5"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

TEST_P(Ops, LinearMatmulCopyAddOnExplicitInputs) {
  Check c;
  c.text = opProgram("gemms").text;
  c.dtype = GetParam();
  c.explicitInputs = [dtype = GetParam()](const Params& p, int64_t) {
    int64_t M = p.at("M"), K = p.at("K"), N = p.at("N"), B = p.at("B");
    return std::map<std::string, HostTensor>{{"x", integers(dtype, {M, K}, 1)},     {"w", integers(dtype, {N, K}, 2)},
                                             {"b", integers(dtype, {N}, 3)},        {"v", integers(dtype, {K, N}, 4)},
                                             {"x3", integers(dtype, {B, M, K}, 5)}, {"q", integers(dtype, {K}, 6)}};
  };
  c.expect = opProgram("gemms").expect;
  // Sums of products of small integers (|y4| <= 180) are exact in every dtype.
  c.exact = {"y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9", "y10", "y11", "y12", "y13"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// ---- allreduce ---------------------------------------------------------------------

TEST_P(Ops, AllreduceEveryOp) {
  Check c;
  c.text = opProgram("allreduce_ops").text;
  c.dtype = GetParam();
  c.delayMicros = 100;
  c.expect = opProgram("allreduce_ops").expect;
  c.exact = {"a_min", "a_max", "b_min", "b_max", "sin", "sout"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

TEST_P(Ops, AllreduceEveryOpOnExplicitIntegers) {
  Check c;
  c.text = opProgram("allreduce_ops").text;
  c.dtype = GetParam();
  c.explicitInputs = [dtype = GetParam()](const Params& p, int64_t) {
    return std::map<std::string, HostTensor>{{"x", integers(dtype, {p.at("M"), p.at("N")}, 1)}};
  };
  c.expect = opProgram("allreduce_ops").expect;
  for (const auto& name :
       {"a_sum", "b_sum", "a_prod", "b_prod", "a_min", "b_min", "a_max", "b_max", "dflt", "sin", "sout"})
    c.exact.insert(name);
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// ---- allgather, reduce_scatter -------------------------------------------------------

TEST_P(Ops, AllgatherAndReduceScatterAlongEachAxis) {
  Check c;
  c.text = opProgram("gather_scatter").text;
  c.dtype = GetParam();
  c.delayMicros = 100;
  c.expect = opProgram("gather_scatter").expect;
  c.exact = {"g0", "g1", "gd", "gs", "g3", "rs", "r0_min", "r0_max", "r1_min", "r1_max"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

TEST_P(Ops, ReduceScatterOnExplicitIntegers) {
  Check c;
  c.text = opProgram("gather_scatter").text;
  c.dtype = GetParam();
  c.explicitInputs = [dtype = GetParam()](const Params& p, int64_t world) {
    int64_t M = p.at("M"), N = p.at("N");
    return std::map<std::string, HostTensor>{{"p", integers(dtype, {M * world, N}, 2)},
                                             {"q", integers(dtype, {M, N * world}, 3)}};
  };
  c.expect = opProgram("gather_scatter").expect;
  for (const char* name : {"g0", "g1", "gd", "gs", "g3", "rd", "rs"}) c.exact.insert(name);
  for (ReduceOp op : kOps)
    if (op != ReduceOp::Avg) {
      c.exact.insert("r0_" + opName(op));
      c.exact.insert("r1_" + opName(op));
    }
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// ---- broadcast ------------------------------------------------------------------------

TEST_P(Ops, BroadcastWithARootThatDependsOnTheLoopIndex) {
  Check c;
  c.text = opProgram("bcast").text;
  c.dtype = GetParam();
  c.delayMicros = 100;
  c.expect = opProgram("bcast").expect;
  c.exact = {"y", "z"};
  EXPECT_EQ(runCheck(c), 4 * 2 * 2);
}

// ---- sendrecv ------------------------------------------------------------------------

// Rings by 1 and by K, a copy to itself, in place, strided column views and
// blocks of a different size per rank; delays shuffle the ranks' timing.
TEST_P(Ops, SendRecvRingsSelfCopyStridedAndUnevenBlocks) {
  for (int64_t K : {2, 3}) {
    Check c;
    c.text = opProgram("sendrecv").text;
    c.dtype = GetParam();
    c.overrides = {{"K", K}};
    c.delayMicros = 100;
    c.expect = opProgram("sendrecv").expect;
    c.exact = opProgram("sendrecv").exact;
    EXPECT_EQ(runCheck(c), 4 * 2 * 2) << "K=" << K;
  }
}

// ---- streams, events, wait ----------------------------------------------------------------

TEST_P(Ops, StreamsEventsAndWait) {
  Check c;
  c.text = opProgram("streams_events").text;
  c.dtype = GetParam();
  c.alsoAssignStreams = false;  // the loop manages its streams itself
  c.streams = {1, 2, 4};
  c.delayMicros = 200;
  c.repeat = 2;  // the main stream is captured afresh on every run
  c.expect = opProgram("streams_events").expect;
  EXPECT_EQ(runCheck(c), 4 * 3);
}

// ---- integer statements ---------------------------------------------------------------------

TEST_P(Ops, IntegerStatementsCeildivMinMax) {
  for (int64_t S : {4, 3, 2, 6}) {
    Check c;
    c.text = opProgram("ints").text;
    c.dtype = GetParam();
    c.overrides = {{"S", S}};
    c.alsoAssignStreams = false;  // `a` accumulates across iterations
    c.expect = opProgram("ints").expect;
    c.exact = {"t", "y", "b"};
    EXPECT_EQ(runCheck(c), 4 * 2) << "S=" << S;
  }
}

// ---- edge cases: in-place collectives, outputs that are views, 3-d collectives ----------

TEST_P(Ops, InPlaceAllgatherAndReduceScatterOnRankViews) {
  Check c;
  c.text = opProgram("inplace_coll").text;
  c.dtype = GetParam();
  c.delayMicros = 100;
  c.expect = opProgram("inplace_coll").expect;
  c.exact = {"g", "gc"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// Outputs that are strided views (of a buffer written on a worker stream
// with no join: the end of the program waits for every stream, and of an input).
TEST_P(Ops, OutputsThatAreViews) {
  Check c;
  c.text = opProgram("view_out").text;
  c.dtype = GetParam();
  c.delayMicros = 200;
  c.expect = opProgram("view_out").expect;
  c.exact = {"y", "v"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

TEST_P(Ops, CollectivesOn3dTensors) {
  Check c;
  c.text = opProgram("coll3d").text;
  c.dtype = GetParam();
  c.expect = opProgram("coll3d").expect;
  c.exact = {"g", "r"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

// An output that shares elements with an input, as a partial overlap of
// strided views, the very same view, or a GEMM's operand: read-then-write
// on the run and in the serial reference alike, and `check` accepts it.
TEST_P(Ops, OutputsThatOverlapTheirInputsAreReadThenWritten) {
  Check c;
  c.text = opProgram("overlapping_operands").text;
  c.dtype = GetParam();
  c.expect = opProgram("overlapping_operands").expect;
  c.exact = opProgram("overlapping_operands").exact;
  c.delayMicros = 50;
  EXPECT_EQ(runCheck(c), 4 * 2);
  c.serialReference = true;
  c.streams = {1};
  EXPECT_EQ(runCheck(c), 4);
  Program program = parseOrThrow(withDType(c.text, c.dtype));
  for (int64_t world : {1, 3}) {
    ProgramCheck proof = checkProgram(program, bindAll(program, {}), world, 4);
    EXPECT_TRUE(proof.ok()) << formatProgramCheck(proof, "overlapping_operands.hir", c.text);
  }
}

// ---- all_to_all ----------------------------------------------------------------------

// Dispatch along axis 0, along an inner axis (packed and unpacked), a round
// trip in place and strided column views; delays shuffle the ranks' timing.
TEST_P(Ops, AllToAllAlongEachAxisInPlaceAndOnStridedViews) {
  Check c;
  c.text = opProgram("all_to_all").text;
  c.dtype = GetParam();
  c.delayMicros = 100;
  c.expect = opProgram("all_to_all").expect;
  c.exact = opProgram("all_to_all").exact;
  EXPECT_EQ(runCheck(c), 4 * 2 * 2);
}

// ---- the computations: elementwise, rows, attention, gather/scatter, matmul, cast ----------

// `name`'s program (op_programs.h) for the test's dtype, on every team size
// and pool size (and after assign-streams where it changes the program),
// then as `run --check`'s serial reference computes it (one stream, every
// operation in f64): both against the test's own f64 loops. Returns the runs.
int runComputation(const std::string& name, DType dtype, int64_t variants) {
  Check c;
  c.text = opProgram(name).text;
  c.dtype = dtype;
  c.expect = opProgram(name).expect;
  c.exact = opProgram(name).exact;
  c.delayMicros = 20;
  int runs = runCheck(c);
  EXPECT_EQ(runs, 4 * 2 * variants) << name;
  c.serialReference = true;
  c.streams = {1};
  c.delayMicros = 0;
  int serial = runCheck(c);
  EXPECT_EQ(serial, 4 * variants) << name << ", serial reference";
  return runs + serial;
}

// add, sub and mul with every form of broadcast b, relu, silu, gelu and
// scale, in place and on strided views.
TEST_P(Ops, ElementwiseWithBroadcasting) { runComputation("elementwise", GetParam(), 2); }

// exp, log, sqrt, rsqrt, sigmoid, tanh, sin, cos, abs and neg against f64 loops.
TEST_P(Ops, UnaryMathAsAnF64Loop) { runComputation("unary_math", GetParam(), 1); }

// div, maximum, minimum and the comparisons, b broadcast, against f64 loops.
TEST_P(Ops, BinaryMathAndComparisonsAsAnF64Loop) { runComputation("binary_math", GetParam(), 1); }

TEST_P(Ops, RmsNormAndSoftmaxOverTheLastAxis) { runComputation("rows", GetParam(), 1); }

// where, sum/mean/max along each axis, layer_norm, rope, fill, iota and
// reshape against f64 loops.
TEST_P(Ops, LayerOperationsAsAnF64Loop) { runComputation("layer_ops", GetParam(), 1); }

// layer_norm and rope on rows of 136 (no multiple of a vector), in place,
// strided, with one head and several, at offsets.
TEST_P(Ops, LayerNormAndRopeOnWideRows) { runComputation("wide_rows", GetParam(), 1); }

// bucket on seeded choices, with overflow dropped and on a view.
TEST_P(Ops, BucketListsEachBucketsPositionsInOrder) { runComputation("routing", GetParam(), 1); }

// Multi-head, grouped-query and multi-query attention, causal with offsets
// (rows that see no key), lse, and merge_attention of two halves of the keys.
TEST_P(Ops, AttentionHeadsCausalOffsetsLseAndMerge) { runComputation("attention", GetParam(), 1); }

// Longer than the CPU kernel's blocks of query and key rows.
TEST_P(Ops, AttentionAcrossBlocks) { runComputation("attention_blocks", GetParam(), 1); }

// Seeded indices (-1 and repeats among them), sharded by columns.
TEST_P(Ops, GatherRowsAndScatterAddRows) { runComputation("gather", GetParam(), 1); }

TEST_P(Ops, MatmulTransposedAndBatched) { runComputation("matmul_batched", GetParam(), 1); }

TEST_P(Ops, CastBetweenEveryPairOfFloatingTypes) { runComputation("cast", GetParam(), 1); }

// Outputs that share elements with an input: staged where the kernel could
// not read everything first, in place where it can; `check` accepts them.
TEST_P(Ops, ComputationsOnOverlappingOperandsReadThenWrite) {
  runComputation("overlapping_compute", GetParam(), 1);
  const std::string text = withDType(opProgram("overlapping_compute").text, GetParam());
  Program program = parseOrThrow(text);
  ProgramCheck proof = checkProgram(program, bindAll(program, {}), 2, 4);
  EXPECT_TRUE(proof.ok()) << formatProgramCheck(proof, "overlapping_compute.hir", text);
}

// Explicit indices: -1s, repeats, every row; integer values keep every sum exact.
TEST_P(Ops, GatherAndScatterOnExplicitIndices) {
  const DType dtype = GetParam();
  Check c;
  c.text = opProgram("gather").text;
  c.dtype = dtype;
  c.explicitInputs = [dtype](const Params& p, int64_t) {
    const int64_t R = p.at("R"), Q = p.at("Q"), D = p.at("D"), P = p.at("P");
    RefTensor idx({R, Q});
    for (int64_t i = 0; i < idx.numel(); ++i)
      idx.data[static_cast<size_t>(i)] = static_cast<double>((i * 5) % (R + 1) - 1);
    RefTensor rows({P});
    rows.data = {2, -1, 2, 0, static_cast<double>(R - 1)};
    return std::map<std::string, HostTensor>{{"x", integers(dtype, {R, D}, 1)},
                                             {"x3", integers(dtype, {R, 2, 3}, 2)},
                                             {"src", integers(dtype, {P, D}, 3)},
                                             {"idx", toHost(idx, DType::I32)},
                                             {"rows", toHost(rows, DType::I32)}};
  };
  c.expect = opProgram("gather").expect;
  c.exact = {"g", "g3", "wide", "s", "indices"};
  EXPECT_EQ(runCheck(c), 4 * 2);
}

INSTANTIATE_TEST_SUITE_P(EveryDType, Ops, ::testing::ValuesIn(kDTypes), dtypeLabel);

// ---- sendrecv to a rank outside the team ----------------------------------------------------
//
// The verifier refuses such a program; the executor runs what it is given,
// so it must stop it too: an error at the operand, on the rank that names
// the peer, and its partner released rather than left waiting.
TEST(SendRecvPeers, APeerOutsideTheTeamIsAnErrorAtItsOperandNotAHang) {
  const std::string text =
      "program p(N = 8) {\n"
      "  input  x : f32[N]\n"
      "  output y : f32[N]\n"
      "  y = allocate(f32[N])\n"
      "  sendrecv(x, out=y, to=rank + 1, from=(rank + world - 1) % world)\n"
      "}\n";
  Program program = parseOrThrow(text);
  ASSERT_TRUE(verifyFor(program, {}, 2).has_value());
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 1);
  auto result = runWithin(request, 2, std::chrono::seconds(30));
  ASSERT_TRUE(result.has_value()) << "the team did not stop within 30 s";
  ASSERT_FALSE(result->ok());
  EXPECT_THAT(result->error().message,
              HasSubstr("'sendrecv' sends to rank 2, which is not a rank of a team of 2 (on rank 1)"));
  EXPECT_EQ(result->error().loc, (SourceLoc{5, 30}));  // the `+` of `rank + 1`, as the verifier positions it
}

// ---- cast rounds once -------------------------------------------------------------------------
//
// f64 values next to the halfway points of f16 and bf16: rounded through f32
// first, 1 + 2^-11 + 2^-40 would become the tie 1 + 2^-11 and then 1 (even);
// rounded once it is 1 + 2^-10. Ties, subnormals, overflow, inf and NaN too.
TEST(CastRounding, FromF64ToHalfTypesRoundsOnceToNearestEven) {
  Check c;
  c.text = opProgram("cast").text;
  c.dtype = DType::F32;
  c.explicitInputs = [](const Params& p, int64_t) {
    const std::vector<double> tricky = {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),  // f16: up, not to the tie
                                        1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40),   // bf16: the same
                                        -(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
                                        1 + std::ldexp(1.0, -11),      // f16 tie: to even (1)
                                        1 + 3 * std::ldexp(1.0, -11),  // f16 tie: to even (up)
                                        1 + std::ldexp(1.0, -8),       // bf16 tie
                                        std::ldexp(1.0, -25),          // half the smallest f16 subnormal: 0
                                        3 * std::ldexp(1.0, -26),      // above it: the subnormal
                                        std::ldexp(1.0, -134) * 1.5,   // bf16 subnormal range
                                        65519.99,                      // f16: 65504
                                        65520.0,                       // f16: inf
                                        1e300,                         // f32, f16, bf16: inf
                                        -1e-300,                       // -0
                                        INFINITY,
                                        -INFINITY,
                                        std::nan("")};
    RefTensor wide({p.at("M"), p.at("N")});
    for (int64_t i = 0; i < wide.numel(); ++i)
      wide.data[static_cast<size_t>(i)] = i < static_cast<int64_t>(tricky.size())
                                              ? tricky[static_cast<size_t>(i)]
                                              : std::sin(static_cast<double>(i)) * std::pow(10.0, i % 7 - 3);
    return std::map<std::string, HostTensor>{{"wide", toHost(wide, DType::F64)}};
  };
  c.expect = opProgram("cast").expect;
  c.exact = opProgram("cast").exact;
  EXPECT_EQ(runCheck(c), 4 * 2);
  // The reference's rounding itself, on values worked out by hand.
  EXPECT_EQ(castTo(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), DType::F16), 1 + std::ldexp(1.0, -10));
  EXPECT_EQ(castTo(1 + std::ldexp(1.0, -11), DType::F16), 1.0);
  EXPECT_EQ(castTo(std::ldexp(1.0, -25), DType::F16), 0.0);
  EXPECT_EQ(castTo(65520.0, DType::F16), INFINITY);
  EXPECT_EQ(castTo(1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), DType::BF16), 1 + std::ldexp(1.0, -7));
}

// ---- NaN and inf propagate as IEEE says ---------------------------------------------------------

std::string specialValues() { return testing::testProgramText("executor/programs/special_values.hir"); }

// x holds NaN, inf and -inf in rows 1 to 3 (row 0 is finite); key row 2
// holds a NaN, which causal attention's rows 0 and 1 never see, and value
// row 3 an inf, which rows 0 to 2 never see.
TEST(SpecialValues, NanAndInfinityPropagateAsIeeeSays) {
  Check c;
  c.text = specialValues();
  c.explicitInputs = [](const Params& p, int64_t) {
    RefTensor x({p.at("M"), p.at("N")}), k({p.at("T"), p.at("H") * p.at("D")});
    for (int64_t i = 0; i < x.numel(); ++i) x.data[static_cast<size_t>(i)] = std::sin(0.7 * static_cast<double>(i));
    for (int64_t i = 0; i < k.numel(); ++i) k.data[static_cast<size_t>(i)] = std::cos(0.3 * static_cast<double>(i));
    x.at({1, 3}) = std::nan("");
    x.at({2, 0}) = INFINITY;
    x.at({3, 5}) = -INFINITY;
    k.at({2, 1}) = std::nan("");
    RefTensor v = k;
    v.at({2, 1}) = 0.5;
    v.at({3, 6}) = INFINITY;
    return std::map<std::string, HostTensor>{
        {"x", toHost(x, DType::F32)}, {"k", toHost(k, DType::F32)}, {"v", toHost(v, DType::F32)}};
  };
  c.expect = [](const Inputs& in, const Params& p, int64_t) {
    const RefTensor& x = in.at("x");
    AttentionResult a = attention(in.at("q"), in.at("k"), in.at("v"), {p.at("H"), p.at("H"), true, 0, 0});
    return Outputs{{"sum", broadcast(x, in.at("w"), [](double s, double t) { return s + t; })},
                   {"rectified", map(x, [](double e) { return e < 0 ? 0.0 : e; })},
                   {"swished", map(x, silu)},
                   {"gelus", map(x, gelu)},
                   {"larger", broadcast(x, in.at("w"),
                                        [](double s, double t) { return s != s || t != t ? s + t : std::max(s, t); })},
                   {"smaller", broadcast(x, in.at("w"),
                                         [](double s, double t) { return s != s || t != t ? s + t : std::min(s, t); })},
                   {"above", broadcast(x, in.at("w"), [](double s, double t) { return s > t ? 1.0 : 0.0; })},
                   {"differs", map(x, [](double e) { return e != e ? 1.0 : 0.0; })},
                   {"exps", map(x, [](double e) { return std::exp(e); })},
                   {"scaled", scaled(x, 2.0)},
                   {"probs", softmax(x)},
                   {"normed", rmsNorm(x, in.at("w"), kDefaultRmsNormEps)},
                   {"out", a.out},
                   {"lse", a.lse}};
  };
  EXPECT_EQ(runCheck(c), 4 * 2);
  c.serialReference = true;
  c.streams = {1};
  EXPECT_EQ(runCheck(c), 4);
}

// ---- an index out of range --------------------------------------------------------------------
//
// Rank 1's shard of idx holds 7 for a tensor of 4 rows: an error at the
// gather_rows statement, naming the index, the tensor and the rank, and
// every rank ends (rank 0, whose indices are fine, is released).
std::string outOfRange() { return testing::testProgramText("executor/programs/index_out_of_range.hir"); }

// The program run on 2 in-process ranks with `name` given as these i32
// values (the rest seeded), as run or as the serial reference; it must
// stop with an error within 30 s.
Result<RunResult> runWithIndices(const Program& program, const std::string& name, std::vector<double> values,
                                 bool serialReference) {
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 2);
  request.backend.cpu.reference = serialReference;
  RefTensor indices({static_cast<int64_t>(values.size())});
  indices.data = std::move(values);
  request.inputs[name] = toHost(indices, DType::I32);
  auto result = runWithin(request, 2, std::chrono::seconds(30));
  EXPECT_TRUE(result.has_value()) << "the team did not stop within 30 s";
  return result ? std::move(*result) : Result<RunResult>(Diagnostic{{}, "timed out"});
}

TEST(IndexErrors, AnIndexOutOfRangeIsAnErrorAtItsStatementAndEveryRankEnds) {
  Program program = parseOrThrow(outOfRange());
  for (bool serialReference : {false, true}) {
    // rank 1 holds 2, 7, 1
    Result<RunResult> result = runWithIndices(program, "idx", {0, -1, 3, 2, 7, 1}, serialReference);
    ASSERT_FALSE(result.ok());
    EXPECT_THAT(result.error().message, HasSubstr("index 7 of 'idx' is out of range for 'x' with 4 rows (on rank 1)"));
    EXPECT_EQ(result.error().loc, (SourceLoc{6, 7}));  // gather_rows
  }
  // scatter_add_rows checks its own indices (here a gather that is fine, then -2).
  const std::string scatterOnly = testing::testProgramText("executor/programs/scatter_index_out_of_range.hir");
  Program scatter = parseOrThrow(scatterOnly);
  RunRequest request = makeRequest(scatter, bindAll(scatter, {}), 1, 1);
  RefTensor idx({3});
  idx.data = {0, -2, 3};
  request.inputs["idx"] = toHost(idx, DType::I32);
  auto result = runWithin(request, 1, std::chrono::seconds(30));
  ASSERT_TRUE(result && !result->ok());
  EXPECT_THAT(result->error().message, HasSubstr("index -2 of 'idx' is out of range for 'z' with 4 rows"));
  EXPECT_EQ(result->error().loc, (SourceLoc{6, 3}));
}

// The error names the tensors as the program does, not by the operation's
// operands ('idx', 'x', 'out'): at 2 ranks on worker streams and in the
// serial reference, for gather_rows (a result or out=) and scatter_add_rows.
TEST(IndexErrors, TheErrorNamesTheProgramsTensors) {
  struct Case {
    std::string body;  // lines 5 and 6: the indexing statement is on line 6
    SourceLoc loc;
  };
  const std::vector<Case> cases = {
      {"  t = copy(table)\n  picked = gather_rows(t, routes)\n", {6, 12}},
      {"  picked = allocate(f32[N, 3])\n  gather_rows(table, routes, out=picked)\n", {6, 3}},
      {"  picked = allocate(f32[N, 3], zero=true)\n  scatter_add_rows(picked, routes, out=table)\n", {6, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    Program program = parseOrThrow(
        "program routed(R = 4, N = 6) {\n"
        "  input  table : f32[R, 3]\n"
        "  input  routes : i32[N] shard(0)\n"
        "  output picked : f32[N, 3] shard(0)\n" +
        c.body + "}\n");
    const std::string table = c.body.find("(t, ") != std::string::npos ? "t" : "table";
    for (bool serialReference : {false, true}) {
      // rank 1 holds 2, 9, 1
      Result<RunResult> result = runWithIndices(program, "routes", {0, -1, 3, 2, 9, 1}, serialReference);
      ASSERT_FALSE(result.ok());
      EXPECT_EQ(result.error().message,
                fmt::format("index 9 of 'routes' is out of range for '{}' with 4 rows (on rank 1)", table));
      EXPECT_EQ(result.error().loc, c.loc);
    }
  }
}

// ---- repeated runs restore the inputs ---------------------------------------------------------
//
// A program may write its inputs (here an in-place allreduce of x); every
// warmup and timed run must still start from the same inputs, or
// `hostir run --repeat 3 --check` would fail a correct program.
std::string writesItsInput() { return testing::testProgramText("executor/programs/writes_its_input.hir"); }

TEST(RepeatedRuns, EveryRunStartsFromTheSameInputs) {
  Program program = parseOrThrow(writesItsInput());
  Params params = bindAll(program, {});
  const int64_t world = 2;
  RefTensor x = toRef(globalInputs(program, params, world, 1).at("x"));
  RefTensor expected = scaled(x, static_cast<double>(world));
  for (auto [warmup, repeat] : {std::pair{0, 1}, std::pair{1, 1}, std::pair{0, 3}}) {
    RunRequest request = makeRequest(program, params, 1, 2);
    request.warmup = warmup;
    request.repeat = repeat;
    auto result = runWithin(request, world);
    ASSERT_TRUE(result && result->ok());
    Match m = compare("y", (*result)->outputs.at("y"), DType::F32, expected);
    EXPECT_TRUE(m.ok) << "warmup " << warmup << " repeat " << repeat << ": " << m.message;
  }
}

// ---- the reference helpers themselves ----------------------------------------------------------

TEST(Reference, NaiveHelpersOnHandComputedValues) {
  RefTensor a({2, 3});
  a.data = {1, 2, 3, 4, 5, 6};
  RefTensor b({3, 2});
  b.data = {1, 0, 0, 1, 1, 1};
  EXPECT_EQ(matmul(a, b).data, (std::vector<double>{4, 5, 10, 11}));
  RefTensor w({1, 3});
  w.data = {1, 1, 1};
  RefTensor bias({1});
  bias.data = {0.5};
  EXPECT_EQ(linear(a, w, &bias).data, (std::vector<double>{6.5, 15.5}));
  EXPECT_EQ(chunk(a, 1, 1, 2).data, (std::vector<double>{3, 6}));    // chunk size 2: column 2 only
  EXPECT_EQ(chunk(a, 0, 1, 3).shape, (std::vector<int64_t>{1, 3}));  // chunk size 1
  EXPECT_EQ(chunk(a, 0, 2, 3).shape, (std::vector<int64_t>{0, 3}));  // empty last chunk
  EXPECT_EQ(concat({a, a}, 1).shape, (std::vector<int64_t>{2, 6}));
  RefTensor c = a;
  c.data = {-1, 7, 0, 2, 2, 2};
  EXPECT_EQ(reduce({a, c}, ReduceOp::Min).data, (std::vector<double>{-1, 2, 0, 2, 2, 2}));
  EXPECT_EQ(reduce({a, c}, ReduceOp::Prod).data, (std::vector<double>{-1, 14, 0, 8, 10, 12}));
  EXPECT_EQ(reduce({a, c}, ReduceOp::Avg).data, (std::vector<double>{0, 4.5, 1.5, 3, 3.5, 4}));
  auto scattered = reduceScatter({a, c}, 0, ReduceOp::Sum);
  ASSERT_EQ(scattered.size(), 2u);
  EXPECT_EQ(scattered[1].data, (std::vector<double>{6, 7, 8}));
  // f16 and bf16 decoding: 1 + 2^-10 is exact in f16, rounds to 1 in bf16.
  EXPECT_EQ(roundTo(1.0 + std::ldexp(1.0, -10), DType::F16), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(roundTo(1.0 + std::ldexp(1.0, -10), DType::BF16), 1.0);
  EXPECT_EQ(roundTo(-65504.0, DType::F16), -65504.0);
  EXPECT_EQ(roundTo(std::ldexp(1.0, -24), DType::F16), std::ldexp(1.0, -24));  // smallest subnormal
}

// ---- `hostir run --check` on the computations ----------------------------------------------------
//
// The run (OpenBLAS, f32 fast paths, worker streams after assign-streams)
// against the serial reference (one stream, everything in f64) on two
// ranks, as a user runs it.
TEST(CliCheck, TheComputationsAgreeWithTheSerialReference) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostir_exec_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"elementwise", "unary_math", "binary_math", "rows", "layer_ops", "routing", "attention",
                           "gather", "matmul_batched", "cast"}) {
    for (DType dtype : {DType::F32, DType::BF16}) {
      fs::path program = dir / fmt::format("{}_{}.hir", name, dtypeName(dtype));
      {
        std::ofstream out(program);
        out << withDType(opProgram(name).text, dtype);
      }
      std::string command =
          fmt::format("{} run {} --ranks 2 --streams 2 --passes assign-streams --check >{} 2>&1 </dev/null",
                      HOSTIR_BINARY, program.string(), (dir / "log").string());
      int status = std::system(command.c_str());
      std::string log = readText((dir / "log").string());
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << log;
      EXPECT_THAT(log, HasSubstr("check: ok")) << command;
    }
  }
  fs::remove_all(dir);
}

// ---- the command line: --input and --output ------------------------------------------------------

TEST(CliInputOutput, GlobalNpyInGlobalNpyOut) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostir_exec_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int64_t M = 12, K = 8, N = 6;
  RefTensor x({M, K}), w({N, K});
  for (int64_t i = 0; i < x.numel(); ++i) x.data[static_cast<size_t>(i)] = std::sin(0.3 * static_cast<double>(i));
  for (int64_t i = 0; i < w.numel(); ++i) w.data[static_cast<size_t>(i)] = std::cos(0.7 * static_cast<double>(i));
  HostTensor xh = toHost(x, DType::F32), wh = toHost(w, DType::F32);
  ASSERT_FALSE(writeNpy((dir / "x.npy").string(), xh.dtype, xh.shape, xh.data.data()).has_value());
  ASSERT_FALSE(writeNpy((dir / "w.npy").string(), wh.dtype, wh.shape, wh.data.data()).has_value());
  RefTensor expected = linear(toRef(xh), toRef(wh));

  for (int ranks : {2, 4}) {
    fs::path out = dir / ("y" + std::to_string(ranks) + ".npy");
    std::string command = fmt::format(
        "{} run {} --ranks {} --streams 2 --passes assign-streams --set M={} --set K={} --set N={} --set S=3 "
        "--input x={} --input w={} --output y={} >{} 2>&1 </dev/null",
        HOSTIR_BINARY, examplePath("row_parallel_linear"), ranks, M, K, N, (dir / "x.npy").string(),
        (dir / "w.npy").string(), out.string(), (dir / "log").string());
    int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << readText((dir / "log").string());
    auto y = readNpy(out.string(), DType::F32);
    ASSERT_TRUE(y.ok()) << y.error().message;
    Match m = compare("y", *y, DType::F32, expected);
    EXPECT_TRUE(m.ok) << "--ranks " << ranks << ": " << m.message;
  }

  // A sharded output comes back global (all_gather's y is shard(1)), and an
  // input not given on the command line is seeded with --seed (--fill-missing).
  {
    RefTensor wg({N * 2, K});
    for (int64_t i = 0; i < wg.numel(); ++i) wg.data[static_cast<size_t>(i)] = std::sin(1.1 * static_cast<double>(i));
    HostTensor wgh = toHost(wg, DType::F32);
    ASSERT_FALSE(writeNpy((dir / "wg.npy").string(), wgh.dtype, wgh.shape, wgh.data.data()).has_value());
    Program program = loadExample("all_gather");
    Params params = bindAll(program, {{"M", M}, {"K", K}, {"N", N * 2}, {"S", 2}});
    auto inputs = globalInputs(program, params, 2, 21, {{"w", wgh}});
    fs::path out = dir / "yg.npy";
    std::string command = fmt::format(
        "{} run {} --ranks 2 --set M={} --set K={} --set N={} --set S=2 --seed 21 --input w={} --fill-missing --output "
        "y={} "
        ">{} 2>&1 </dev/null",
        HOSTIR_BINARY, examplePath("all_gather"), M, K, N * 2, (dir / "wg.npy").string(), out.string(),
        (dir / "log").string());
    int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << readText((dir / "log").string());
    auto y = readNpy(out.string(), DType::F32);
    ASSERT_TRUE(y.ok()) << y.error().message;
    Match m = compare("y", *y, DType::F32, linear(toRef(inputs.at("x")), toRef(wgh)));
    EXPECT_TRUE(m.ok) << m.message;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hostir::reftest
