// A Backend that checks for stream races as the evaluator issues work: it
// feeds every access and every ordering edge to the happens-before analysis
// (passes/race_analysis.h). Alone it does no work (the static check of
// `hostir check`); given a backend to forward to, it observes a real run
// (`hostir run --race-check`).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/backend.h"
#include "passes/race_analysis.h"

namespace hostir {

class RaceCheckBackend : public Backend {
 public:
  // `forward`: the backend that does the work, or null for a dry run.
  RaceCheckBackend(int64_t poolSize, Backend* forward = nullptr);
  ~RaceCheckBackend() override;

  // A program input: ready before the program starts, so no access is recorded.
  TensorView input(DType dtype, const Dims& shape, const std::string& name);
  const RaceAnalysis& analysis() const { return *analysis_; }

  std::string_view name() const override { return "race-check"; }
  void beginOperation(const OperationInfo& info) override {
    current_ = info;
    if (forward_) forward_->beginOperation(info);
  }
  void beginRun() override;
  Stream* mainStream() override;
  Stream* workerStream(int64_t number) override;
  Event recordEvent(Stream* stream) override;
  void waitEvent(Stream* waiter, const Event& event) override;
  void synchronizeHost() override;
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override;
  void deallocate(const TensorView& tensor, Stream* stream) override;
  void linear(Stream* stream, const TensorView& x, const TensorView& w, const TensorView* bias,
              const TensorView& out) override;
  void matmul(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) override;
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override;
  void add(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) override;
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void* host, const TensorView& dst) override;
  void download(const TensorView& src, void* host) override;

 private:
  struct CheckedStream;
  CheckedStream* checked(Stream* stream) const;
  Stream* forwarded(Stream* stream) const;
  // One statement's accesses on `stream`: a new operation on the stream's
  // clock. Returns the number of races found so far.
  size_t issue(Stream* stream);
  // Whether to forward the checked operation; drains the forwarded backend
  // first when checking it found a race.
  bool readyToForward(size_t racesBefore);
  void touch(const TensorView& view, bool write, Stream* stream, bool wholeBuffer = false);
  size_t bufferId(const TensorView& view);

  int64_t poolSize_;
  Backend* forward_;
  std::unique_ptr<RaceAnalysis> analysis_;
  std::vector<std::unique_ptr<CheckedStream>> streams_;  // [0] main, [1 + slot] workers
  std::vector<std::shared_ptr<Buffer>> keepAlive_;       // buffer identity must not be reused mid-run
  std::unordered_map<size_t, std::string> inputNames_;
  std::vector<std::shared_ptr<Buffer>> inputs_;
  OperationInfo current_{OpKind::Copy, {}, {}};
  bool running_ = false;
};

}  // namespace hostir
