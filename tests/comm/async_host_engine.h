// A stand-in for a GPU's TransferEngine in host memory, with the GPU's
// timing: each stream is a worker thread that runs its queue in order, so
// a call's work completes after the call returns, and a fence is a position
// in a stream that another stream's work can wait for. A random sleep
// before every task (up to maxDelayMicros) widens the windows in which a
// missing fence would let a copy read data not yet written, or overwrite
// data a peer still reads: the copy-engine communicator's tests run its
// schedule on this engine and check every element.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "comm/transfer_engine.h"

namespace hostir::commtest {

class AsyncHostStream {
 public:
  // What a fence waits on: it outlives the stream, as a CUDA stream's wait
  // for an event outlives the event's owner.
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::function<void()>> queue;  // guarded by mutex
    uint64_t issued = 0;                      // guarded by mutex
    uint64_t completed = 0;                   // guarded by mutex
    bool stopping = false;                    // guarded by mutex
    // Blocks until everything up to `position` has run.
    void waitFor(uint64_t position);
  };

  AsyncHostStream(uint32_t maxDelayMicros, uint64_t seed);
  ~AsyncHostStream();
  AsyncHostStream(const AsyncHostStream&) = delete;
  AsyncHostStream& operator=(const AsyncHostStream&) = delete;

  // Queues a task; returns the position after it.
  uint64_t enqueue(std::function<void()> task);
  uint64_t issued() const;
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread worker_;
};

class AsyncHostEngine final : public TransferEngine {
 public:
  explicit AsyncHostEngine(uint32_t maxDelayMicros = 20, uint64_t seed = 1);
  ~AsyncHostEngine() override;

  bool asynchronous() const override { return true; }
  int device() const override { return 0; }
  void* defaultStream() override { return stream_.get(); }
  void synchronize(void* stream) override;
  void* allocate(size_t bytes, void* stream) override;
  void release(void* data, void* stream) noexcept override;
  void copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) override;
  void reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) override;
  void scale(void* data, size_t count, DType dtype, double factor, void* stream) override;
  Fence newFence() override;
  void record(Fence fence, void* stream) override;
  void wait(void* stream, Fence fence) override;

 private:
  // Without a stream, not recorded yet: a wait for it fails (the
  // communicator let a peer's stream wait before the record, which CUDA
  // would take as a wait for nothing).
  struct FencePoint {
    std::shared_ptr<AsyncHostStream::State> stream;
    uint64_t position = 0;
  };
  // Every engine's fences, for the whole process: a fence is a pointer to
  // one (a deque keeps addresses), and it must outlive its engine. On a
  // failed team a rank's communicator ends at once (its barrier answers
  // at once), while a peer may still read the fence it posted.
  struct Fences {
    std::mutex mutex;
    std::deque<FencePoint> points;  // guarded by mutex
  };
  static Fences& fences();

  std::unique_ptr<AsyncHostStream> stream_;
};

}  // namespace hostir::commtest
