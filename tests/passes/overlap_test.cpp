// The overlap pass: every decision path (a gain, no gain, a tie at the
// threshold, a loss) with predictions the test controls, then the real
// cost model on the shipped H100 profile, and the scheduled program's
// results against the serial reference.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "cli_runner.h"
#include "ir/printer.h"
#include "model/machine_profile.h"
#include "passes/cost_oracle.h"
#include "passes/overlap.h"
#include "passes/pass_manager.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

std::string chunkedLayer() { return testing::testProgramText("passes/programs/chunked_layer.hir"); }

// Two branches from one input, each ending in an allreduce, then their sum.
std::string parallelBlock() { return testing::testProgramText("passes/programs/parallel_block.hir"); }

bool usesWorkerStreams(const Program& program) {
  bool uses = false;
  walkStatements(program.body, [&](const Statement& s) {
    if (s.isWith()) uses |= s.with().stream.form == Arg::Form::Stream;
    if (!s.isOp() || s.op().kind != OpKind::SetCurrentStream) return;
    const std::optional<Arg>& stream = s.op().operand("s");
    uses |= stream && stream->form == Arg::Form::Stream;
  });
  return uses;
}

// Predictions the test chooses: one time for the program as written, one
// for any program that puts work on worker streams.
CostOracle fixedPredictions(double asWritten, double onWorkerStreams) {
  return [=](const Program& program) -> Result<CostPrediction> {
    CostPrediction p;
    p.seconds = usesWorkerStreams(program) ? onWorkerStreams : asWritten;
    p.statementSeconds.assign(program.body.size(), 0.0);
    return p;
  };
}

struct Outcome {
  Program program;
  std::vector<Remark> remarks;
  std::string remarkText() const {
    std::string text;
    for (const Remark& r : remarks) text += r.pass + ": " + r.message + "\n";
    return text;
  }
};

Outcome overlap(const std::string& text, CostOracle predict, double minimumGain = 0.05, Bindings bindings = {}) {
  Outcome outcome{testing::parseOrDie(text), {}};
  PassContext context = testing::raceCheckedContext(outcome.program, bindings, 4, &outcome.remarks);
  context.predict = std::move(predict);
  context.minimumGain = minimumGain;
  PassManager pm;
  pm.addPass(std::make_unique<OverlapPass>());
  auto error = pm.run(outcome.program, context);  // the manager race-checks the result
  EXPECT_FALSE(error.has_value()) << (error ? error->message : "");
  return outcome;
}

TEST(Overlap, AGainAboveTheThresholdRewritesTheLoop) {
  Outcome o = overlap(chunkedLayer(), fixedPredictions(0.100, 0.090));
  EXPECT_TRUE(usesWorkerStreams(o.program)) << printProgram(o.program);
  EXPECT_THAT(o.remarkText(),
              HasSubstr("overlap: loop rewritten: iterations on worker streams predicted 90.0000 ms against 100.0000 "
                        "ms as written (10.0% faster)"));
}

TEST(Overlap, AGainBelowTheThresholdLeavesTheLoop) {
  Outcome o = overlap(chunkedLayer(), fixedPredictions(0.100, 0.097));
  EXPECT_FALSE(usesWorkerStreams(o.program));
  EXPECT_THAT(o.remarkText(), HasSubstr("loop left as it is: iterations on worker streams predicted 97.0000 ms against "
                                        "100.0000 ms as written (3.0% faster), below the 5.0% threshold"));
  // A program the pass leaves alone comes out as it went in, not canonicalized.
  EXPECT_EQ(o.program, testing::parseOrDie(chunkedLayer())) << printProgram(o.program);
  // A gain that one decimal would round onto the threshold shows two.
  Outcome close = overlap(chunkedLayer(), fixedPredictions(0.100, 0.09502));
  EXPECT_FALSE(usesWorkerStreams(close.program));
  EXPECT_THAT(close.remarkText(), HasSubstr("(4.98% faster), below the 5.0% threshold"));
}

// The worker streams a rewritten loop cycles through: k for stream(i % k),
// 0 for one per iteration, -1 when the program has no with block.
int64_t workerStreamCycle(const Program& program) {
  int64_t cycle = -1;
  walkStatements(program.body, [&](const Statement& s) {
    if (!s.isWith()) return;
    std::string stream = s.with().stream.toString();
    size_t mod = stream.find("% ");
    cycle = mod == std::string::npos ? 0 : std::stoll(stream.substr(mod + 2));
  });
  return cycle;
}

TEST(Overlap, PicksTheFastestOfTheStreamCountsAndListsEveryCandidate) {
  // Hand-set predictions: fewer streams than chunks are faster here, 4 the
  // fastest (the pipeline, a with block of stream(0), counts as one per iteration).
  CostOracle predict = [](const Program& program) -> Result<CostPrediction> {
    const std::map<int64_t, double> seconds = {{-1, 0.100}, {0, 0.095}, {2, 0.085}, {4, 0.080}};
    CostPrediction p;
    p.seconds = seconds.at(workerStreamCycle(program));
    p.statementSeconds.assign(program.body.size(), 0.0);
    return p;
  };
  Bindings eightChunks;
  eightChunks.params["S"] = 8;
  Outcome o = overlap(chunkedLayer(), predict, 0.05, eightChunks);
  EXPECT_EQ(workerStreamCycle(o.program), 4) << printProgram(o.program);
  EXPECT_THAT(o.remarkText(), HasSubstr("overlap: loop rewritten: iterations on 4 worker streams predicted 80.0000 ms "
                                        "against 100.0000 ms as written (20.0% faster)"));
  std::string notes;
  for (const Remark& r : o.remarks)
    if (r.message.rfind("loop rewritten", 0) == 0)
      for (const Note& n : r.notes) notes += n.message + "\n";
  EXPECT_EQ(notes,
            "as written: predicted 100.0000 ms\nworker streams: predicted 95.0000 ms\n"
            "2 worker streams: predicted 85.0000 ms\n4 worker streams: predicted 80.0000 ms\n"
            "pipeline of depth 1: predicted 95.0000 ms\n");
}

TEST(Overlap, AGainEqualToTheThresholdIsTaken) {
  Outcome o = overlap(chunkedLayer(), fixedPredictions(0.100, 0.095));
  EXPECT_TRUE(usesWorkerStreams(o.program));
  EXPECT_THAT(o.remarkText(), HasSubstr("(5.0% faster)"));
  // The threshold is an option: at 6% the same prediction is not enough.
  Outcome strict = overlap(chunkedLayer(), fixedPredictions(0.100, 0.095), 0.06);
  EXPECT_FALSE(usesWorkerStreams(strict.program));
  EXPECT_THAT(strict.remarkText(), HasSubstr("below the 6.0% threshold"));
}

TEST(Overlap, APredictedLossLeavesTheLoop) {
  Outcome o = overlap(chunkedLayer(), fixedPredictions(0.100, 0.120));
  EXPECT_FALSE(usesWorkerStreams(o.program));
  EXPECT_THAT(o.remarkText(), HasSubstr("(20.0% slower)"));
}

TEST(Overlap, DependentIterationsAreNeverRewrittenWhateverThePrediction) {
  // Every iteration accumulates into the same buffer: on worker streams they would race.
  Outcome o =
      overlap(testing::testProgramText("passes/programs/accumulating_loop.hir"), fixedPredictions(0.100, 0.010));
  EXPECT_FALSE(usesWorkerStreams(o.program));
  EXPECT_THAT(o.remarkText(), HasSubstr("not independent"));
}

// A ring loop carries its data from one step to the next through the ring
// buffers: its iterations are not independent, so neither pass puts them on
// worker streams, whatever the prediction. (On 2 ranks the loop has one
// iteration, which nothing orders against another: moving it is safe, and
// the pass manager's race check proves it.)
TEST(Overlap, RingLoopsAreNeverRewrittenWhateverThePrediction) {
  for (const char* name : {"ring_all_gather_linear", "ring_reduce_scatter", "ring_bidirectional"}) {
    std::string text = testing::readFile(testing::sourceDir() / "examples" / (std::string(name) + ".hir"));
    for (int64_t world : {3, 4, 6}) {
      Outcome o = overlap(text, fixedPredictions(0.100, 0.010), 0.05, Bindings{{}, world});
      EXPECT_EQ(o.program, testing::parseOrDie(text)) << name << " on " << world << " ranks";
      EXPECT_THAT(o.remarkText(), HasSubstr("not independent")) << name;
    }
  }
}

TEST(Overlap, WithoutAMachineNothingChanges) {
  Outcome o = overlap(chunkedLayer(), CostOracle{});
  EXPECT_EQ(o.program, testing::parseOrDie(chunkedLayer()));
  EXPECT_THAT(o.remarkText(), HasSubstr("no machine profile"));
}

// The real model: the shipped H100 profile, 8 ranks.
CostOracle h100(const std::string& text, const Bindings& bindings) {
  Program program = testing::parseOrDie(text);
  auto profile = loadMachineProfile("h100-nvlink");
  EXPECT_TRUE(profile.ok());
  auto params = bindParams(program, bindings);
  EXPECT_TRUE(params.ok());
  return costOracle(std::make_shared<MachineProfile>(*profile), *params, bindings.world, 4);
}

TEST(Overlap, TheModelRewritesTheLoopWhereChunksPayAndLeavesItWhereTheyCost) {
  // Large chunks: each allreduce hides behind the next chunk's GEMM (at a
  // shape where the allreduce is long enough beside the GEMM for the gain to
  // outweigh their contention).
  Bindings large{{{"M", 2048}, {"K", 8192}, {"N", 1024}}, 8};
  Outcome pays = overlap(chunkedLayer(), h100(chunkedLayer(), large), 0.05, large);
  EXPECT_TRUE(usesWorkerStreams(pays.program)) << pays.remarkText();
  // Tiny chunks: four launches and syncs cost more than the little they hide.
  Bindings tiny{{}, 8};
  Outcome costs = overlap(chunkedLayer(), h100(chunkedLayer(), tiny), 0.05, tiny);
  EXPECT_FALSE(usesWorkerStreams(costs.program)) << costs.remarkText();
  EXPECT_THAT(costs.remarkText(), HasSubstr("slower"));
}

// Statements of `program` of one kind.
size_t count(const Program& program, OpKind kind) {
  size_t n = 0;
  walkStatements(program.body, [&](const Statement& s) { n += s.isOp() && s.op().kind == kind; });
  return n;
}

TEST(Overlap, StraightLineBranchesGoOntoACommunicationStreamWhenThatPays) {
  Bindings gpt{{{"B", 4096}, {"H", 8192}, {"A", 8192}, {"F", 32768}}, 8};
  Outcome o = overlap(parallelBlock(), h100(parallelBlock(), gpt), 0.05, gpt);
  EXPECT_THAT(o.remarkText(), HasSubstr("5 computations and 2 communications"));
  EXPECT_THAT(o.remarkText(), HasSubstr("scheduled onto the main and a communication stream"));
  ASSERT_TRUE(usesWorkerStreams(o.program)) << printProgram(o.program);
  // Both allreduces on the communication stream, each after the event of its GEMM.
  std::vector<std::string> onStream;
  bool onWorker = false;
  for (const Statement& s : o.program.body) {
    if (!s.isOp()) continue;
    if (s.op().kind == OpKind::SetCurrentStream) onWorker = s.op().operand("s")->form == Arg::Form::Stream;
    if (s.op().kind == OpKind::Allreduce) {
      EXPECT_TRUE(onWorker) << printProgram(o.program);
    }
    if (s.op().kind == OpKind::Linear || s.op().kind == OpKind::Add) {
      EXPECT_FALSE(onWorker) << printProgram(o.program);
    }
  }
  EXPECT_EQ(count(o.program, OpKind::RecordEvent), 2u) << printProgram(o.program);
  EXPECT_EQ(count(o.program, OpKind::WaitEvent), 2u);
}

TEST(Overlap, StraightLineCodeWithoutAGainIsLeftAsWritten) {
  // A single rank communicates nothing worth hiding.
  Bindings one{{}, 1};
  Outcome o = overlap(parallelBlock(), h100(parallelBlock(), one), 0.05, one);
  EXPECT_FALSE(usesWorkerStreams(o.program)) << o.remarkText();
  EXPECT_THAT(o.remarkText(), HasSubstr("left as written"));
  EXPECT_EQ(o.program, testing::parseOrDie(parallelBlock())) << printProgram(o.program);
}

// Straight-line code that chooses its own stream, or branches, is its
// author's schedule: --remarks says that the pass left each block.
TEST(Overlap, BlocksInStraightLineCodeAreLeftWithARemark) {
  const std::string text = testing::testProgramText("passes/programs/overlap_blocks_left.hir");
  Outcome o = overlap(text, fixedPredictions(0.100, 0.100), 0.05, Bindings{{}, 2});
  EXPECT_EQ(o.program, testing::parseOrDie(text)) << printProgram(o.program);
  EXPECT_THAT(o.remarkText(), HasSubstr("overlap: 'with' block left as written"));
  EXPECT_THAT(o.remarkText(), HasSubstr("overlap: 'if' block left as written"));
}

// The chunked layer with a branch on the loop index in its body: the loop
// moves whole, if included, when that pays.
std::string branchingLayer() { return testing::testProgramText("passes/programs/branching_layer.hir"); }

TEST(Overlap, ALoopWhoseBodyBranchesMovesWithItsIf) {
  Outcome o = overlap(branchingLayer(), fixedPredictions(0.100, 0.090));
  ASSERT_TRUE(usesWorkerStreams(o.program)) << printProgram(o.program);
  const Statement& loop = o.program.body.at(2);
  ASSERT_TRUE(loop.isFor()) << printProgram(o.program);
  const std::vector<Statement>& onWorker = loop.loop().body.at(0).with().body;
  ASSERT_GT(onWorker.size(), 3u) << printProgram(o.program);
  EXPECT_EQ(onWorker[3], testing::parseOrDie(branchingLayer()).body[1].loop().body[2]) << printProgram(o.program);
}

// A top-level if ends a straight-line region: its statements are never
// scheduled, and it stays where it was.
TEST(Overlap, StraightLineRegionsStopAtAnIf) {
  std::string text = parallelBlock();
  const std::string second = "  m = linear(x, w1)\n";
  text.replace(text.find(second), second.size(), "  if B > 0 {\n    e = allocate(bf16[B])\n  }\n" + second);
  Bindings gpt{{{"B", 4096}, {"H", 8192}, {"A", 8192}, {"F", 32768}}, 8};
  Outcome o = overlap(text, h100(text, gpt), 0.05, gpt);
  std::string printed = printProgram(o.program);
  EXPECT_NE(printed.find("  if B > 0 {\n    e = allocate(bf16[B])\n  }\n"), std::string::npos) << printed;
  // Neither region holds a computation and a communication that can overlap
  // across the if: each is scheduled, or left, on its own side of it.
  size_t at = printed.find("  if B > 0 {");
  EXPECT_NE(printed.find("ha = allreduce(ao, op=sum)"), std::string::npos);
  EXPECT_LT(printed.find("ha = allreduce(ao, op=sum)"), at) << printed;
  EXPECT_GT(printed.find("hm = allreduce(mo, op=sum)"), at) << printed;
}

// A statement that defines or waits an element of a handle array ends a
// straight-line region and stays as written: another iteration or a later
// statement may wait the element, which the region's schedule cannot see.
// Here the sum reads both allreduces' buffers on the main stream before the
// waits: a schedule that moved the allreduces would have to wait elements.
TEST(Overlap, StatementsNamingArrayElementsAreLeftAsWritten) {
  std::string text = parallelBlock();
  for (auto [plain, element] : {std::pair{"ha = ", "h[0] = "},
                                {"  wait(ha)\n", ""},
                                {"hm = ", "h[1] = "},
                                {"  wait(hm)\n", ""},
                                {"  y = add(ao, mo)\n", "  y = add(ao, mo)\n  wait(h[0])\n  wait(h[1])\n"}})
    text.replace(text.find(plain), std::string(plain).size(), element);
  ASSERT_NE(text.find("  y = add(ao, mo)\n  wait(h[0])\n  wait(h[1])\n}"), std::string::npos) << text;
  Bindings gpt{{{"B", 4096}, {"H", 8192}, {"A", 8192}, {"F", 32768}}, 8};
  Outcome o = overlap(text, h100(text, gpt), 0.05, gpt);
  EXPECT_EQ(o.program, testing::parseOrDie(text)) << printProgram(o.program);
  EXPECT_FALSE(usesWorkerStreams(o.program)) << o.remarkText();
  size_t left = 0;
  for (const Remark& r : o.remarks)
    left += r.message.find("statement left as written: it names an element of a handle or event array") == 0;
  EXPECT_EQ(left, 4u) << o.remarkText();
}

class OverlapCli : public testing::CliTest {};

// The scheduled block gives the results of the program as written.
TEST_F(OverlapCli, TheScheduledBlockMatchesTheSerialReference) {
  // Scheduled for the GPT-sized shape, where it pays; run at the small defaults.
  std::string file = write("block.hir", parallelBlock());
  std::string scheduled = (dir_ / "scheduled.hir").string();
  auto opt = run("opt " + file + " --ranks 8 --set B=4096 --set H=8192 --set A=8192 --set F=32768 --passes overlap " +
                 "--machine h100-nvlink --remarks -o " + scheduled);
  ASSERT_EQ(opt.exitCode, 0) << opt.err;
  EXPECT_THAT(opt.err, HasSubstr("scheduled onto the main and a communication stream"));
  auto r = run("run " + scheduled + " --ranks 2 --check");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
}

// A loop on fewer worker streams than chunks gives the results of the loop as written.
TEST_F(OverlapCli, EveryStreamCountMatchesTheSerialReference) {
  for (int streams : {2, 4}) {
    std::string text = chunkedLayer();
    // The rewrite overlap makes with `streams` worker streams, written out.
    text.replace(text.find("  for i in range(S) {"), std::string("  for i in range(S) {").size(),
                 fmt::format("  main = get_current_stream()\n  for i in range(S) {{\n    with stream(i % {}) {{\n"
                             "    synchronize(main)",
                             streams));
    text.replace(
        text.find("    wait(c)\n  }\n"), std::string("    wait(c)\n  }\n").size(),
        fmt::format("    wait(c)\n    }}\n  }}\n  for j in range({}) {{\n    synchronize(stream(j))\n  }}\n", streams));
    std::string file = write(fmt::format("streams{}.hir", streams), text);
    for (int ranks : {1, 2, 4}) {
      auto r = run(fmt::format("run {} --ranks {} --set S=8 --race-check --check", file, ranks));
      EXPECT_EQ(r.exitCode, 0) << text << r.err;
      EXPECT_THAT(r.out, HasSubstr("check: ok"));
    }
  }
  // overlap offers those stream counts and says what each is predicted at.
  auto opt = run("opt " + example("row_parallel_linear.hir") +
                 " --ranks 8 --set M=16384 --set K=8192 --set N=8192 --set S=8 --passes overlap --machine h100-nvlink "
                 "--remarks");
  ASSERT_EQ(opt.exitCode, 0) << opt.err;
  EXPECT_THAT(opt.err, HasSubstr("note: 2 worker streams: predicted"));
  EXPECT_THAT(opt.err, HasSubstr("note: 4 worker streams: predicted"));
}

TEST_F(OverlapCli, OverlapNeedsAMachine) {
  auto r = run("opt " + example("row_parallel_linear.hir") + " --passes overlap");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("pass 'overlap' consults the cost model: give a machine profile with --machine"));
}

}  // namespace
}  // namespace hostir
