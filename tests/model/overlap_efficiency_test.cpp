// What `hostir simulate` makes of a whole program against its compute-only
// and communication-only variants: the overlap efficiency E lies in [0, 1]
// by its definition (docs/cost-model.md, "Overlap efficiency"), also when
// stripping a part changes the schedule so that a variant runs longer than
// the whole program, or contention makes the whole longer than both parts
// one after the other. And a computation's contention class is its own: an
// `add` is elementwise work, and the `overlap` pass's decisions follow the
// profile's elementwise rates, never its GEMM rates.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "api/pass_pipeline.h"
#include "api/program_prediction.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "model/simulation.h"
#include "test_util.h"

namespace hostir {
namespace {

// E from the whole program's time and its variants' (ms), the definition alone.
double efficiency(double whole, double compute, double communication) {
  api::ProgramPrediction p;
  p.whole.timeline.end = whole;
  p.computeSeconds = compute;
  p.communicationSeconds = communication;
  return p.overlapEfficiency();
}

TEST(OverlapEfficiency, IsTheShareOfTheShorterPartThatTheWholeHides) {
  // Nothing hidden, half of it, all of it.
  EXPECT_DOUBLE_EQ(efficiency(10, 8, 2), 0.0);
  EXPECT_DOUBLE_EQ(efficiency(9, 8, 2), 0.5);
  EXPECT_DOUBLE_EQ(efficiency(8, 8, 2), 1.0);
  // A variant longer than the whole (stripping changed the schedule): the
  // shorter part is hidden, whichever variant it was.
  EXPECT_DOUBLE_EQ(efficiency(7, 8, 2), 1.0);
  EXPECT_DOUBLE_EQ(efficiency(1, 8, 2), 1.0);
  EXPECT_DOUBLE_EQ(efficiency(7, 2, 8), 1.0);
  // The whole longer than both one after the other (contention): nothing hidden.
  EXPECT_DOUBLE_EQ(efficiency(12, 8, 2), 0.0);
  // A part the program does not have: nothing to hide.
  EXPECT_DOUBLE_EQ(efficiency(8, 8, 0), 0.0);
  EXPECT_DOUBLE_EQ(efficiency(2, 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(efficiency(0, 0, 0), 0.0);
}

// Two ranks on one device whose GEMMs and elementwise kernels slow each
// other to a fifth when they run at once; communication contends with
// nothing. 100 units (communications hold 10), memory at 1000 GB/s, f32
// GEMMs at 10 TFLOP/s, an allreduce of 10 µs + bytes / 100 GB/s.
MachineProfile sharedDevice() {
  MachineProfile p;
  p.name = "shared-device";
  p.admission = Admission::Concurrent;
  p.computeUnits = 100;
  p.gemmUnits = 0;
  p.elementwiseUnits = 0;
  p.communicationUnits = 10;
  p.gemm[DType::F32] = GemmGrid{{64}, {64}, {64}, {10}, {}};
  p.memory.bytes = {1024};
  p.memory.gbps = {1000};
  p.communication.push_back(CommunicationCost{OpKind::Allreduce, 2, CommAlgorithm::Ring, 10, 100, {}, {}, {}, 0});
  p.overheads = Overheads{1, 1, 1, 1, {}, 0, 0, 0, 0};
  p.contention = {{WorkClass::Gemm, WorkClass::Elementwise, 0.2, 0},
                  {WorkClass::Elementwise, WorkClass::Gemm, 0.2, 0},
                  {WorkClass::Communication, WorkClass::Gemm, 1, 0},
                  {WorkClass::Gemm, WorkClass::Communication, 1, 0},
                  {WorkClass::Communication, WorkClass::Elementwise, 1, 0},
                  {WorkClass::Elementwise, WorkClass::Communication, 1, 0}};
  return p;
}

// A whole layer's loop: each chunk's GEMM, its allreduce, then two
// elementwise stand-ins for the rest of the layer on the reduced chunk.
std::string layer() { return testing::testProgramText("model/programs/layer_with_stand_ins.hir"); }

struct Predicted {
  api::ProgramPrediction prediction;
  hostir::Program program;  // after the passes
};

// `hostir simulate` of `text` with `passes` on two ranks and four worker streams.
Predicted predict(const std::string& text, const std::string& passes, const MachineProfile& machine,
                  std::vector<std::string>* remarks = nullptr) {
  api::ProgramSource source{"test.hir", text, {}};
  auto parsed = parseProgram(text);
  EXPECT_TRUE(parsed.ok());
  source.program = *parsed;
  const Bindings bindings = api::verifiedProgram(source, {}, 2).bindings;
  api::PipelineOptions options;
  options.streams = 4;
  options.machine = std::make_shared<MachineProfile>(machine);
  if (remarks) options.remarks = [remarks](const Remark& r) { remarks->push_back(r.message); };
  hostir::Program program =
      api::applyPipeline(source, source.program, hostir::splitPipeline(passes), bindings, options);
  return {api::predictProgram(source, program, bindings, 4, machine), program};
}

TEST(OverlapEfficiency, StaysWithinZeroAndOneWhenStrippingSlowsTheComputeVariant) {
  // After assign-streams the chunks run on worker streams, each chunk's adds
  // after its allreduce. Without the allreduces (and the waits for them)
  // the second chunk's GEMM runs beside the first chunk's adds, both at a
  // fifth of their rates: the compute-only variant takes longer than the
  // whole program, and (compute + comm - total) / min exceeds the comm.
  const Predicted p = predict(layer(), "assign-streams", sharedDevice());
  const api::ProgramPrediction& e = p.prediction;
  ASSERT_GT(e.computeSeconds, e.seconds()) << "the case this test is about";
  ASSERT_GT(e.communicationSeconds, 0);
  EXPECT_GT((e.computeSeconds + e.communicationSeconds - e.seconds()) / e.communicationSeconds, 1.0);
  EXPECT_TRUE(e.variantSlowerThanWhole());
  EXPECT_DOUBLE_EQ(e.overlapEfficiency(), 1.0);  // the communication is wholly hidden
  EXPECT_DOUBLE_EQ(e.exposedCommunicationSeconds(), 0.0);
}

TEST(OverlapEfficiency, IsZeroWhenContentionMakesTheWholeSlowerThanItsPartsInTurn) {
  // GEMMs and communication at a twentieth of their rates beside each other:
  // overlapping them costs more than running them one after the other.
  MachineProfile machine = sharedDevice();
  for (Contention& c : machine.contention)
    if (c.slowed == WorkClass::Communication || c.beside == WorkClass::Communication) c.rate = 0.05;
  const Predicted p = predict(layer(), "assign-streams", machine);
  const api::ProgramPrediction& e = p.prediction;
  ASSERT_GT(e.seconds(), e.computeSeconds + e.communicationSeconds) << "the case this test is about";
  EXPECT_TRUE(e.slowerThanSerial());
  EXPECT_DOUBLE_EQ(e.overlapEfficiency(), 0.0);
  EXPECT_DOUBLE_EQ(e.exposedCommunicationSeconds(), e.seconds() - e.computeSeconds);
}

TEST(OverlapEfficiency, IsTheFormulaWhereTheVariantsBoundTheWhole) {
  // As written (one stream) nothing runs beside anything: C + M - T within [0, min].
  const Predicted p = predict(layer(), "", sharedDevice());
  const api::ProgramPrediction& e = p.prediction;
  const double hidden = e.computeSeconds + e.communicationSeconds - e.seconds();
  ASSERT_GE(hidden, 0);
  ASSERT_LE(hidden, std::min(e.computeSeconds, e.communicationSeconds));
  EXPECT_DOUBLE_EQ(e.overlapEfficiency(), hidden / std::min(e.computeSeconds, e.communicationSeconds));
}

// Chunks of elementwise work, each followed by its allreduce: what a layer
// whose GEMMs a test replaced with `add`s looks like to the model.
std::string standIns() { return testing::testProgramText("model/programs/elementwise_chunks.hir"); }

bool usesWorkerStreams(const hostir::Program& program) {
  bool uses = false;
  walkStatements(program.body, [&](const Statement& s) {
    if (s.isWith()) uses |= s.with().stream.form == Arg::Form::Stream;
    if (!s.isOp() || s.op().kind != OpKind::SetCurrentStream) return;
    const std::optional<Arg>& stream = s.op().operand("s");
    uses |= stream && stream->form == Arg::Form::Stream;
  });
  return uses;
}

TEST(WorkClasses, AnAddIsElementwiseWorkInTheSimulation) {
  const Predicted p = predict(standIns(), "", sharedDevice());
  size_t adds = 0;
  for (const WorkItem& item : p.prediction.whole.work.front().items) {
    if (item.op != OpKind::Add || item.kind != WorkItem::Kind::Compute) continue;
    ++adds;
    EXPECT_EQ(item.workClass, WorkClass::Elementwise);
  }
  EXPECT_EQ(adds, 4u);
}

TEST(WorkClasses, OverlapDecidesStandInAddsByTheElementwiseRatesNotTheGemmRates) {
  // GEMMs and communication slow each other to a twentieth; adds and
  // communication do not contend. Overlapping the adds with the allreduces
  // pays, and overlap takes it: the adds are not priced as GEMMs.
  MachineProfile machine = sharedDevice();
  machine.communication.front().busGbps = 400;  // an allreduce about as long as an add
  machine.contention = {{WorkClass::Communication, WorkClass::Gemm, 0.05, 0},
                        {WorkClass::Gemm, WorkClass::Communication, 0.05, 0},
                        {WorkClass::Communication, WorkClass::Elementwise, 1, 0},
                        {WorkClass::Elementwise, WorkClass::Communication, 1, 0}};
  std::vector<std::string> remarks;
  const Predicted overlapped = predict(standIns(), "overlap", machine, &remarks);
  EXPECT_TRUE(usesWorkerStreams(overlapped.program));
  std::string said;
  for (const std::string& r : remarks) said += r + "\n";
  EXPECT_NE(said.find("loop rewritten"), std::string::npos) << said;
  // The same profile with the two pairs swapped: now the adds beside the
  // allreduces would cost more than they hide, and overlap leaves the loop.
  for (Contention& c : machine.contention) c.rate = c.rate == 1 ? 0.05 : 1;
  remarks.clear();
  const Predicted left = predict(standIns(), "overlap", machine, &remarks);
  EXPECT_FALSE(usesWorkerStreams(left.program));
  said.clear();
  for (const std::string& r : remarks) said += r + "\n";
  EXPECT_NE(said.find("loop left as it is"), std::string::npos) << said;
}

}  // namespace
}  // namespace hostir
