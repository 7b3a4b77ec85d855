#include "passes/list_schedule.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ir/cancellation.h"

namespace hostir {
namespace {

std::vector<std::vector<size_t>> successorsOf(const ScheduleProblem& problem) {
  std::vector<std::vector<size_t>> successors(problem.tasks.size());
  for (size_t t = 0; t < problem.tasks.size(); ++t)
    for (size_t p : problem.tasks[t].predecessors) successors.at(p).push_back(t);
  return successors;
}

}  // namespace

std::vector<double> upwardRanks(const ScheduleProblem& problem) {
  const size_t n = problem.tasks.size();
  std::vector<std::vector<size_t>> successors = successorsOf(problem);
  std::vector<double> rank(n, 0.0);
  std::vector<int> state(n, 0);  // 0 unvisited, 1 on the path, 2 done
  // Iterative depth-first search: graphs come from programs of any length.
  for (size_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [task, next] = stack.back();
      if (next < successors[task].size()) {
        size_t s = successors[task][next++];
        if (state[s] == 1) throw std::logic_error("listSchedule: the task graph has a cycle");
        if (state[s] == 0) {
          state[s] = 1;
          stack.emplace_back(s, 0);
        }
        continue;
      }
      double longest = 0;
      for (size_t s : successors[task]) longest = std::max(longest, problem.crossProcessorSeconds + rank[s]);
      rank[task] = problem.tasks[task].seconds + longest;
      state[task] = 2;
      stack.pop_back();
    }
  }
  return rank;
}

Schedule listSchedule(const ScheduleProblem& problem, SchedulePriority priority, const std::atomic<bool>* cancel) {
  const size_t n = problem.tasks.size();
  const std::vector<double> rank =
      priority == SchedulePriority::UpwardRank ? upwardRanks(problem) : std::vector<double>(n, 0.0);
  std::vector<std::vector<size_t>> successors = successorsOf(problem);
  std::vector<size_t> waitingFor(n);
  std::vector<size_t> ready;
  for (size_t t = 0; t < n; ++t) {
    waitingFor[t] = problem.tasks[t].predecessors.size();
    if (waitingFor[t] == 0) ready.push_back(t);
  }
  Schedule schedule;
  schedule.processor.assign(n, 0);
  schedule.start.assign(n, 0.0);
  schedule.finish.assign(n, 0.0);
  std::vector<double> processorFree(problem.processors.size(), 0.0);
  while (!ready.empty()) {
    throwIfCancelled(cancel);  // a task costs a scan of the ready ones and its predecessors
    // The ready task of highest priority; ties (and ProgramOrder) go to the earlier task.
    auto best = std::min_element(ready.begin(), ready.end(),
                                 [&](size_t a, size_t b) { return rank[a] != rank[b] ? rank[a] > rank[b] : a < b; });
    const size_t task = *best;
    ready.erase(best);
    const ScheduleTask& t = problem.tasks[task];
    double bestFinish = std::numeric_limits<double>::infinity();
    size_t bestProcessor = problem.processors.size();
    double bestStart = 0;
    for (size_t p = 0; p < problem.processors.size(); ++p) {
      if (problem.processors[p] != t.resourceClass) continue;
      double start = processorFree[p];
      for (size_t pred : t.predecessors) {
        double arrival = schedule.finish[pred] + (schedule.processor[pred] == p ? 0.0 : problem.crossProcessorSeconds);
        start = std::max(start, arrival);
      }
      if (start + t.seconds < bestFinish) {
        bestFinish = start + t.seconds;
        bestProcessor = p;
        bestStart = start;
      }
    }
    if (bestProcessor == problem.processors.size())
      throw std::logic_error("listSchedule: a task's class has no processor");
    schedule.processor[task] = bestProcessor;
    schedule.start[task] = bestStart;
    schedule.finish[task] = bestFinish;
    processorFree[bestProcessor] = bestFinish;
    schedule.makespan = std::max(schedule.makespan, bestFinish);
    schedule.order.push_back(task);
    for (size_t s : successors[task])
      if (--waitingFor[s] == 0) ready.push_back(s);
  }
  if (schedule.order.size() != n) throw std::logic_error("listSchedule: the task graph has a cycle");
  return schedule;
}

}  // namespace hostir
