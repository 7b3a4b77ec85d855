// The backend `hostir simulate` runs the evaluator against: it does no work
// and holds no memory, it records what one rank issues (each piece of work
// with its stream, its cost on the profiled machine and the waits that
// order it) for the timeline simulator (timeline_simulator.h). The program
// is interpreted by the same evaluator as `hostir run`, so anything `run`
// accepts can be simulated.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "ir/mesh.h"
#include "model/cost_model.h"
#include "model/machine_profile.h"
#include "model/rank_work.h"
#include "runtime/backend.h"

namespace hostir {

class SimulationBackend : public Backend {
 public:
  // `world`: the team size communications are priced for; `poolSize`: the
  // worker streams (--streams).
  SimulationBackend(const MachineProfile& profile, int64_t rank, int64_t world, int64_t poolSize);
  ~SimulationBackend() override;

  // A program input: ready before the program starts.
  TensorView input(DType dtype, const Dims& shape);
  // What the last run issued.
  const RankWork& work() const { return work_; }

  std::string_view name() const override { return "simulation"; }
  void beginOperation(const OperationInfo& info) override;
  void useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>&) override { mesh_ = extents; }
  void beginRun() override;
  Stream* mainStream() override;
  Stream* workerStream(int64_t number) override;
  Event recordEvent(Stream* stream) override;
  void waitEvent(Stream* waiter, const Event& event) override;
  void synchronizeHost() override {}
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override;
  void deallocate(const TensorView&, Stream*) override {}
  void compute(Stream* stream, const KernelCall& call) override;
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override;
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void*, const TensorView&) override {}
  void download(const TensorView&, void*) override {}

 private:
  struct SimulatedStream;
  SimulatedStream* simulated(Stream* stream) const;
  // Where the ranks of this rank's group over `over` sit on the profile's nodes.
  GroupPlacement placementOf(uint32_t over, const MeshGroup& group) const;
  // Appends the current statement's piece of work to `stream`.
  WorkItem& issue(Stream* stream, WorkItem::Kind kind, double seconds, double units);

  const MachineProfile& profile_;
  int64_t rank_, world_;
  std::map<uint32_t, int64_t> laneCommunications_;  // per set of mesh axes: communications over them so far
  std::vector<int64_t> mesh_;  // the program's mesh extents: a communication `over` some of its axes spans a group
  std::vector<std::unique_ptr<SimulatedStream>> streams_;  // [0] main, [1 + slot] workers
  RankWork work_;
  OperationInfo current_{OpKind::Copy, {}, {}};
};

}  // namespace hostir
