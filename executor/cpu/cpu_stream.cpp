#include "executor/cpu/cpu_stream.h"

#include <fmt/format.h>

#include <chrono>

#include "ir/thread_start.h"

namespace hostir::cpu {

CpuStream::CpuStream(int slot, DelayInjection delays, std::function<bool()> skip,
                     std::function<void(std::exception_ptr)> onFailure)
    : slot_(slot), delays_(delays), skip_(std::move(skip)), onFailure_(std::move(onFailure)) {}

CpuStream::~CpuStream() {
  if (!worker_.joinable()) return;  // never used: no thread, nothing queued
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  workAvailable_.notify_all();
  worker_.join();
}

uint64_t CpuStream::enqueue(Task task) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
    // A worker that is awake takes this task when it next looks at the
    // queue; waking one that is not asleep would be a wasted system call.
    wake = workerAsleep_;
    workerAsleep_ = false;
  }
  if (wake) workAvailable_.notify_one();
  // Started after the task is queued, so the worker finds it without a wake-up.
  if (!worker_.joinable()) {
    try {
      worker_ = startThread(
          slot_ < 0 ? std::string("the main stream's thread") : fmt::format("the thread of stream({})", slot_),
          [this] { run(); });
    } catch (...) {
      // No worker will ever take the task: it was not issued.
      std::lock_guard lock(mutex_);
      queue_.pop_back();
      throw;
    }
  }
  return ++issued_;
}

void CpuStream::waitFor(uint64_t position) {
  if (reached(position)) return;
  std::unique_lock lock(mutex_);
  while (true) {
    // seq_cst pairs with announceCompleted: either this check sees the new
    // count or the worker sees this position and notifies under the lock.
    if (position < wakeAt_.load(std::memory_order_relaxed)) wakeAt_.store(position, std::memory_order_seq_cst);
    if (completed_.load(std::memory_order_seq_cst) >= position) return;
    progress_.wait(lock);  // woken waiters whose position is still ahead lower wakeAt_ again
  }
}

void CpuStream::announceCompleted(uint64_t completed) {
  completed_.store(completed, std::memory_order_seq_cst);
  if (completed < wakeAt_.load(std::memory_order_seq_cst)) return;
  {
    std::lock_guard lock(mutex_);  // a waiter between its check and its wait must not miss this
    wakeAt_.store(std::numeric_limits<uint64_t>::max(), std::memory_order_relaxed);
  }
  progress_.notify_all();
}

void CpuStream::takeQueued(std::vector<Task>& batch) {
  std::unique_lock lock(mutex_);
  while (queue_.empty() && !stopping_) {
    workerAsleep_ = true;
    workAvailable_.wait(lock);
  }
  workerAsleep_ = false;
  batch.swap(queue_);  // the host refills the emptied batch's storage, so no reallocation in steady state
}

void CpuStream::run() {
  // The worker's own: a stream that never runs never seeds one.
  std::mt19937_64 rng(delays_.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(slot_ + 2));
  std::vector<Task> batch;
  uint64_t completed = 0;
  while (true) {
    takeQueued(batch);
    if (batch.empty()) return;  // stopping and drained
    for (Task& task : batch) {
      if (delays_.maxMicros) {
        std::uniform_int_distribution<uint32_t> micros(0, delays_.maxMicros);
        std::this_thread::sleep_for(std::chrono::microseconds(micros(rng)));
      }
      if (!skip_()) {
        try {
          task();
        } catch (...) {
          onFailure_(std::current_exception());
        }
      }
      task = nullptr;  // release the task's buffers before announcing progress
      announceCompleted(++completed);
    }
    batch.clear();
  }
}

}  // namespace hostir::cpu
