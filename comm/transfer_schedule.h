// What one rank of a copy-engine collective does, as data. Every rank
// pulls: it copies what it needs from its peers' buffers into its own and
// reduces locally, so every byte has one writer and reductions never read
// remote memory. The work comes in phases; after each phase every rank
// records a fence, and every rank's next work waits for its peers' fences
// of that phase, so a phase reads only what the peers finished writing in
// the phases before it. After the last phase each rank also waits for its
// peers' final fences: nobody reuses a buffer a peer may still be reading.
//
// Allreduce is a reduce-scatter of count / world parts followed by an
// allgather of the reduced parts (two phases); the other collectives take
// one phase. All-to-all is a pull of this rank's part from every peer. A
// sendrecv is a collective of the whole team: every rank pulls from its `from`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/collective_signature.h"

namespace hostir {

// A rank's buffers in a collective: its send and recv buffers as the caller
// gave them (or a staged copy of send), and scratch of the schedule's size.
enum class Region : uint8_t { Send, Recv, Scratch };

struct Place {
  int rank = 0;
  Region region = Region::Send;
  size_t offset = 0;  // elements
};

struct TransferStep {
  enum class Kind : uint8_t {
    Copy,    // dst = src; src may be a peer's buffer
    Reduce,  // dst = dst op src; both this rank's
    Scale,   // dst = dst * factor (avg divides the sum by the team size)
  };
  Kind kind = Kind::Copy;
  Place dst;  // always this rank's
  Place src;  // unused by Scale
  size_t count = 0;
  double factor = 1.0;  // Scale only
};

// The most phases a schedule has (allreduce's two).
constexpr size_t kMaxTransferPhases = 2;

struct TransferSchedule {
  size_t scratchElements = 0;
  std::vector<std::vector<TransferStep>> phases;
};

// The buffers' layout, after any overlap other than the collective's own
// in-place form has been staged away: `inPlace` is that form (allreduce:
// send == recv; allgather: send is block rank of recv; reduce-scatter: recv
// is block rank of send; broadcast is always in place), else they are disjoint.
// For all-to-all and sendrecv the buffers are always disjoint.
TransferSchedule scheduleTransfers(const CollectiveSignature& signature, int rank, int world, bool inPlace);

// Whether `send` and `recv` of rank `rank`'s call are its collective's own
// in-place layout (above), by the collective's shape rule; buffers that
// overlap any other way must be staged apart before the schedule runs.
bool inPlaceLayout(const CollectiveSignature& signature, int rank, const void* send, const void* recv);

}  // namespace hostir
