#include "async_host_engine.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>

#include "comm/reduce.h"

namespace hostir::commtest {

namespace {

void work(const std::shared_ptr<AsyncHostStream::State>& state, uint32_t maxDelayMicros, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::unique_lock lock(state->mutex);
  for (;;) {
    state->changed.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    if (state->queue.empty()) return;  // stopping, with nothing left to run
    std::function<void()> task = std::move(state->queue.front());
    state->queue.pop_front();
    lock.unlock();
    if (maxDelayMicros) std::this_thread::sleep_for(std::chrono::microseconds(rng() % (maxDelayMicros + 1)));
    task();
    lock.lock();
    ++state->completed;
    state->changed.notify_all();
  }
}

}  // namespace

void AsyncHostStream::State::waitFor(uint64_t position) {
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return completed >= position; });
}

AsyncHostStream::AsyncHostStream(uint32_t maxDelayMicros, uint64_t seed)
    : worker_([state = state_, maxDelayMicros, seed] { work(state, maxDelayMicros, seed); }) {}

AsyncHostStream::~AsyncHostStream() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  worker_.join();
}

uint64_t AsyncHostStream::enqueue(std::function<void()> task) {
  std::lock_guard lock(state_->mutex);
  state_->queue.push_back(std::move(task));
  state_->changed.notify_all();
  return ++state_->issued;
}

uint64_t AsyncHostStream::issued() const {
  std::lock_guard lock(state_->mutex);
  return state_->issued;
}

namespace {

AsyncHostStream& streamOf(void* stream) { return *static_cast<AsyncHostStream*>(stream); }

}  // namespace

AsyncHostEngine::AsyncHostEngine(uint32_t maxDelayMicros, uint64_t seed)
    : stream_(std::make_unique<AsyncHostStream>(maxDelayMicros, seed)) {}

AsyncHostEngine::~AsyncHostEngine() { stream_->state()->waitFor(stream_->issued()); }

void AsyncHostEngine::synchronize(void* stream) { streamOf(stream).state()->waitFor(streamOf(stream).issued()); }

void* AsyncHostEngine::allocate(size_t bytes, void*) {
  void* data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!data && bytes > 0) throw std::bad_alloc();
  return data;
}

void AsyncHostEngine::release(void* data, void* stream) noexcept {
  try {
    streamOf(stream).enqueue([data] { std::free(data); });
  } catch (...) {
    std::abort();  // a test harness out of memory
  }
}

void AsyncHostEngine::copy(void* dst, int, const void* src, int, size_t bytes, void* stream) {
  streamOf(stream).enqueue([dst, src, bytes] { std::memcpy(dst, src, bytes); });
}

void AsyncHostEngine::reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) {
  streamOf(stream).enqueue([=] { reduceInto(acc, in, count, dtype, op); });
}

void AsyncHostEngine::scale(void* data, size_t count, DType dtype, double factor, void* stream) {
  streamOf(stream).enqueue([=] { scaleInPlace(data, count, dtype, factor); });
}

AsyncHostEngine::Fences& AsyncHostEngine::fences() {
  static Fences* all = new Fences;  // never destroyed: a late reader may come at exit
  return *all;
}

TransferEngine::Fence AsyncHostEngine::newFence() {
  Fences& all = fences();
  std::lock_guard lock(all.mutex);
  all.points.emplace_back();
  return reinterpret_cast<Fence>(&all.points.back());
}

void AsyncHostEngine::record(Fence fence, void* stream) {
  // Each fence is recorded once (the communicator takes new ones for every
  // call), so a wait that came before the record would read it while it is
  // written: ThreadSanitizer reports the missing order.
  *reinterpret_cast<FencePoint*>(fence) = FencePoint{streamOf(stream).state(), streamOf(stream).issued()};
}

void AsyncHostEngine::wait(void* stream, Fence fence) {
  if (!fence) return;
  const FencePoint point = *reinterpret_cast<const FencePoint*>(fence);
  // CUDA would wait for nothing: the fence's record is what was meant.
  if (!point.stream) throw std::logic_error("a wait for a fence that its rank has not recorded yet");
  streamOf(stream).enqueue([point] { point.stream->waitFor(point.position); });
}

}  // namespace hostir::commtest
