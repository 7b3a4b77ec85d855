#include "model/simulation_backend.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>

#include "ir/collectives.h"
#include "ir/mesh.h"
#include "model/cost_model.h"
#include "runtime/collective_plan.h"
#include "runtime/work_cost.h"

namespace hostir {
namespace {

// Memory nobody reads: a simulated tensor has a shape and no elements.
class ShapeOnlyBuffer : public Buffer {
 public:
  explicit ShapeOnlyBuffer(size_t bytes) : bytes_(bytes) {}
  std::byte* data() override { return nullptr; }
  size_t bytes() const override { return bytes_; }

 private:
  size_t bytes_;
};

TensorView shapeOnly(DType dtype, const Dims& shape) {
  TensorView t = TensorView::contiguous(nullptr, dtype, shape);
  t.buffer = std::make_shared<ShapeOnlyBuffer>(t.bytes());
  return t;
}

int64_t bytesOf(const TensorView& v) { return static_cast<int64_t>(v.bytes()); }

// A copy's time: its bytes (read plus written), moved in the innermost rows
// the CPU kernels walk (see mergeContiguousDims).
double copySecondsOf(const MachineProfile& profile, const TensorView& src, const TensorView& dst) {
  const int64_t bytes = bytesOf(src) + bytesOf(dst);
  const MergedLayout<2> layout = mergeContiguousDims<2>({&src, &dst});
  if (layout.shape.size == 0) return copySeconds(profile, bytes, 0);
  const size_t last = layout.shape.size - 1;
  const int64_t element = static_cast<int64_t>(dtypeSize(src.dtype));
  const bool unitStride = layout.strides[0][last] == 1 && layout.strides[1][last] == 1;
  return copySeconds(profile, bytes, unitStride ? layout.shape[last] * element : element);
}

// 0 in a profile means "all of the rank's units".
double unitsOf(double units, const MachineProfile& profile) { return units > 0 ? units : profile.computeUnits; }

// Copies and fills: the CPU backend's gate does not hold them back (they
// take no core turn), a GPU runs them as kernels on its SMs.
double copyUnits(const MachineProfile& profile) {
  return profile.admission == Admission::IssueOrder ? 0 : unitsOf(profile.elementwiseUnits, profile);
}

}  // namespace

struct SimulationBackend::SimulatedStream : Stream {
  SimulatedStream(int index, int slot) : index(index), slot_(slot) {}
  int slot() const override { return slot_; }
  int index;           // in RankWork: 0 main, 1 + slot
  uint64_t items = 0;  // work items issued on it
  int slot_;
};

SimulationBackend::SimulationBackend(const MachineProfile& profile, int64_t rank, int64_t world, int64_t poolSize)
    : profile_(profile), rank_(rank), world_(world) {
  streams_.push_back(std::make_unique<SimulatedStream>(0, -1));
  for (int64_t slot = 0; slot < poolSize; ++slot)
    streams_.push_back(std::make_unique<SimulatedStream>(static_cast<int>(slot) + 1, static_cast<int>(slot)));
  work_.streams = static_cast<int>(streams_.size());
}

SimulationBackend::~SimulationBackend() = default;

TensorView SimulationBackend::input(DType dtype, const Dims& shape) { return shapeOnly(dtype, shape); }

void SimulationBackend::beginOperation(const OperationInfo& info) {
  current_ = info;
  ++work_.statements;
  work_.issued.push_back(IssuedStatement{info.kind, info.loc});
}

void SimulationBackend::beginRun() {
  work_ = RankWork{};
  laneCommunications_.clear();
  work_.streams = static_cast<int>(streams_.size());
  for (auto& stream : streams_) stream->items = 0;
}

Stream* SimulationBackend::mainStream() { return streams_[0].get(); }

Stream* SimulationBackend::workerStream(int64_t number) {
  const int64_t pool = static_cast<int64_t>(streams_.size()) - 1;
  return streams_[1 + static_cast<size_t>(number % pool)].get();
}

SimulationBackend::SimulatedStream* SimulationBackend::simulated(Stream* stream) const {
  return static_cast<SimulatedStream*>(stream);
}

WorkItem& SimulationBackend::issue(Stream* stream, WorkItem::Kind kind, double seconds, double units) {
  SimulatedStream* s = simulated(stream);
  WorkItem& item = work_.items.emplace_back();
  item.kind = kind;
  item.op = current_.kind;
  item.loc = current_.loc;
  item.stream = s->index;
  item.statement = work_.statements == 0 ? 0 : work_.statements - 1;
  item.seconds = seconds;
  item.units = units;
  ++s->items;
  return item;
}

Event SimulationBackend::recordEvent(Stream* stream) { return Event{stream, simulated(stream)->items}; }

void SimulationBackend::waitEvent(Stream* waiter, const Event& event) {
  if (event.stream == waiter || event.position == 0) return;  // a stream already runs in order
  WorkItem& item = issue(waiter, WorkItem::Kind::Wait, 0, 0);
  item.afterStream = simulated(event.stream)->index;
  item.afterCount = event.position;
}

TensorView SimulationBackend::allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) {
  TensorView t = shapeOnly(dtype, shape);
  if (zero) {
    WorkItem& item = issue(stream, WorkItem::Kind::Memory, memorySeconds(profile_, bytesOf(t)), copyUnits(profile_));
    item.workClass = WorkClass::Memory;
    item.bytes = bytesOf(t);
  }
  return t;
}

// A computation by its cost rule (computeCost): a GEMM at the profile's
// GEMM rates, attention at its attention rate, the other kernels at their
// bandwidth for their bytes. Its contention class comes from the same
// rule, so only a GEMM is ever in the GEMM class.
void SimulationBackend::compute(Stream* stream, const KernelCall& call) {
  const std::array<TensorExtent, kMaxOperands> extents = extentsOf(call);
  Result<ComputeCost, std::string> cost =
      computeCost(profile_, call.kind, call.operand(0).dtype, extents, call.scalars);
  if (!cost) fail(current_.loc, cost.error());
  const bool gemm = cost->workClass == WorkClass::Gemm;
  WorkItem& item = issue(stream, WorkItem::Kind::Compute, cost->seconds,
                         unitsOf(gemm ? profile_.gemmUnits : profile_.elementwiseUnits, profile_));
  item.workClass = cost->workClass;
  item.bytes = cost->counted.bytes;
  item.flops = cost->counted.flops;
  if (cost->assumed) work_.assumptions.insert(*cost->assumed);
}

void SimulationBackend::copy(Stream* stream, const TensorView& src, const TensorView& dst) {
  const int64_t bytes = bytesOf(src) + bytesOf(dst);
  WorkItem& item = issue(stream, WorkItem::Kind::Memory, copySecondsOf(profile_, src, dst), copyUnits(profile_));
  item.workClass = WorkClass::Memory;
  item.bytes = bytes;
}

GroupPlacement SimulationBackend::placementOf(uint32_t over, const MeshGroup& group) const {
  // Ranks fill nodes in order (mpirun's by-slot mapping): rank r is on node r / ranksPerNode.
  GroupPlacement placement;
  if (profile_.ranksPerNode <= 0) return placement;
  std::map<int64_t, int64_t> onNode;
  for (int64_t place = 0; place < group.size; ++place) {
    const int64_t rank = over == 0 ? place : meshGroupRank(mesh_, over, group.color, place);
    placement.perNode = std::max(placement.perNode, ++onNode[rank / profile_.ranksPerNode]);
  }
  placement.nodes = static_cast<int64_t>(onNode.size());
  return placement;
}

void SimulationBackend::collective(Stream* stream, const CollectiveCall& call) {
  // nccl-tests' message size, from the op table: the larger side of the collective.
  const int64_t bytes = costOfCommunication(call.kind, call.input, call.output).bytes;
  // Over mesh axes it spans this rank's group, whose places `to` and `from` count.
  const MeshGroup group = call.over == 0 ? MeshGroup{0, rank_, world_} : meshGroup(mesh_, call.over, rank_);
  const GroupPlacement placement = placementOf(call.over, group);
  // A sendrecv to and from this rank is a local copy: it moves nothing between ranks.
  const bool local = takesOperand(*collectiveOf(call.kind), "to") && call.to == group.index && call.from == group.index;
  std::optional<PricingAssumption> assumed;
  Result<double, std::string> transfer =
      local ? Result<double, std::string>(memorySeconds(profile_, bytesOf(call.input) + bytesOf(call.output)))
            : communicationSeconds(profile_, call.kind, bytes, group.size, &assumed, &placement);
  if (!transfer) fail(call.loc, transfer.error());
  if (assumed) work_.assumptions.insert(*assumed);
  // Views the communicator cannot take as they are are packed and unpacked around it, on its time.
  double seconds = *transfer;
  CollectivePlan plan = planCollective(call, static_cast<int>(group.size), shapeOnly);
  for (const auto* steps : {&plan.pack, &plan.unpack})
    for (const CopyStep& step : *steps) seconds += copySecondsOf(profile_, step.src, step.dst);
  // On the copy engines a communication holds no SM: it contends for memory bandwidth only.
  const WorkClass workClass = communicationClassOf(profile_.communicationCarrier);
  const double units =
      workClass == WorkClass::CopyEngineCommunication ? 0 : unitsOf(profile_.communicationUnits, profile_);
  WorkItem& item = issue(stream, WorkItem::Kind::Communication, seconds, units);
  item.workClass = workClass;
  item.bytes = bytes;
  item.over = call.over;
  item.group = group.color;
  item.groupSize = group.size;
  item.communication = laneCommunications_[call.over]++;
  ++work_.communications;
}

}  // namespace hostir
