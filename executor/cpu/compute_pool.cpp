#include "executor/cpu/compute_pool.h"

namespace hostir::cpu {

ComputePool::ComputePool(int threads) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ComputePool::~ComputePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  jobsChanged_.notify_all();
  for (auto& t : workers_) t.join();
}

std::optional<ComputePool::Span> ComputePool::run(uint64_t ticket, const std::function<void()>& job) {
  if (workers_.empty()) {
    Span span;
    span.start = Clock::now();
    job();
    span.end = Clock::now();
    return span;
  }
  Job entry;
  entry.body = &job;
  std::unique_lock lock(mutex_);
  if (aborted_) return std::nullopt;
  waiting_.emplace(ticket, &entry);
  jobsChanged_.notify_all();
  jobDone_.wait(lock, [&] { return entry.done || (aborted_ && waiting_.count(ticket)); });
  if (!entry.done) {
    waiting_.erase(ticket);  // aborted before it started
    return std::nullopt;
  }
  if (entry.error) std::rethrow_exception(entry.error);
  return entry.span;
}

void ComputePool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    jobsChanged_.wait(lock, [&] { return stopping_ || (!aborted_ && waiting_.count(nextStart_)); });
    if (stopping_) return;
    auto it = waiting_.find(nextStart_);
    Job* job = it->second;
    waiting_.erase(it);
    ++nextStart_;
    lock.unlock();
    jobsChanged_.notify_all();  // the next ticket may start on another thread
    job->span.start = Clock::now();
    try {
      (*job->body)();
    } catch (...) {
      job->error = std::current_exception();
    }
    job->span.end = Clock::now();
    lock.lock();
    job->done = true;
    jobDone_.notify_all();
  }
}

void ComputePool::abort() {
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  jobDone_.notify_all();
  jobsChanged_.notify_all();
}

void ComputePool::reset() {
  std::lock_guard lock(mutex_);
  aborted_ = false;
  nextStart_ = 0;
  issued_ = 0;
}

}  // namespace hostir::cpu
