#include "executor/cpu/cpu_stream.h"

#include <chrono>

namespace hostir::cpu {

CpuStream::CpuStream(int slot, DelayInjection delays, std::function<bool()> skip,
                     std::function<void(std::exception_ptr)> onFailure)
    : slot_(slot),
      delays_(delays),
      skip_(std::move(skip)),
      onFailure_(std::move(onFailure)),
      rng_(delays.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(slot + 2)),
      worker_([this] { run(); }) {}

CpuStream::~CpuStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  workAvailable_.notify_all();
  worker_.join();
}

uint64_t CpuStream::enqueue(Task task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  workAvailable_.notify_one();
  return ++issued_;
}

void CpuStream::waitFor(uint64_t position) {
  std::unique_lock lock(mutex_);
  progress_.wait(lock, [&] { return completed_ >= position; });
}

bool CpuStream::reached(uint64_t position) {
  std::lock_guard lock(mutex_);
  return completed_ >= position;
}

void CpuStream::run() {
  while (true) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      workAvailable_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (delays_.maxMicros) {
      std::uniform_int_distribution<uint32_t> micros(0, delays_.maxMicros);
      std::this_thread::sleep_for(std::chrono::microseconds(micros(rng_)));
    }
    if (!skip_()) {
      try {
        task();
      } catch (...) {
        onFailure_(std::current_exception());
      }
    }
    task = nullptr;  // release the task's buffers before announcing progress
    {
      std::lock_guard lock(mutex_);
      ++completed_;
    }
    progress_.notify_all();
  }
}

}  // namespace hostir::cpu
