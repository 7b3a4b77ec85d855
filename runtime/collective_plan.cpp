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

}  // namespace

void CollectivePlan::communicate(Communicator& comm, void* nativeStream) const {
  switch (kind) {
    case OpKind::Allreduce: comm.allreduce(send.data(), recv.data(), count, send.dtype, op, nativeStream); break;
    case OpKind::Allgather: comm.allgather(send.data(), recv.data(), count, send.dtype, nativeStream); break;
    case OpKind::ReduceScatter:
      comm.reduceScatter(send.data(), recv.data(), count, send.dtype, op, nativeStream);
      break;
    case OpKind::Broadcast: comm.broadcast(recv.data(), count, recv.dtype, root, nativeStream); break;
    case OpKind::SendRecv:
      comm.sendRecv(send.data(), sendCount, to, recv.data(), count, from, send.dtype, nativeStream);
      break;
    default: throw CommError("not a communication");
  }
}

CollectivePlan planCollective(const CollectiveCall& call, int world, const AllocateTemporary& allocate) {
  CollectivePlan plan;
  plan.kind = call.kind;
  plan.op = call.op;
  plan.root = static_cast<int>(call.root);
  plan.to = static_cast<int>(call.to);
  plan.from = static_cast<int>(call.from);
  auto temporary = [&](const Dims& shape) {
    plan.temporaries.push_back(allocate(call.input.dtype, shape));
    return plan.temporaries.back();
  };
  const TensorView& in = call.input;
  const TensorView& out = call.output;
  switch (call.kind) {
    case OpKind::Allreduce:
    case OpKind::Broadcast: {
      // Broadcast is in place (out is in); allreduce may be either.
      plan.count = static_cast<size_t>(in.numel());
      if (in.isContiguous() && out.isContiguous()) {
        plan.send = in;
        plan.recv = out;
      } else if (out.isContiguous()) {
        plan.pack.push_back({in, out});  // then work in place in the output
        plan.send = plan.recv = out;
      } else {
        TensorView staging = temporary(out.shape);
        if (in.isContiguous() && call.kind == OpKind::Allreduce) {
          plan.send = in;
        } else {
          plan.pack.push_back({in, staging});
          plan.send = staging;
        }
        plan.recv = staging;
        plan.unpack.push_back({staging, out});
      }
      break;
    }
    case OpKind::Allgather: {
      plan.count = static_cast<size_t>(in.numel());
      plan.send = in.isContiguous() ? in : temporary(in.shape);
      if (!in.isContiguous()) plan.pack.push_back({in, plan.send});
      if (rankSlicesAreBlocks(out, call.axis)) {
        plan.recv = out;
      } else {
        plan.recv = temporary(Dims{world * in.numel()});
        for (int64_t r = 0; r < world; ++r)
          plan.unpack.push_back({block(plan.recv, r, in), out.chunk(static_cast<size_t>(call.axis), r, world)});
      }
      break;
    }
    case OpKind::ReduceScatter: {
      plan.count = static_cast<size_t>(out.numel());
      if (rankSlicesAreBlocks(in, call.axis)) {
        plan.send = in;
      } else {
        plan.send = temporary(Dims{world * out.numel()});
        for (int64_t r = 0; r < world; ++r)
          plan.pack.push_back({in.chunk(static_cast<size_t>(call.axis), r, world), block(plan.send, r, out)});
      }
      plan.recv = out.isContiguous() ? out : temporary(out.shape);
      if (!out.isContiguous()) plan.unpack.push_back({plan.recv, out});
      break;
    }
    case OpKind::SendRecv: {
      // Send and receive sizes may differ (uneven ring blocks). The
      // communicator allows overlap of send and recv, so contiguous views
      // go straight through even when they alias.
      plan.sendCount = static_cast<size_t>(in.numel());
      plan.count = static_cast<size_t>(out.numel());
      plan.send = in.isContiguous() ? in : temporary(in.shape);
      if (!in.isContiguous()) plan.pack.push_back({in, plan.send});
      plan.recv = out.isContiguous() ? out : temporary(out.shape);
      if (!out.isContiguous()) plan.unpack.push_back({plan.recv, out});
      break;
    }
    default: throw CommError("not a communication");
  }
  return plan;
}

}  // namespace hostir
