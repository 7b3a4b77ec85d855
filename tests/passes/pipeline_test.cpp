// The pipeline pass: the makespans of pipelined loops, computed by hand and
// predicted by the simulator on a profile with round costs; the statement
// that stops each loop it leaves; loops whose iterations depend on each
// other, which it never rewrites; its depth option; and overlap choosing a
// pipeline where it is predicted fastest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "ir/printer.h"
#include "model/cost_model.h"
#include "model/simulation.h"
#include "passes/overlap.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

struct Outcome {
  Program program;
  std::vector<Remark> remarks;
  std::string remarkText() const {
    std::string text;
    for (const Remark& r : remarks) {
      text += r.pass + ": " + r.message + "\n";
      for (const Note& n : r.notes) text += "  note: " + n.message + "\n";
    }
    return text;
  }
};

Outcome runPasses(const std::string& text, const std::string& pipeline, Bindings bindings = {}) {
  Outcome outcome{testing::parseOrDie(text), {}};
  PassContext context = testing::raceCheckedContext(outcome.program, bindings, 4, &outcome.remarks);
  PassManager pm;
  auto added = pm.addPipeline(pipeline);
  EXPECT_FALSE(added.has_value()) << added->message;
  auto error = pm.run(outcome.program, context);  // the manager race-checks the result
  EXPECT_FALSE(error.has_value()) << (error ? error->message : "");
  return outcome;
}

// Sequence-parallel chunks: allgather chunk i into its own buffer, one
// GEMM, reduce-scatter the result. On 2 ranks each GEMM is
// 2 * (2 rows) * 4 * 4 = 64 flops.
std::string threeStages() { return testing::testProgramText("passes/programs/pipeline_three_stages.hir"); }

// A row-parallel layer: each chunk's GEMM (2 * 2 * 4 * 4 = 64 flops on 2
// ranks), then its allreduce.
std::string outputOnly() { return testing::testProgramText("passes/programs/pipeline_output_only.hir"); }

constexpr double kMicro = 1e-6;

// Round costs: a GEMM of 64 flops takes 64 us (1 MFLOP/s); each
// collective takes its latency alone (the bandwidth is so high that the
// bytes cost nothing); no overheads; computation and communication run
// side by side at full speed; allocations and views cost nothing.
MachineProfile roundProfile(double allgatherMicros, double reduceScatterMicros, double allreduceMicros) {
  MachineProfile p;
  p.name = "round";
  p.admission = Admission::Concurrent;
  p.computeUnits = 100;
  p.memory = MemoryCurve{{1}, {1e12}};
  p.gemm[DType::F32] = GemmGrid{{1}, {1}, {1}, {1e-6}};
  auto latencyOnly = [](OpKind kind, double micros) {
    return CommunicationCost{kind, 2, CommAlgorithm::Flat, micros, 1e12, {}, {}};
  };
  p.communication = {latencyOnly(OpKind::Allgather, allgatherMicros),
                     latencyOnly(OpKind::ReduceScatter, reduceScatterMicros),
                     latencyOnly(OpKind::Allreduce, allreduceMicros)};
  return p;
}

// The predicted run time of `text` on 2 ranks after `pipeline`.
double makespan(const std::string& text, const std::string& pipeline, const MachineProfile& profile) {
  Bindings two{{}, 2};
  Outcome o = pipeline.empty() ? Outcome{testing::parseOrDie(text), {}} : runPasses(text, pipeline, two);
  if (!pipeline.empty()) EXPECT_THAT(o.remarkText(), HasSubstr("loop pipelined")) << printProgram(o.program);
  auto params = bindParams(o.program, two);
  EXPECT_TRUE(params.ok());
  auto simulation = simulateProgram(o.program, *params, 2, 4, profile);
  EXPECT_TRUE(simulation.ok()) << (simulation.ok() ? "" : simulation.error().message);
  return simulation.ok() ? simulation->seconds() : 0;
}

// Compute-bound: allgather A = 16, GEMM G = 64, reduce-scatter R = 16 us.
// As written each chunk runs A, G, R in a row: 4 * 96 = 384 us. Pipelined,
// the GEMMs run back to back; the first waits for A0, the last R trails:
//   comm:    A0 0-16, A1 16-32, R0 80-96, A2 96-112, R1 144-160, A3 160-176, R2 208-224, R3 272-288
//   compute: G0 16-80, G1 80-144, G2 144-208, G3 208-272
// so A + 4G + R = 288 us, at depth 1 and 2 alike.
TEST(PipelineMakespan, ComputeBoundChunksRunTheirGemmsBackToBack) {
  const MachineProfile p = roundProfile(16, 16, 0);
  EXPECT_NEAR(makespan(threeStages(), "", p), 384 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(threeStages(), "pipeline", p), 288 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(threeStages(), "pipeline{depth=2}", p), 288 * kMicro, 1e-9);
}

// Communication-bound: A = 16, G = 64, R = 192 us. A rank runs its
// communications one at a time in issue order, so the order of issue is the
// schedule. As written: 4 * 272 = 1088 us.
// Depth 1 issues A0 A1 R0 A2 R1 A3 R2 R3; each A(i + 2) waits behind R(i):
//   A0 0-16, A1 16-32, R0 80-272, A2 272-288, R1 288-480, A3 480-496, R2 496-688, R3 688-880
// Depth 2 issues A0 A1 A2 R0 A3 R1 R2 R3: A2 travels before R0 starts, and
// only A3 waits behind a reduce-scatter:
//   A0 0-16, A1 16-32, A2 32-48, R0 80-272, A3 272-288, R1 288-480, R2 480-672, R3 672-864
TEST(PipelineMakespan, CommunicationBoundChunksGainFromADeeperPipeline) {
  const MachineProfile p = roundProfile(16, 192, 0);
  EXPECT_NEAR(makespan(threeStages(), "", p), 1088 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(threeStages(), "pipeline", p), 880 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(threeStages(), "pipeline{depth=2}", p), 864 * kMicro, 1e-9);
}

// An output only: the GEMMs run back to back and each allreduce follows its
// GEMM's event. G = 64 us. With C = 32 the allreduces hide: 4 * 64 + 32.
// With C = 96 they are the bottleneck: 64 + 4 * 96. As written 4 * (G + C).
TEST(PipelineMakespan, AnOutputOnlyLoopHidesItsCommunicationsBehindTheNextGemm) {
  const MachineProfile hides = roundProfile(0, 0, 32);
  EXPECT_NEAR(makespan(outputOnly(), "", hides), 4 * 96 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(outputOnly(), "pipeline", hides), (4 * 64 + 32) * kMicro, 1e-9);
  const MachineProfile bound = roundProfile(0, 0, 96);
  EXPECT_NEAR(makespan(outputOnly(), "", bound), 4 * 160 * kMicro, 1e-9);
  EXPECT_NEAR(makespan(outputOnly(), "pipeline", bound), (64 + 4 * 96) * kMicro, 1e-9);
}

TEST(Pipeline, TheRemarkSaysWhatMovedAndWhere) {
  Outcome o = runPasses(threeStages(), "pipeline{depth=2}", Bindings{{}, 2});
  EXPECT_THAT(o.remarkText(),
              HasSubstr("loop pipelined at depth 2: the 'allgather' (line 11) of iteration i + 2 is issued on "
                        "stream(0) before iteration i's computation; 'g' rotates through 3 slots of 'g_ring'; the "
                        "'reduce_scatter' (line 14) goes on stream(1) after an event of the computation, and is "
                        "waited after the loop"));
}

// Each loop below breaks the shape at one statement; the pass leaves it and
// the remark's note names that statement.
TEST(Pipeline, ALoopOfAnotherShapeIsLeftWithTheStatementThatStopsIt) {
  const std::string head = R"(program p(T = 8, H = 4, S = 2) {
  input  x : f32[T, H]
  input  w : f32[H, H]
  output y : f32[T, H]
  y = allocate(f32[T, H])
)";
  struct Case {
    std::string loop;
    std::string stop;
  };
  const std::vector<Case> cases = {
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    linear(xi, w, out=yi)
    h = allreduce(yi, op=sum)
    wait(h)
    relu(yi, out=yi)
  }
)",
       "the 'allreduce' is issued between computations (another computation follows at line 13)"},
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    n = min(i + 1, T / S)
    g = allocate(f32[n, H])
    copy(xi, out=yi)
    h = allreduce(yi, op=sum)
    wait(h)
  }
)",
       ""},  // no input: the allocation does not rotate, and the loop is pipelined
      {R"(  for i in range(S) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    n = T / S + 0 * i
    g = allocate(f32[n, H])
    a = allgather(xi, out=g, axis=0)
    wait(a)
    linear(g, w, out=yi)
  }
)",
       "the shape of 'g', which the input 'allgather' writes, changes with the iteration"},
      {R"(  for i in range(S) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    g = allocate(f32[world * (T / S), H], zero=true)
    a = allgather(xi, out=g, axis=0)
    wait(a)
    linear(g, w, out=yi)
  }
)",
       "'g' is allocated zeroed"},
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    if i > 0 {
      copy(xi, out=yi)
    }
    h = allreduce(yi, op=sum)
    wait(h)
  }
)",
       "it holds an 'if' block"},
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
    allreduce(yi, op=sum)
  }
)",
       "the 'allreduce' has no handle for the pipeline to wait"},
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
    synchronize(stream(3))
    h = allreduce(yi, op=sum)
    wait(h)
  }
)",
       "the 'synchronize' manages streams itself"},
      {R"(  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    h = allreduce(yi, op=sum)
    wait(h)
  }
)",
       "it issues no computation for its communications to overlap"},
  };
  for (const Case& c : cases) {
    const std::string text = head + "  copy(x, out=y)\n" + c.loop + "}\n";
    Outcome o = runPasses(text, "pipeline");
    if (c.stop.empty()) {
      EXPECT_THAT(o.remarkText(), HasSubstr("loop pipelined")) << c.loop;
      continue;
    }
    EXPECT_EQ(o.program, testing::parseOrDie(text)) << c.loop;
    EXPECT_THAT(o.remarkText(), HasSubstr("loop left as it is: it does not fit the pipeline's shape")) << c.loop;
    EXPECT_THAT(o.remarkText(), HasSubstr(c.stop)) << o.remarkText();
  }
}

// Iterations that depend on each other: pipelined, one of the moved
// communications would race with a computation or another communication.
// The pass leaves each loop and names the race.
TEST(Pipeline, DependentIterationsAreNeverRewritten) {
  const std::vector<std::string> loops = {
      // Each iteration adds into y, which its allreduce reduces in place.
      testing::testProgramText("passes/programs/accumulating_loop.hir"),
      // Iteration i's input reads the chunk iteration i - 1's output writes:
      // issued ahead, it would read it before it is written.
      testing::testProgramText("passes/programs/pipeline_chain.hir"),
  };
  for (const std::string& text : loops) {
    for (const char* pipeline : {"pipeline", "pipeline{depth=2}"}) {
      Outcome o = runPasses(text, pipeline);
      EXPECT_EQ(o.program, testing::parseOrDie(text)) << printProgram(o.program);
      EXPECT_THAT(o.remarkText(), HasSubstr("its iterations are not independent; pipelined there would be a race"));
    }
  }
}

TEST(Pipeline, TheDepthIsAnOptionWrittenInBraces) {
  for (const char* bad : {"pipeline{depth=0}", "pipeline{depth=17}", "pipeline{depth=x}", "pipeline{width=2}",
                          "pipeline{depth=2", "assign-streams{depth=1}"}) {
    PassManager pm;
    auto error = pm.addPipeline(bad);
    ASSERT_TRUE(error.has_value()) << bad;
    EXPECT_THAT(error->message, ::testing::AnyOf(HasSubstr("write pipeline{depth=d}"), HasSubstr("takes no options"),
                                                 HasSubstr("options are written")))
        << bad;
  }
  PassManager pm;
  EXPECT_FALSE(pm.addPipeline("pipeline{depth=3},canonicalize").has_value());
  EXPECT_EQ(pm.size(), 2u);
}

// overlap predicts each candidate and keeps a pipeline where it is the fastest.
TEST(Pipeline, OverlapKeepsAPipelineWhereItIsPredictedFastest) {
  // Predictions by the schedule: as written 100, worker streams 95, pipeline
  // of depth 1 90, of depth 2 80 (the loop bound shows the depth).
  CostOracle predict = [](const Program& program) -> Result<CostPrediction> {
    const std::string text = printProgram(program);
    double seconds = 0.100;
    if (text.find("with stream(i)") != std::string::npos) seconds = 0.095;
    if (text.find("range(S + 1)") != std::string::npos) seconds = 0.090;
    if (text.find("range(S + 2)") != std::string::npos) seconds = 0.080;
    CostPrediction p;
    p.seconds = seconds;
    p.statementSeconds.assign(program.body.size(), 0.0);
    return p;
  };
  Outcome o{testing::parseOrDie(threeStages()), {}};
  Bindings two{{}, 2};
  PassContext context = testing::raceCheckedContext(o.program, two, 4, &o.remarks);
  context.predict = predict;
  PassManager pm;
  pm.addPass(std::make_unique<OverlapPass>());
  auto error = pm.run(o.program, context);
  ASSERT_FALSE(error.has_value()) << error->message;
  EXPECT_THAT(printProgram(o.program), HasSubstr("range(S + 2)"));
  EXPECT_THAT(o.remarkText(), HasSubstr("overlap: loop rewritten: as a pipeline of depth 2 predicted 80.0000 ms "
                                        "against 100.0000 ms as written (20.0% faster)"));
  EXPECT_THAT(o.remarkText(), HasSubstr("note: pipeline of depth 1: predicted 90.0000 ms"));
  std::string schedule;
  for (const Remark& r : o.remarks)
    if (!r.schedule.empty()) schedule = r.schedule;
  EXPECT_EQ(schedule, "pipeline of depth 2");
}

}  // namespace
}  // namespace hostir
