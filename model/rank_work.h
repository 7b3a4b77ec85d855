// What one rank issued, as the timeline simulator needs it: every piece of
// work in issue order, with its stream, what it costs alone on the
// profiled machine, and what orders it after work on other streams.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ops.h"
#include "model/cost_model.h"
#include "model/machine_profile.h"

namespace hostir {

struct WorkItem {
  enum class Kind : uint8_t {
    Compute,        // a GEMM or elementwise kernel
    Memory,         // a copy or a zero fill
    Communication,  // starts when every rank has reached it
    Wait,           // the stream waits for `after` (wait_event, synchronize, wait)
  };
  Kind kind = Kind::Compute;
  OpKind op = OpKind::Copy;  // the statement that issued it
  SourceLoc loc;
  int stream = 0;          // 0: the main stream; 1 + k: worker stream slot k
  uint32_t statement = 0;  // the host statement that issued it, counted from 0
  double seconds = 0;      // alone on the rank, at its full units
  double units = 0;        // the compute units it holds while it runs
  // Its contention class (Compute items: by the cost rule that priced it,
  // workClassOf; never Gemm unless a GEMM priced it). Waits have none.
  WorkClass workClass = WorkClass::Elementwise;
  int64_t bytes = 0;  // touched or moved (for traces)
  double flops = 0;
  // Wait: the first `count` items of stream `afterStream` must have finished.
  int afterStream = 0;
  uint64_t afterCount = 0;
  // Communication: the mesh axes it spans (0: the team), which of their
  // groups holds this rank (its color, ir/mesh.h) and how many ranks it has
  // (0: the team), and its place among the rank's communications over the
  // same axes. The ranks of one group match by that place.
  uint32_t over = 0;
  int64_t group = 0;
  int64_t groupSize = 0;
  int64_t communication = -1;
};

// A statement the host issued, for the host's track of a predicted trace.
struct IssuedStatement {
  OpKind op = OpKind::Copy;
  SourceLoc loc;
};

struct RankWork {
  std::vector<WorkItem> items;          // in issue order
  uint32_t statements = 0;              // statements the host issued
  std::vector<IssuedStatement> issued;  // each of them, in order
  int streams = 1;                      // the main stream and the worker pool
  int64_t communications = 0;
  // What pricing this work assumed where the profile had no figure.
  std::set<PricingAssumption> assumptions;
};

}  // namespace hostir
