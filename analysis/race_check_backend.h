// A Backend that checks for stream races as the evaluator issues work: it
// feeds every access and every ordering edge to the happens-before analysis
// (analysis/race_analysis.h). Alone it does no work (the static check of
// `hostir check`); given a backend to forward to, it observes a real run
// (`hostir run --race-check`). On request it also tracks which elements have
// been written (analysis/initialization_analysis.h) and shows every
// communication to an observer (the cross-rank comparison).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/initialization_analysis.h"
#include "analysis/race_analysis.h"
#include "ir/cancellation.h"
#include "runtime/backend.h"

namespace hostir {

struct RaceCheckOptions {
  // Also find reads of elements that nothing has written.
  bool trackInitialization = false;
  // The rank the program is issued for: broadcast reads its tensor on the
  // root only. kEveryRank: the program is the same on every rank (it never
  // names `rank`), so this one issue stands for all of them, the root's
  // broadcast reads included.
  int64_t rank = 0;
  static constexpr int64_t kEveryRank = -1;
  // Set by another thread to stop the check: the next operation throws
  // Cancelled (ir/cancellation.h). Null: it cannot be cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

class RaceCheckBackend : public Backend {
 public:
  // `forward`: the backend that does the work, or null for a dry run.
  RaceCheckBackend(int64_t poolSize, Backend* forward = nullptr, RaceCheckOptions options = {});
  ~RaceCheckBackend() override;

  // A program input: ready before the program starts, so no access is recorded.
  TensorView input(DType dtype, const Dims& shape, const std::string& name);
  const RaceAnalysis& analysis() const { return *analysis_; }
  // With trackInitialization, else null.
  const InitializationAnalysis* initialization() const { return initialization_.get(); }
  // Whether every element of `view` has been written (with trackInitialization).
  Coverage coverage(const TensorView& view) const;
  // A part of `view` known to be unwritten (with trackInitialization).
  std::optional<UnwrittenRegion> unwritten(const TensorView& view) const { return coverage(view).unwritten; }
  // Called with every communication as it is issued.
  void observeCommunications(std::function<void(const CollectiveCall&)> observer) {
    communicationObserver_ = std::move(observer);
  }

  std::string_view name() const override { return "race-check"; }
  void beginOperation(const OperationInfo& info) override {
    // Every operation: one relaxed load, against a microsecond of analysis.
    throwIfCancelled(options_.cancel);
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
  void compute(Stream* stream, const KernelCall& call) override;
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override;
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void* host, const TensorView& dst) override;
  void download(const TensorView& src, void* host) override;

 private:
  struct CheckedStream;
  // What an operation does to the elements of a view, for the
  // initialization analysis (the race analysis only needs read or write).
  enum class Data { Untouched, Read, Written };

  CheckedStream* checked(Stream* stream) const;
  Stream* forwarded(Stream* stream) const;
  // One statement's accesses on `stream`: a new operation on the stream's
  // clock. Returns the number of races found so far.
  size_t issue(Stream* stream);
  // Whether to forward the checked operation; drains the forwarded backend
  // first when checking it found a race.
  bool readyToForward(size_t racesBefore);
  // `reader`: the rank a Data::Read is reported for.
  void touch(const TensorView& view, bool write, Data data, Stream* stream, bool wholeBuffer = false,
             int64_t reader = 0);
  void read(const TensorView& view, Stream* stream) { touch(view, false, Data::Read, stream, false, reportedRank()); }
  // The rank reads are reported for (rank 0 stands for every rank).
  int64_t reportedRank() const { return options_.rank == RaceCheckOptions::kEveryRank ? 0 : options_.rank; }
  void write(const TensorView& view, Stream* stream) { touch(view, true, Data::Written, stream); }
  // The accesses of the statement being issued on `stream`: the tensors and
  // effects beginOperation announced (OperationInfo::tensors, from the op
  // table), so every kernel and communication records them the same way. `root`: a broadcast's root, the one
  // rank that reads its tensor.
  void recordAccesses(Stream* stream, int64_t root = 0);
  size_t bufferId(const TensorView& view) const;
  // The whole buffer and the view as boxes of the buffer's index space (the
  // shape it was allocated with, for a view reshaped since).
  std::pair<Box, Box> boxes(const TensorView& view) const;
  // Drops the analyses' state of dry-run buffers that no view names any more.
  void forgetDeadBuffers();

  int64_t poolSize_;
  Backend* forward_;
  RaceCheckOptions options_;
  std::unique_ptr<RaceAnalysis> analysis_;
  std::unique_ptr<InitializationAnalysis> initialization_;
  std::function<void(const CollectiveCall&)> communicationObserver_;
  std::vector<std::unique_ptr<CheckedStream>> streams_;  // [0] main, [1 + slot] workers
  // A forwarded run's buffers stay alive for the run, so that a buffer's
  // identity (its address) is never reused mid-run. A dry run's buffers tell
  // this list when they die instead, and their state is dropped.
  std::vector<std::shared_ptr<Buffer>> keepAlive_;
  std::shared_ptr<std::vector<size_t>> deadBuffers_;
  std::unordered_map<size_t, std::string> inputNames_;
  // Each buffer's shape when it was made: reshape's views have other dims.
  std::unordered_map<size_t, Dims> baseShapes_;
  std::vector<std::shared_ptr<Buffer>> inputs_;
  std::vector<uint64_t> joined_;  // scratch: the recorded clock a wait joins
  OperationInfo current_{OpKind::Copy, {}, {}};
  bool running_ = false;
};

}  // namespace hostir
