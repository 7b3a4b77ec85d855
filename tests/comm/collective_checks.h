// Checks any Communicator's collectives against a naive reference. Inputs
// are functions of (rank, index), so each rank computes the expected result
// on its own, whatever the transport: the same checks run on in-process
// teams and under mpirun.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"

namespace hostir::commtest {

enum class Collective { Allreduce, Allgather, ReduceScatter, AllToAll, Broadcast };

// How a case lays out its buffers.
enum class Layout {
  OutOfPlace,   // separate send and recv
  InPlace,      // the interface's in-place layout
  Overlapping,  // send and recv overlap some other way
};

inline constexpr Collective kCollectives[] = {Collective::Allreduce, Collective::Allgather, Collective::ReduceScatter,
                                              Collective::AllToAll, Collective::Broadcast};
// The collectives that move elements without reducing them: they take i32 (indices) too.
inline constexpr Collective kMovingCollectives[] = {Collective::Allgather, Collective::AllToAll, Collective::Broadcast};
inline constexpr DType kDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16};
inline constexpr ReduceOp kReduceOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg};
// Zero, and counts that no team size from 2 to 4 divides.
inline constexpr size_t kCounts[] = {0, 1, 7, 1000, 4099};

std::string_view collectiveName(Collective collective);

struct CollectiveCase {
  Collective collective = Collective::Allreduce;
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;  // allreduce and reduce-scatter
  size_t count = 0;             // per rank: allgather's send, reduce-scatter's recv; all-to-all's part
  Layout layout = Layout::OutOfPlace;
  int root = 0;  // broadcast
};

std::string describe(const CollectiveCase& c);

// Every op, count and layout (every root, for broadcast) of one collective
// and dtype; none for a collective that reduces and i32, which it refuses.
std::vector<CollectiveCase> casesFor(Collective collective, DType dtype, int teamSize,
                                     std::span<const size_t> counts = kCounts);

// Runs `c` on `comm` and checks this rank's buffers. Returns "" or what is
// wrong. It always makes the call, so ranks stay matched when a check fails;
// it lets the communicator's exceptions through.
std::string runAndCheck(Communicator& comm, const CollectiveCase& c);

// sendrecv: every rank r sends to (r + shift) mod n and receives from
// (r - shift) mod n, so shift 0 is a local copy, 1 the ring and n - 1 the
// reverse ring.
enum class SendRecvLayout {
  Separate,        // send and recv apart
  Same,            // send == recv
  RecvInsideSend,  // recv starts inside send
  SendInsideRecv,  // send starts inside recv
};

inline constexpr SendRecvLayout kSendRecvLayouts[] = {SendRecvLayout::Separate, SendRecvLayout::Same,
                                                      SendRecvLayout::RecvInsideSend, SendRecvLayout::SendInsideRecv};

struct SendRecvCase {
  DType dtype = DType::F32;
  size_t count = 0;            // elements every rank sends, or see perRankCounts
  bool perRankCounts = false;  // rank r sends count + r elements (its receiver receives as many)
  int shift = 1;
  SendRecvLayout layout = SendRecvLayout::Separate;
};

std::string describe(const SendRecvCase& c);

// Every count, count rule and layout with shifts 0, 1, 2, 3 and the reverse
// ring (mod teamSize, without repeats).
std::vector<SendRecvCase> sendRecvCases(DType dtype, int teamSize, std::span<const size_t> counts = kCounts);

// Runs `c` on `comm` and checks every element of this rank's buffers: recv
// holds what its sender sent, and nothing else changed. Returns "" or what
// is wrong; like runAndCheck it always makes the call.
std::string runAndCheck(Communicator& comm, const SendRecvCase& c);

// The value of element `index` of `rank`'s input: exactly representable in
// every dtype, and chosen so that sums (small multiples of 1/4) and products
// (of powers of two) over up to 4 ranks stay exact in every dtype, whatever
// the reduction order.
double inputValue(int rank, size_t index, ReduceOp op);

// `value` rounded to `dtype` and back.
double roundThrough(DType dtype, double value);

// Element `index` of a buffer of `dtype`, as a double, and the reverse (an
// i32 element holds 4 times the value, so that multiples of 1/4 stay exact).
double loadElement(DType dtype, const void* buffer, size_t index);
void storeElement(DType dtype, void* buffer, size_t index, double value);

}  // namespace hostir::commtest
