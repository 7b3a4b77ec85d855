// List scheduling of a task graph onto typed processors, as HEFT does
// (Topcuoglu, Hariri and Wu, 2002) and as tensor_cast schedules operators
// onto streams: tasks are taken in priority order as they become ready, and
// each goes to the processor of its class where it would finish earliest.
// A processor runs its tasks in the order they were scheduled (a stream
// runs its work in issue order), so tasks are appended, never inserted
// into a gap. A dependence between tasks on different processors costs
// `crossProcessorSeconds` (an event's synchronization).
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace hostir {

struct ScheduleTask {
  double seconds = 0;                // its cost on any processor of its class
  int resourceClass = 0;             // the processors it may run on
  std::vector<size_t> predecessors;  // tasks that must finish before it starts
};

struct ScheduleProblem {
  std::vector<ScheduleTask> tasks;  // a DAG
  std::vector<int> processors;      // each processor's class
  double crossProcessorSeconds = 0;
};

enum class SchedulePriority {
  UpwardRank,    // HEFT: the longest path from the task to an exit, its own cost included
  ProgramOrder,  // the order the tasks are given in
};

struct Schedule {
  std::vector<size_t> processor;  // per task
  std::vector<double> start;      // per task
  std::vector<double> finish;     // per task
  std::vector<size_t> order;      // the tasks in the order they were scheduled (a topological order)
  double makespan = 0;
};

// Each task's upward rank: its cost plus the largest, over its successors,
// of the edge's cross-processor cost and the successor's upward rank.
std::vector<double> upwardRanks(const ScheduleProblem& problem);

// The schedule; every task's class must have a processor, and the graph
// must be acyclic (predecessors name other tasks). Throws Cancelled
// (ir/cancellation.h) once `cancel` is set, polled per task scheduled.
Schedule listSchedule(const ScheduleProblem& problem, SchedulePriority priority,
                      const std::atomic<bool>* cancel = nullptr);

}  // namespace hostir
