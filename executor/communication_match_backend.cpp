#include "executor/communication_match_backend.h"

#include <fmt/format.h>

#include <array>
#include <vector>

namespace hostir {
namespace {

// A signature as f64 values (exact: every field is far below 2^53). The
// fields up to kCompared must agree (for two sendrecvs only Kind and
// Sequence, then they must pair); the position only explains.
enum Field { Kind, Dtype, InputCount, OutputCount, Op, Axis, Root, To, From, Sequence, Line, Col, kFields };
constexpr size_t kCompared = Sequence + 1;
constexpr double kEndOfRun = -1;  // Kind of the marker that ends a run

using Signature = std::array<double, kFields>;

Signature signatureOf(const CollectiveCall* call, uint64_t sequence) {
  Signature s{};
  s[Sequence] = static_cast<double>(sequence);
  if (!call) {
    s[Kind] = kEndOfRun;
    return s;
  }
  s[Kind] = static_cast<double>(call->kind);
  s[Dtype] = static_cast<double>(call->input.dtype);
  s[InputCount] = static_cast<double>(call->input.numel());
  s[OutputCount] = static_cast<double>(call->output.numel());
  s[Op] = call->kind == OpKind::Allreduce || call->kind == OpKind::ReduceScatter ? static_cast<double>(call->op) : 0;
  s[Axis] =
      call->kind == OpKind::Allgather || call->kind == OpKind::ReduceScatter ? static_cast<double>(call->axis) : 0;
  s[Root] = call->kind == OpKind::Broadcast ? static_cast<double>(call->root) : 0;
  s[To] = call->kind == OpKind::SendRecv ? static_cast<double>(call->to) : 0;
  s[From] = call->kind == OpKind::SendRecv ? static_cast<double>(call->from) : 0;
  s[Line] = call->loc.line;
  s[Col] = call->loc.col;
  return s;
}

std::string describe(const Signature& s) {
  if (s[Kind] == kEndOfRun) return fmt::format("ends the run after {} communication(s)", s[Sequence]);
  auto kind = static_cast<OpKind>(static_cast<int>(s[Kind]));
  std::string what = fmt::format("{} of {} {} element(s)", signatureOf(kind).name, s[InputCount],
                                 dtypeName(static_cast<DType>(static_cast<int>(s[Dtype]))));
  if (kind == OpKind::Allgather || kind == OpKind::ReduceScatter)
    what += fmt::format(" into {} along axis {}", s[OutputCount], s[Axis]);
  if (kind == OpKind::Allreduce || kind == OpKind::ReduceScatter)
    what += fmt::format(" with op={}", reduceOpName(static_cast<ReduceOp>(static_cast<int>(s[Op]))));
  if (kind == OpKind::Broadcast) what += fmt::format(" from root {}", s[Root]);
  if (kind == OpKind::SendRecv)
    what += fmt::format(" to rank {}, receiving {} from rank {}", s[To], s[OutputCount], s[From]);
  if (s[Line] > 0) what += fmt::format(" at {}:{}", s[Line], s[Col]);
  return "issues " + what;
}

}  // namespace

CommunicationMatchBackend::CommunicationMatchBackend(Backend& forward, Communicator& signatures)
    : ForwardingBackend(forward), signatures_(signatures) {}

void CommunicationMatchBackend::beginRun() {
  issued_ = 0;
  forward_.beginRun();
}

void CommunicationMatchBackend::collective(Stream* stream, const CollectiveCall& call) {
  agree(&call);
  forward_.collective(stream, call);
}

void CommunicationMatchBackend::synchronizeHost() {
  // A rank that issued fewer communications meets the others' next one here.
  agree(nullptr);
  forward_.synchronizeHost();
}

void CommunicationMatchBackend::agree(const CollectiveCall* call) {
  const Signature mine = signatureOf(call, issued_);
  const size_t world = static_cast<size_t>(signatures_.size());
  std::vector<double> all(kFields * world);
  signatures_.allgather(mine.data(), all.data(), kFields, DType::F64);
  auto field = [&](size_t rank, size_t f) { return all[rank * kFields + f]; };
  auto sendRecv = [&](size_t rank) { return field(rank, Kind) == static_cast<double>(OpKind::SendRecv); };
  auto at = [&](size_t rank) {
    return field(rank, Line) > 0 ? fmt::format(" at {}:{}", field(rank, Line), field(rank, Col)) : std::string();
  };
  for (size_t r = 1; r < world; ++r) {
    bool same = true;
    if (sendRecv(0) && sendRecv(r))
      same = field(r, Sequence) == field(0, Sequence);
    else
      for (size_t f = 0; f < kCompared; ++f) same &= field(r, f) == field(0, f);
    if (same) continue;
    Signature first{}, other{};
    for (size_t f = 0; f < kFields; ++f) {
      first[f] = field(0, f);
      other[f] = field(r, f);
    }
    throw DiagnosticError{Diagnostic{
        call ? call->loc : SourceLoc{},
        fmt::format("communication #{} does not match across ranks: rank 0 {}, but rank {} {}; every rank must issue "
                    "the same communications in the same order",
                    issued_ + 1, describe(first), r, describe(other))}};
  }
  // Every rank issues a sendrecv here: each must pair with its peer's.
  for (size_t r = 0; r < world && sendRecv(0); ++r) {
    const double to = field(r, To);
    if (to < 0 || to >= static_cast<double>(world)) continue;  // the evaluator refuses it before it is issued
    const size_t q = static_cast<size_t>(to);
    auto dtype = [&](size_t rank) { return dtypeName(static_cast<DType>(static_cast<int>(field(rank, Dtype)))); };
    std::string sends =
        fmt::format("rank {} sends {} {} element(s) to rank {}{}", r, field(r, InputCount), dtype(r), q, at(r));
    std::string instead;
    if (field(q, From) != static_cast<double>(r))
      instead = fmt::format("rank {} receives from rank {}{}", q, field(q, From), at(q));
    else if (field(q, OutputCount) != field(r, InputCount) || field(q, Dtype) != field(r, Dtype))
      instead =
          fmt::format("rank {} receives {} {} element(s) from rank {}{}", q, field(q, OutputCount), dtype(q), r, at(q));
    if (instead.empty()) continue;
    throw DiagnosticError{Diagnostic{
        call ? call->loc : SourceLoc{},
        fmt::format("communication #{} does not pair across ranks: {}, but {}; a sendrecv to rank q must meet q's "
                    "sendrecv from this rank with the same dtype and element count",
                    issued_ + 1, sends, instead)}};
  }
  ++issued_;
}

}  // namespace hostir
