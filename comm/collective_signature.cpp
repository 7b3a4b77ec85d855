#include "comm/collective_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "comm/sendrecv_peers.h"

namespace hostir {
namespace {

std::string_view kindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::Allreduce: return "allreduce";
    case CollectiveKind::Allgather: return "allgather";
    case CollectiveKind::ReduceScatter: return "reduceScatter";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "sendRecv";
    case CollectiveKind::Barrier: return "barrier";
  }
  return "?";
}

// Why the sendrecv signatures of one rendezvous do not pair up, or "".
std::string findSendRecvMismatch(std::span<const CollectiveSignature> signatures) {
  const int size = static_cast<int>(signatures.size());
  for (int r = 0; r < size; ++r) {
    const CollectiveSignature& p = signatures[static_cast<size_t>(r)];
    if (std::string error = sendRecvPeerError(r, size, p.to, p.from); !error.empty()) return error;
  }
  // When every rank's receiver receives from it, `to` is a permutation and
  // `from` its inverse, so checking each sender covers every receiver too.
  for (int r = 0; r < size; ++r) {
    const CollectiveSignature& p = signatures[static_cast<size_t>(r)];
    const CollectiveSignature& q = signatures[static_cast<size_t>(p.to)];
    if (q.from != r)
      return fmt::format("sendrecv mismatch: rank {} sends to rank {}, but rank {} receives from rank {}", r, p.to,
                         p.to, q.from);
    if (q.count != p.sendCount)
      return fmt::format(
          "sendrecv mismatch: rank {} sends {} elements to rank {}, but rank {} receives {} from rank {}", r,
          p.sendCount, p.to, p.to, q.count, r);
  }
  return "";
}

}  // namespace

bool reduces(CollectiveKind kind) { return kind == CollectiveKind::Allreduce || kind == CollectiveKind::ReduceScatter; }

std::string describe(const CollectiveSignature& p) {
  if (p.kind == CollectiveKind::Barrier) return "barrier()";
  if (p.kind == CollectiveKind::SendRecv)
    return fmt::format("sendRecv(sendCount={}, to={}, recvCount={}, from={}, {})", p.sendCount, p.to, p.count, p.from,
                       dtypeName(p.dtype));
  std::string extra;
  if (reduces(p.kind)) extra = fmt::format(", {}", reduceOpName(p.op));
  if (p.kind == CollectiveKind::Broadcast) extra = fmt::format(", root={}", p.root);
  return fmt::format("{}(count={}, {}{})", kindName(p.kind), p.count, dtypeName(p.dtype), extra);
}

std::string findMismatch(std::span<const CollectiveSignature> signatures) {
  const CollectiveSignature& first = signatures.front();
  for (size_t r = 1; r < signatures.size(); ++r) {
    const CollectiveSignature& p = signatures[r];
    // A sendrecv's counts differ from rank to rank; its pairs are checked below.
    const bool countsAgree = p.count == first.count || p.kind == CollectiveKind::SendRecv;
    bool same = p.kind == first.kind && countsAgree && p.dtype == first.dtype &&
                (!reduces(p.kind) || p.op == first.op) && (p.kind != CollectiveKind::Broadcast || p.root == first.root);
    if (!same)
      return fmt::format("collective mismatch: rank 0 called {} but rank {} called {}", describe(first), r,
                         describe(p));
  }
  if (first.kind == CollectiveKind::Broadcast && (first.root < 0 || first.root >= static_cast<int>(signatures.size())))
    return fmt::format("broadcast root {} is not a rank of this team of {}", first.root, signatures.size());
  if (first.kind == CollectiveKind::SendRecv) return findSendRecvMismatch(signatures);
  return "";
}

std::pair<size_t, size_t> partRange(size_t count, int part, int parts) {
  const size_t p = static_cast<size_t>(part);
  const size_t base = count / static_cast<size_t>(parts);
  const size_t extra = count % static_cast<size_t>(parts);
  const size_t begin = p * base + std::min(p, extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

}  // namespace hostir
