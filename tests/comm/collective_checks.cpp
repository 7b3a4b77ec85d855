#include "collective_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "fmt/format.h"
#include "ir/half.h"

namespace hostir::commtest {

namespace {

// What recv holds before the call, to catch elements left unwritten.
constexpr double kUnwritten = -77.0;

// Twice the spacing of `dtype` at 1: the error allowed where rounding can differ.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::F32: return 0x1p-22;
    case DType::F64: return 0x1p-51;
    case DType::F16: return 0x1p-9;
    case DType::BF16: return 0x1p-6;
    case DType::I32: return 0;
  }
  return 0;
}

std::string_view layoutName(Layout layout) {
  switch (layout) {
    case Layout::OutOfPlace: return "out-of-place";
    case Layout::InPlace: return "in-place";
    case Layout::Overlapping: return "overlapping";
  }
  return "?";
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return a + b;
    case ReduceOp::Prod: return a * b;
    case ReduceOp::Min: return std::min(a, b);
    case ReduceOp::Max: return std::max(a, b);
  }
  return 0;
}

// The reference: element `index` of every rank's input, reduced in double.
double expectedReduction(int teamSize, size_t index, ReduceOp op, DType dtype) {
  double acc = inputValue(0, index, op);
  for (int r = 1; r < teamSize; ++r) acc = combine(op, acc, inputValue(r, index, op));
  if (op == ReduceOp::Avg) acc /= teamSize;
  return roundThrough(dtype, acc);
}

// A zeroed buffer of `count` elements, aligned for every dtype.
class Buffer {
 public:
  Buffer(DType dtype, size_t count) : dtype_(dtype), words_((count * dtypeSize(dtype) + 7) / 8 + 1) {}
  std::byte* element(size_t index) { return reinterpret_cast<std::byte*>(words_.data()) + index * dtypeSize(dtype_); }
  double get(size_t index) const { return loadElement(dtype_, words_.data(), index); }
  void set(size_t index, double value) { storeElement(dtype_, words_.data(), index, value); }

 private:
  DType dtype_;
  std::vector<double> words_;
};

// Compares elements [0, count) of `buffer`, starting at `first`, with
// want(i); returns the first difference.
std::string compare(const Buffer& buffer, size_t first, size_t count, const std::function<double(size_t)>& want,
                    bool exact, DType dtype, std::string_view what) {
  for (size_t i = 0; i < count; ++i) {
    const double got = buffer.get(first + i);
    const double expected = want(i);
    const bool ok =
        exact ? got == expected : std::abs(got - expected) <= tolerance(dtype) * std::max(std::abs(expected), 1e-3);
    if (!ok) return fmt::format("{}[{}] = {}, expected {}", what, i, got, expected);
  }
  return "";
}

std::string checkAllreduce(Communicator& comm, const CollectiveCase& c) {
  const size_t n = c.count;
  const int rank = comm.rank();
  // Overlapping: recv starts `shift` elements into send.
  const size_t shift = c.layout == Layout::Overlapping ? std::max<size_t>(1, n / 2) : 0;
  Buffer send(c.dtype, n + shift);
  Buffer separateRecv(c.dtype, c.layout == Layout::OutOfPlace ? n : 0);
  for (size_t i = 0; i < n; ++i) send.set(i, inputValue(rank, i, c.op));
  for (size_t i = 0; i < n && c.layout == Layout::OutOfPlace; ++i) separateRecv.set(i, kUnwritten);

  Buffer& recv = c.layout == Layout::OutOfPlace ? separateRecv : send;
  const size_t recvFirst = shift;
  comm.allreduce(send.element(0), recv.element(recvFirst), n, c.dtype, c.op);

  auto want = [&](size_t i) { return expectedReduction(comm.size(), i, c.op, c.dtype); };
  std::string problem = compare(recv, recvFirst, n, want, c.op != ReduceOp::Avg, c.dtype, "recv");
  if (problem.empty() && c.layout == Layout::OutOfPlace)
    problem = compare(
        send, 0, n, [&](size_t i) { return roundThrough(c.dtype, inputValue(rank, i, c.op)); }, true, c.dtype,
        "send (must stay unchanged)");
  return problem;
}

std::string checkAllgather(Communicator& comm, const CollectiveCase& c) {
  const size_t n = c.count;
  const int rank = comm.rank();
  const size_t total = n * static_cast<size_t>(comm.size());
  Buffer recv(c.dtype, total);
  Buffer separateSend(c.dtype, n);
  for (size_t i = 0; i < total; ++i) recv.set(i, kUnwritten);

  // In place, this rank's input is its own block of recv; overlapping, it
  // is the first block of recv (which is in place on rank 0 only).
  const size_t ownFirst = c.layout == Layout::InPlace ? rank * n : 0;
  Buffer& send = c.layout == Layout::OutOfPlace ? separateSend : recv;
  for (size_t i = 0; i < n; ++i) send.set(ownFirst + i, inputValue(rank, i, ReduceOp::Sum));
  comm.allgather(send.element(ownFirst), recv.element(0), n, c.dtype);

  auto want = [&](size_t i) {
    return roundThrough(c.dtype, inputValue(static_cast<int>(i / n), i % n, ReduceOp::Sum));
  };
  std::string problem = compare(recv, 0, total, want, true, c.dtype, "recv");
  if (problem.empty() && c.layout == Layout::OutOfPlace)
    problem = compare(
        send, 0, n, [&](size_t i) { return roundThrough(c.dtype, inputValue(rank, i, ReduceOp::Sum)); }, true, c.dtype,
        "send (must stay unchanged)");
  return problem;
}

std::string checkReduceScatter(Communicator& comm, const CollectiveCase& c) {
  const size_t n = c.count;
  const int rank = comm.rank();
  const size_t total = n * static_cast<size_t>(comm.size());
  Buffer send(c.dtype, total);
  Buffer separateRecv(c.dtype, n);
  for (size_t i = 0; i < total; ++i) send.set(i, inputValue(rank, i, c.op));
  for (size_t i = 0; i < n; ++i) separateRecv.set(i, kUnwritten);

  // In place, recv is this rank's block of send; overlapping, it is the
  // start of send (MPI's in-place layout).
  const size_t recvFirst = c.layout == Layout::InPlace ? rank * n : 0;
  Buffer& recv = c.layout == Layout::OutOfPlace ? separateRecv : send;
  comm.reduceScatter(send.element(0), recv.element(recvFirst), n, c.dtype, c.op);

  auto want = [&](size_t i) { return expectedReduction(comm.size(), rank * n + i, c.op, c.dtype); };
  std::string problem = compare(recv, recvFirst, n, want, c.op != ReduceOp::Avg, c.dtype, "recv");
  // Out of place, send stays as it was; in place, so do the other blocks.
  if (problem.empty() && c.layout != Layout::Overlapping)
    for (size_t i = 0; i < total && problem.empty(); ++i) {
      if (c.layout == Layout::InPlace && i / n == static_cast<size_t>(rank)) continue;
      const double got = send.get(i);
      const double expected = roundThrough(c.dtype, inputValue(rank, i, c.op));
      if (got != expected) problem = fmt::format("send[{}] = {}, expected {} (must stay unchanged)", i, got, expected);
    }
  return problem;
}

// Rank r's send is `size` parts of c.count elements; its part q goes to
// rank q, whose recv holds it as its part r.
std::string checkAllToAll(Communicator& comm, const CollectiveCase& c) {
  const size_t n = c.count;
  const int rank = comm.rank();
  const size_t total = n * static_cast<size_t>(comm.size());
  // Overlapping: recv starts `shift` elements into send's buffer.
  const size_t shift = c.layout == Layout::Overlapping ? std::max<size_t>(1, total / 2) : 0;
  Buffer send(c.dtype, total + shift);
  Buffer separateRecv(c.dtype, c.layout == Layout::OutOfPlace ? total : 0);
  for (size_t i = 0; i < total; ++i) send.set(i, inputValue(rank, i, ReduceOp::Sum));
  for (size_t i = 0; i < total && c.layout == Layout::OutOfPlace; ++i) separateRecv.set(i, kUnwritten);

  Buffer& recv = c.layout == Layout::OutOfPlace ? separateRecv : send;
  comm.allToAll(send.element(0), recv.element(shift), n, c.dtype);

  auto want = [&](size_t i) {
    const int from = static_cast<int>(i / std::max<size_t>(n, 1));
    return roundThrough(c.dtype,
                        inputValue(from, static_cast<size_t>(rank) * n + i % std::max<size_t>(n, 1), ReduceOp::Sum));
  };
  std::string problem = compare(recv, shift, total, want, true, c.dtype, "recv");
  if (problem.empty() && c.layout == Layout::OutOfPlace)
    problem = compare(
        send, 0, total, [&](size_t i) { return roundThrough(c.dtype, inputValue(rank, i, ReduceOp::Sum)); }, true,
        c.dtype, "send (must stay unchanged)");
  return problem;
}

std::string checkBroadcast(Communicator& comm, const CollectiveCase& c) {
  Buffer buffer(c.dtype, c.count);
  for (size_t i = 0; i < c.count; ++i) buffer.set(i, inputValue(comm.rank(), i, ReduceOp::Sum));
  comm.broadcast(buffer.element(0), c.count, c.dtype, c.root);
  return compare(
      buffer, 0, c.count, [&](size_t i) { return roundThrough(c.dtype, inputValue(c.root, i, ReduceOp::Sum)); }, true,
      c.dtype, "buffer");
}

std::string_view sendRecvLayoutName(SendRecvLayout layout) {
  switch (layout) {
    case SendRecvLayout::Separate: return "separate";
    case SendRecvLayout::Same: return "send==recv";
    case SendRecvLayout::RecvInsideSend: return "recv-inside-send";
    case SendRecvLayout::SendInsideRecv: return "send-inside-recv";
  }
  return "?";
}

int modulo(int a, int n) { return ((a % n) + n) % n; }

size_t sendCountOf(const SendRecvCase& c, int rank) {
  return c.count + (c.perRankCounts ? static_cast<size_t>(rank) : 0);
}

std::string checkSendRecv(Communicator& comm, const SendRecvCase& c) {
  const int rank = comm.rank();
  const int to = modulo(rank + c.shift, comm.size());
  const int from = modulo(rank - c.shift, comm.size());
  const size_t sendCount = sendCountOf(c, rank);
  const size_t recvCount = sendCountOf(c, from);

  // Where send and recv start in `shared`, which always holds recv (and one
  // element past it, which must stay unwritten) and, unless separate, send.
  const bool separate = c.layout == SendRecvLayout::Separate;
  size_t sendAt = 0, recvAt = 0;
  if (c.layout == SendRecvLayout::RecvInsideSend) recvAt = std::max<size_t>(1, sendCount / 2);
  if (c.layout == SendRecvLayout::SendInsideRecv) sendAt = std::max<size_t>(1, recvCount / 2);
  const size_t sharedCount = std::max(recvAt + recvCount + 1, separate ? 0 : sendAt + sendCount);
  Buffer shared(c.dtype, sharedCount);
  Buffer separateSend(c.dtype, separate ? sendCount : 0);
  Buffer& send = separate ? separateSend : shared;
  for (size_t i = 0; i < sharedCount; ++i) shared.set(i, kUnwritten);
  for (size_t i = 0; i < sendCount; ++i) send.set(sendAt + i, inputValue(rank, i, ReduceOp::Sum));
  std::vector<double> sharedBefore(sharedCount);
  for (size_t i = 0; i < sharedCount; ++i) sharedBefore[i] = shared.get(i);

  comm.sendRecv(send.element(sendAt), sendCount, to, shared.element(recvAt), recvCount, from, c.dtype);

  std::string problem = compare(
      shared, recvAt, recvCount, [&](size_t i) { return roundThrough(c.dtype, inputValue(from, i, ReduceOp::Sum)); },
      true, c.dtype, fmt::format("recv (from rank {})", from));
  for (size_t i = 0; i < sharedCount && problem.empty(); ++i)
    if ((i < recvAt || i >= recvAt + recvCount) && shared.get(i) != sharedBefore[i])
      problem = fmt::format("element {} of the buffer, outside recv [{}, {}), = {}, expected {} (must stay unchanged)",
                            i, recvAt, recvAt + recvCount, shared.get(i), sharedBefore[i]);
  if (problem.empty() && separate)
    problem = compare(
        send, 0, sendCount, [&](size_t i) { return roundThrough(c.dtype, inputValue(rank, i, ReduceOp::Sum)); }, true,
        c.dtype, "send (must stay unchanged)");
  if (problem.empty()) return "";
  return fmt::format("sends {} to rank {}, receives {} from rank {}: {}", sendCount, to, recvCount, from, problem);
}

}  // namespace

std::string_view collectiveName(Collective collective) {
  switch (collective) {
    case Collective::Allreduce: return "allreduce";
    case Collective::Allgather: return "allgather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::Broadcast: return "broadcast";
  }
  return "?";
}

std::string describe(const CollectiveCase& c) {
  std::string text = fmt::format("{} {} count={}", collectiveName(c.collective), dtypeName(c.dtype), c.count);
  if (c.collective == Collective::Allreduce || c.collective == Collective::ReduceScatter)
    text += fmt::format(" op={}", reduceOpName(c.op));
  if (c.collective == Collective::Broadcast)
    text += fmt::format(" root={}", c.root);
  else
    text += fmt::format(" {}", layoutName(c.layout));
  return text;
}

std::vector<CollectiveCase> casesFor(Collective collective, DType dtype, int teamSize, std::span<const size_t> counts) {
  std::vector<CollectiveCase> cases;
  constexpr Layout kLayouts[] = {Layout::OutOfPlace, Layout::InPlace, Layout::Overlapping};
  for (size_t count : counts) {
    switch (collective) {
      case Collective::Allreduce:
      case Collective::ReduceScatter:
        if (dtype == DType::I32) return {};
        for (ReduceOp op : kReduceOps)
          for (Layout layout : kLayouts) cases.push_back({collective, dtype, op, count, layout, 0});
        break;
      case Collective::Allgather:
      case Collective::AllToAll:
        for (Layout layout : kLayouts) cases.push_back({collective, dtype, ReduceOp::Sum, count, layout, 0});
        break;
      case Collective::Broadcast:
        for (int root = 0; root < teamSize; ++root)
          cases.push_back({collective, dtype, ReduceOp::Sum, count, Layout::InPlace, root});
        break;
    }
  }
  return cases;
}

std::string runAndCheck(Communicator& comm, const CollectiveCase& c) {
  std::string problem;
  switch (c.collective) {
    case Collective::Allreduce: problem = checkAllreduce(comm, c); break;
    case Collective::Allgather: problem = checkAllgather(comm, c); break;
    case Collective::ReduceScatter: problem = checkReduceScatter(comm, c); break;
    case Collective::AllToAll: problem = checkAllToAll(comm, c); break;
    case Collective::Broadcast: problem = checkBroadcast(comm, c); break;
  }
  if (problem.empty()) return "";
  return fmt::format("rank {} of {}, {}: {}", comm.rank(), comm.size(), describe(c), problem);
}

std::string describe(const SendRecvCase& c) {
  return fmt::format("sendrecv {} count={}{} shift={} {}", dtypeName(c.dtype), c.count, c.perRankCounts ? "+rank" : "",
                     c.shift, sendRecvLayoutName(c.layout));
}

std::vector<SendRecvCase> sendRecvCases(DType dtype, int teamSize, std::span<const size_t> counts) {
  std::vector<int> shifts;
  for (int shift : {0, 1, 2, 3, teamSize - 1})
    if (std::find(shifts.begin(), shifts.end(), shift % teamSize) == shifts.end()) shifts.push_back(shift % teamSize);
  std::vector<SendRecvCase> cases;
  for (size_t count : counts)
    for (bool perRankCounts : {false, true})
      for (int shift : shifts)
        for (SendRecvLayout layout : kSendRecvLayouts) cases.push_back({dtype, count, perRankCounts, shift, layout});
  return cases;
}

std::string runAndCheck(Communicator& comm, const SendRecvCase& c) {
  std::string problem = checkSendRecv(comm, c);
  if (problem.empty()) return "";
  return fmt::format("rank {} of {}, {}: {}", comm.rank(), comm.size(), describe(c), problem);
}

double inputValue(int rank, size_t index, ReduceOp op) {
  const size_t mix = static_cast<size_t>(rank) * 131 + index * 31 + index / 7;
  if (op == ReduceOp::Prod) {
    // Powers of two (and a rare zero): products over 4 ranks stay exact.
    static constexpr double kFactors[] = {0.5, -1, 2, 1, -0.5, -2, 1, 0.5, -1, 2, 1, -2, 0.5, 1, -1, 0};
    return kFactors[mix % 16];
  }
  // Multiples of 1/4 in [-4, 4]: sums over 4 ranks need at most 7 bits.
  return (static_cast<double>(mix % 33) - 16.0) * 0.25;
}

double roundThrough(DType dtype, double value) {
  double word = 0;
  storeElement(dtype, &word, 0, value);
  return loadElement(dtype, &word, 0);
}

double loadElement(DType dtype, const void* buffer, size_t index) {
  const auto* bytes = static_cast<const std::byte*>(buffer) + index * dtypeSize(dtype);
  switch (dtype) {
    case DType::F32: {
      float v;
      std::memcpy(&v, bytes, sizeof v);
      return v;
    }
    case DType::F64: {
      double v;
      std::memcpy(&v, bytes, sizeof v);
      return v;
    }
    case DType::F16: {
      Half v;
      std::memcpy(&v.bits, bytes, sizeof v.bits);
      return toFloat(v);
    }
    case DType::BF16: {
      BFloat16 v;
      std::memcpy(&v.bits, bytes, sizeof v.bits);
      return toFloat(v);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, bytes, sizeof v);
      return v / 4.0;  // see storeElement
    }
  }
  return 0;
}

void storeElement(DType dtype, void* buffer, size_t index, double value) {
  auto* bytes = static_cast<std::byte*>(buffer) + index * dtypeSize(dtype);
  switch (dtype) {
    case DType::F32: {
      float v = static_cast<float>(value);
      std::memcpy(bytes, &v, sizeof v);
      return;
    }
    case DType::F64: std::memcpy(bytes, &value, sizeof value); return;
    case DType::F16: {
      uint16_t bits = toHalf(static_cast<float>(value)).bits;
      std::memcpy(bytes, &bits, sizeof bits);
      return;
    }
    case DType::BF16: {
      uint16_t bits = toBFloat16(static_cast<float>(value)).bits;
      std::memcpy(bytes, &bits, sizeof bits);
      return;
    }
    case DType::I32: {
      // Indices are integers: an i32 element holds 4·value, so the
      // multiples of 1/4 that inputValue gives move exactly.
      int32_t v = static_cast<int32_t>(std::lround(value * 4));
      std::memcpy(bytes, &v, sizeof v);
      return;
    }
  }
}

}  // namespace hostir::commtest
