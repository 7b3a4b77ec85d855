#include "runtime/collective_plan.h"

namespace hostir {
namespace {

// Whether the rank slices of `t` along `axis` are consecutive blocks of
// memory in rank order, as the communicators lay them out.
bool rankSlicesAreBlocks(const TensorView& t, int64_t axis) {
  if (!t.isContiguous()) return false;
  for (int64_t d = 0; d < axis; ++d)
    if (t.shape[static_cast<size_t>(d)] != 1) return false;
  return true;
}

// Rank r's block of a contiguous [world * count] temporary, shaped like `like`.
TensorView block(const TensorView& whole, int64_t r, const TensorView& like) {
  TensorView v = TensorView::contiguous(whole.buffer, whole.dtype, like.shape);
  v.offset = whole.offset + r * like.numel();
  return v;
}

struct Planner {
  const CollectiveCall& call;
  int64_t world;
  const AllocateTemporary& allocate;
  CollectivePlan& plan;

  TensorView temporary(const Dims& shape) {
    plan.temporaries.push_back(allocate(call.input.dtype, shape));
    return plan.temporaries.back();
  }
  TensorView slice(const TensorView& t, int64_t r) const { return t.chunk(static_cast<size_t>(call.axis), r, world); }

  // A contiguous copy of `t` (packed before the call), or `t` itself.
  TensorView contiguousInput(const TensorView& t) {
    if (t.isContiguous()) return t;
    TensorView packed = temporary(t.shape);
    plan.pack.push_back({t, packed});
    return packed;
  }
  // Where the call writes `t` (unpacked after it): `t` itself when contiguous.
  TensorView contiguousOutput(const TensorView& t) {
    if (t.isContiguous()) return t;
    TensorView staged = temporary(t.shape);
    plan.unpack.push_back({staged, t});
    return staged;
  }
  // `t`'s rank slices along the axis as consecutive blocks (packed before the call).
  TensorView blocksInput(const TensorView& t) {
    if (rankSlicesAreBlocks(t, call.axis)) return t;
    TensorView packed = temporary(Dims{t.numel()});
    for (int64_t r = 0; r < world; ++r) plan.pack.push_back({slice(t, r), block(packed, r, slice(t, r))});
    return packed;
  }
  // Where the call writes `t`'s rank slices as consecutive blocks (unpacked after it).
  TensorView blocksOutput(const TensorView& t) {
    if (rankSlicesAreBlocks(t, call.axis)) return t;
    TensorView staged = temporary(Dims{t.numel()});
    for (int64_t r = 0; r < world; ++r) plan.unpack.push_back({block(staged, r, slice(t, r)), slice(t, r)});
    return staged;
  }

  // allreduce (in place or not) and broadcast (always in place).
  void sameShape(bool mayReadInput) {
    const TensorView& in = call.input;
    const TensorView& out = call.output;
    if (in.isContiguous() && out.isContiguous()) {
      plan.send = in;
      plan.recv = out;
    } else if (out.isContiguous()) {
      plan.pack.push_back({in, out});  // then work in place in the output
      plan.send = plan.recv = out;
    } else {
      TensorView staging = temporary(out.shape);
      if (in.isContiguous() && mayReadInput) {
        plan.send = in;
      } else {
        plan.pack.push_back({in, staging});
        plan.send = staging;
      }
      plan.recv = staging;
      plan.unpack.push_back({staging, out});
    }
  }
};

}  // namespace

void CollectivePlan::communicate(Communicator& comm, void* nativeStream) const {
  comm.collective(CollectiveArgs{signature, send.data(), recv.data()}, nativeStream);
}

CollectiveSignature collectiveSignature(const CollectiveCall& call) {
  std::optional<CollectiveKind> kind = collectiveOf(call.kind);
  if (!kind) throw CommError("not a communication");
  CollectiveSignature s;
  s.kind = *kind;
  s.dtype = call.input.dtype;
  s.sendCount = static_cast<size_t>(call.input.numel());
  s.recvCount = static_cast<size_t>(call.output.numel());
  s.op = call.op;
  s.axis = call.axis;
  s.root = static_cast<int>(call.root);
  s.to = static_cast<int>(call.to);
  s.from = static_cast<int>(call.from);
  return normalized(s);
}

CollectivePlan planCollective(const CollectiveCall& call, int world, const AllocateTemporary& allocate) {
  CollectivePlan plan;
  plan.signature = collectiveSignature(call);
  Planner p{call, world, allocate, plan};
  switch (collectiveInfo(plan.signature.kind).shape) {
    case CollectiveShape::Same: p.sameShape(true); break;
    case CollectiveShape::InPlace: p.sameShape(false); break;
    case CollectiveShape::Gathered:
      plan.send = p.contiguousInput(call.input);
      plan.recv = p.blocksOutput(call.output);
      break;
    case CollectiveShape::Scattered:
      plan.send = p.blocksInput(call.input);
      plan.recv = p.contiguousOutput(call.output);
      break;
    case CollectiveShape::Exchanged:
      plan.send = p.blocksInput(call.input);
      plan.recv = p.blocksOutput(call.output);
      break;
    case CollectiveShape::PerPeer:
      // Send and receive sizes may differ (uneven ring blocks). The
      // communicator allows overlap of send and recv, so contiguous views
      // go straight through even when they alias.
      plan.send = p.contiguousInput(call.input);
      plan.recv = p.contiguousOutput(call.output);
      break;
  }
  return plan;
}

}  // namespace hostir
