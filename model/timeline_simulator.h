// Turns what each rank issued (rank_work.h) into a predicted timeline on
// virtual clocks. The rules (docs/cost-model.md):
//  * The host issues one statement per `issue` overhead (or its
//    operation's own, from the profile's issue_by_op); a piece of work can
//    start `launch` after its statement was issued.
//  * A stream is a lane: its work runs in issue order. A wait starts the
//    waiter's next work `sync` after the awaited work finished, plus
//    `wakeup` when the waiter had nothing else to do.
//  * Work holds compute units while it runs. IssueOrder ranks (CPU) start
//    work only on free units and in issue order; Concurrent ranks (GPU)
//    start it at once, communications take their units first and
//    computations share the rest, running slower by their share. With a
//    contention table, each class of work (gemm, memory, elementwise,
//    communication on the SMs or on the copy engines) also runs at the product of its rates beside the other
//    classes running on the rank (contentionRate), and a communication
//    moves data at the slowest of its ranks' rates.
//  * A rank runs its communications one at a time, in issue order: all of
//    them on a Concurrent rank (the CUDA backend chains them), per set of
//    mesh axes (WorkItem::over) on an IssueOrder rank (the CPU backend's
//    turns). A communication holds its units from when its rank reaches
//    it, and moves data once every rank of its group has reached it (the
//    ranks of a group match by their place among its communications over
//    its axes, as the communicators do).
// With one RankWork standing for every rank (SPMD symmetry: the program
// never names `rank`), a communication starts when that rank reaches it.
#pragma once

#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "model/machine_profile.h"
#include "model/rank_work.h"

namespace hostir {

// When one work item ran, in seconds from the run's start.
struct ItemTiming {
  double start = 0;
  double end = 0;
  double ready = 0;  // when its stream reached it (before waiting for units or peers)
};

struct RankTimeline {
  std::vector<ItemTiming> items;  // parallel to RankWork::items
  std::vector<double> issueEnd;   // per statement: when the host had issued it
  double hostEnd = 0;             // when the host issued its last statement
  double end = 0;                 // when the rank's last work finished (or the host, if later)
};

struct Timeline {
  std::vector<RankTimeline> ranks;  // parallel to the RankWork given
  double end = 0;                   // the run's predicted time: the latest rank's end
};

// `ranks`: every rank's work, or one standing for all (symmetric).
// Errors: a communication that some rank never reaches (the ranks issue
// different communications), or work that can never start.
Result<Timeline, std::string> simulateTimeline(const std::vector<RankWork>& ranks, const MachineProfile& profile);

}  // namespace hostir
