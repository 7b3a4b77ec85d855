#include "comm/collective_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "comm/sendrecv_peers.h"

namespace hostir {
namespace {

std::string elements(size_t count, DType dtype) { return fmt::format("{} {} elements", count, dtypeName(dtype)); }

}  // namespace

CollectiveSignature normalized(CollectiveSignature s) {
  const CollectiveSignature defaults;
  if (!collectiveInfo(s.kind).reduces) s.op = defaults.op;
  if (!takesOperand(s.kind, "axis")) s.axis = defaults.axis;
  if (!takesOperand(s.kind, "root")) s.root = defaults.root;
  if (!takesOperand(s.kind, "to")) s.to = defaults.to;
  if (!takesOperand(s.kind, "from")) s.from = defaults.from;
  return s;
}

bool agreeAcrossRanks(const CollectiveSignature& a, const CollectiveSignature& b) {
  if (a.kind == CollectiveKind::SendRecv && b.kind == CollectiveKind::SendRecv) return true;
  return a == b;
}

std::string describe(const CollectiveSignature& s, const CollectiveSignature* other) {
  std::string text = fmt::format("{} of {}", collectiveName(s.kind), elements(s.sendCount, s.dtype));
  if (takesOperand(s.kind, "root")) text += fmt::format(" from root {}", s.root);
  if (takesOperand(s.kind, "to")) {
    // Its other fields are not compared across ranks: it pairs instead.
    return text + fmt::format(" to rank {}, receiving {} from rank {}", s.to, s.recvCount, s.from);
  }
  if (!other) return text;
  // What is received follows from what is sent, unless another `out` was given.
  const bool sameInput = s.sendCount == other->sendCount && s.dtype == other->dtype;
  if (sameInput && s.recvCount != other->recvCount) text += fmt::format(" into {}", elements(s.recvCount, s.dtype));
  if (s.op != other->op) text += fmt::format(" with op={}", reduceOpName(s.op));
  if (s.axis != other->axis) text += fmt::format(" along axis {}", s.axis);
  return text;
}

std::string signatureError(const CollectiveSignature& s, int world) {
  const CollectiveShape shape = collectiveInfo(s.kind).shape;
  const std::string_view name = collectiveName(s.kind);
  if (!acceptsDType(s.kind, s.dtype))
    return fmt::format("{} cannot reduce {} elements: they hold indices, which only move", name, dtypeName(s.dtype));
  if (shape == CollectiveShape::PerPeer || world < 1) return "";
  // The buffers are blocks along the axis: their counts follow the shape rule as extents do.
  std::optional<int64_t> expected = outputExtent(shape, static_cast<int64_t>(s.sendCount), world);
  if (!expected && shape == CollectiveShape::Gathered)
    return fmt::format("{} of {} over {} ranks receives more elements than a count holds", name,
                       elements(s.sendCount, s.dtype), world);
  if (!expected)
    return fmt::format("{} of {} over {} ranks: {} elements do not split into {} equal parts", name,
                       elements(s.sendCount, s.dtype), world, s.sendCount, world);
  if (static_cast<size_t>(*expected) != s.recvCount)
    return fmt::format("{} of {} over {} ranks receives {} elements, not {}", name, elements(s.sendCount, s.dtype),
                       world, *expected, s.recvCount);
  return "";
}

std::optional<SendRecvPairError> findUnpairedSendRecv(std::span<const CollectiveSignature> perRank) {
  // When every rank's receiver receives from it, `to` is a permutation and
  // `from` its inverse, so checking each sender covers every receiver too.
  for (size_t r = 0; r < perRank.size(); ++r) {
    const CollectiveSignature& p = perRank[r];
    if (p.to < 0 || static_cast<size_t>(p.to) >= perRank.size()) continue;  // the peer checks refuse it first
    const CollectiveSignature& q = perRank[static_cast<size_t>(p.to)];
    const bool fromHere = q.from == static_cast<int>(r);
    if (fromHere && q.recvCount == p.sendCount && q.dtype == p.dtype) continue;
    SendRecvPairError error{static_cast<int>(r), p.to,
                            fmt::format("rank {} sends {} to rank {}", r, elements(p.sendCount, p.dtype), p.to), ""};
    error.receives = fromHere ? fmt::format("rank {} receives {} from rank {}", p.to, elements(q.recvCount, q.dtype), r)
                              : fmt::format("rank {} receives from rank {}", p.to, q.from);
    return error;
  }
  return std::nullopt;
}

std::string describe(const Rendezvous& call) { return call ? describe(*call) : "barrier"; }

std::string findMismatch(std::span<const Rendezvous> perRank) {
  const Rendezvous& first = perRank.front();
  const int size = static_cast<int>(perRank.size());
  for (size_t r = 1; r < perRank.size(); ++r) {
    const Rendezvous& p = perRank[r];
    const bool same = first && p ? agreeAcrossRanks(*first, *p) : first.has_value() == p.has_value();
    if (!same)
      return fmt::format("collective mismatch: rank 0 called {} but rank {} called {}",
                         first && p ? describe(*first, &*p) : describe(first), r,
                         first && p ? describe(*p, &*first) : describe(p));
  }
  if (!first) return "";
  if (takesOperand(first->kind, "root") && (first->root < 0 || first->root >= size))
    return fmt::format("{} root {} is not a rank of this team of {}", collectiveName(first->kind), first->root, size);
  if (std::string error = signatureError(*first, size); !error.empty()) return error;
  if (collectiveInfo(first->kind).shape != CollectiveShape::PerPeer) return "";
  std::vector<CollectiveSignature> sendRecvs;
  for (int r = 0; r < size; ++r) {
    const CollectiveSignature& p = *perRank[static_cast<size_t>(r)];
    if (std::string error = sendRecvPeerError(r, size, p.to, p.from); !error.empty()) return error;
    sendRecvs.push_back(p);
  }
  if (std::optional<SendRecvPairError> e = findUnpairedSendRecv(sendRecvs))
    return fmt::format("sendrecv mismatch: {}, but {}", e->sends, e->receives);
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
