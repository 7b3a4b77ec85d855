// One rank's call of a collective without its buffers: the one signature
// type of a collective, from the program check through the communicators.
// The program check compares ranks' signatures
// (analysis/communication_sequence), `run --unchecked` exchanges them
// before each communication (executor/communication_match_backend), the
// collective plan hands them with the buffers to every communicator
// (CollectiveArgs, comm/communicator.h), and the communicators that match
// their ranks' calls themselves (in-process, copy engines) check them at
// each rendezvous. Descriptions and mismatches are worded here, so they
// read the same wherever a mismatch is found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "ir/collectives.h"
#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

struct CollectiveSignature {
  CollectiveKind kind = CollectiveKind::Allreduce;
  DType dtype = DType::F32;
  size_t sendCount = 0;         // elements of this rank's input (broadcast: of its one buffer)
  size_t recvCount = 0;         // elements of this rank's output
  ReduceOp op = ReduceOp::Sum;  // kinds that reduce
  int64_t axis = 0;             // kinds that split their tensors into blocks along an axis
  int root = 0;                 // broadcast
  int to = 0, from = 0;         // sendrecv: sendCount elements go to `to`, recvCount come from `from`
  friend bool operator==(const CollectiveSignature&, const CollectiveSignature&) = default;
};

// `s` with the fields its kind does not take (by its op table row) at their
// defaults, so that two calls of one collective compare equal.
CollectiveSignature normalized(CollectiveSignature s);

// Whether two ranks' calls at one position are one collective: the whole
// signature, except that two sendrecvs agree by kind alone (their sizes and
// peers differ from rank to rank; they must pair instead).
bool agreeAcrossRanks(const CollectiveSignature& a, const CollectiveSignature& b);

// "allreduce of 64 f32 elements"; broadcast names its root, sendrecv its
// peers and what it receives. `other`, the call it is compared with, adds
// the fields that tell the two apart ("into 128 f32 elements", "with
// op=max", "along axis 1").
std::string describe(const CollectiveSignature& s, const CollectiveSignature* other = nullptr);

// Why a call cannot be its collective on a team of `world`, or "": a
// reducing collective refuses i32 (indices only move); the shape rule
// relates what it receives to what it sends (allgather receives world times
// as much), and all_to_all's parts must be equal.
std::string signatureError(const CollectiveSignature& s, int world);

// A sendrecv that does not pair with its receiver's, among one position's
// calls (one per rank, every one a sendrecv with its peers in the team):
// "rank 1 sends 8 f32 elements to rank 2" and "rank 2 receives 5 f32
// elements from rank 1" (or "rank 2 receives from rank 0").
struct SendRecvPairError {
  int sender = 0, receiver = 0;
  std::string sends, receives;
};
std::optional<SendRecvPairError> findUnpairedSendRecv(std::span<const CollectiveSignature> perRank);

// What one rank brings to a rendezvous of its team: a collective, or a
// barrier (nullopt), which moves nothing.
using Rendezvous = std::optional<CollectiveSignature>;
std::string describe(const Rendezvous& call);

// Why the calls of one rendezvous (one per rank, in rank order) do not form
// one collective, or "": a different call, a broadcast root outside the
// team, counts its shape rule refuses, or sendrecv pairs that do not match.
std::string findMismatch(std::span<const Rendezvous> perRank);

// Elements [begin, end) of part `part` when `count` elements are split into
// `parts` parts whose sizes differ by at most one.
std::pair<size_t, size_t> partRange(size_t count, int part, int parts);

}  // namespace hostir
