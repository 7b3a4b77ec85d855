// The checks every communicator makes of a sendrecv before it moves
// anything, with one wording: a peer outside the team, and a local copy
// (to and from the rank itself) whose two sizes differ.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <utility>

namespace hostir {

// "rank 1 called sendrecv to rank 5, but the team has 4 ranks", or "".
inline std::string sendRecvPeerError(int rank, int size, int to, int from) {
  for (auto [peer, direction] : {std::pair{to, "to"}, std::pair{from, "from"}})
    if (peer < 0 || peer >= size)
      return fmt::format("rank {} called sendrecv {} rank {}, but the team has {} ranks", rank, direction, peer, size);
  return "";
}

// The error of a sendrecv to and from `rank` itself whose sizes differ, or "".
inline std::string selfSendRecvError(int rank, int to, int from, size_t sendCount, size_t recvCount) {
  if (to != rank || from != rank || sendCount == recvCount) return "";
  return fmt::format("sendrecv mismatch: rank {} sends {} elements to itself but receives {}", rank, sendCount,
                     recvCount);
}

}  // namespace hostir
