// A reusable barrier for the ranks of an in-process team that can be
// aborted: the rendezvous every in-process collective is built from.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace hostir {

class TeamBarrier {
 public:
  explicit TeamBarrier(int parties);

  // Runs once, under the barrier's lock, when the last party arrives; a
  // non-empty result aborts the team with that reason instead of releasing it.
  using ArrivalCheck = std::function<std::string()>;

  // Waits until every party has arrived. Throws CommError if the team is (or
  // becomes, before everyone arrives) aborted. Once everyone has arrived the
  // generation is complete and every party returns, even if an abort follows.
  void arriveAndWait(const ArrivalCheck& check = nullptr);

  // Waits until every party has arrived, ignoring aborts while it waits:
  // parties past arriveAndWait may still be touching each other's buffers,
  // and no one may return (and free them) before they are done. Every party
  // that called arriveAndWait reaches this without blocking, so it cannot
  // hang. Throws CommError afterwards if the team was aborted.
  void arriveAndWaitForAll();

  // Wakes every waiter of arriveAndWait and waitUntil; that and every later
  // call throws CommError with `reason`. The first reason wins.
  void abort(const std::string& reason);

  // The reason of the abort, or nullopt while the team is whole.
  std::optional<std::string> abortReason();

  // For parties that signal each other one-sidedly instead of meeting (the
  // copy-engine communicator's phases): waits, without arriving, until
  // ready() holds. It spins briefly, then yields, then sleeps until a
  // signal() or an abort. Throws CommError if the team is (or becomes)
  // aborted while ready() does not hold. ready() must read only atomics
  // (seq_cst) that a party changes (seq_cst) before it calls signal().
  void waitUntil(const std::function<bool()>& ready);
  // Wakes the parties asleep in waitUntil to check ready() again; costs a
  // load when none sleeps.
  void signal();

 private:
  void abortLocked(const std::string& reason);
  void releaseLocked();
  [[noreturn]] void throwAbortedLocked() const;

  std::mutex mutex_;
  std::condition_variable released_;
  const int parties_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::optional<std::string> abortReason_;
  // For waitUntil: whether abortReason_ is set, read without the lock, and
  // how many parties sleep on signalled_.
  std::atomic<bool> aborted_{false};
  std::atomic<int> sleepers_{0};
  std::condition_variable signalled_;
};

}  // namespace hostir
