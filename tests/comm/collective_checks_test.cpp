// The checks themselves: they pass a correct single-rank communicator and
// catch one that gets a single element wrong.
#include "collective_checks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using namespace hostir;
using namespace hostir::commtest;

// A team of one whose collectives copy send to recv; optionally it gets the
// last element wrong.
class LoopbackCommunicator : public Communicator {
 public:
  explicit LoopbackCommunicator(bool corruptLastElement) : corrupt_(corruptLastElement) {}

  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "loopback"; }

  // On a team of one every collective is a copy of send into recv.
  void collective(const CollectiveArgs& call, void*) override {
    const CollectiveSignature& s = call.signature;
    switch (s.kind) {
      case CollectiveKind::Allreduce:
      case CollectiveKind::Allgather:
      case CollectiveKind::ReduceScatter:
      case CollectiveKind::AllToAll:
      case CollectiveKind::Broadcast: break;
      case CollectiveKind::SendRecv:
        if (s.to != 0 || s.from != 0 || s.sendCount != s.recvCount)
          throw CommError("loopback: sendrecv is a copy to rank 0");
        break;
    }
    copy(call.send, call.recv, s.recvCount, s.dtype);
  }

  void barrier() override {}
  void abort(const std::string&) override {}

 private:
  void copy(const void* send, void* recv, size_t count, DType dtype) const {
    if (count == 0) return;
    std::memmove(recv, send, count * dtypeSize(dtype));
    if (corrupt_) storeElement(dtype, recv, count - 1, 1234.0);
  }

  bool corrupt_;
};

TEST(CollectiveChecksTest, PassACorrectCommunicator) {
  LoopbackCommunicator comm(false);
  for (Collective collective : kCollectives)
    for (DType dtype : kDTypes)
      for (const CollectiveCase& c : casesFor(collective, dtype, 1)) EXPECT_EQ(runAndCheck(comm, c), "");
  for (DType dtype : kDTypes)
    for (const SendRecvCase& c : sendRecvCases(dtype, 1)) EXPECT_EQ(runAndCheck(comm, c), "");
}

TEST(CollectiveChecksTest, CatchAWrongElement) {
  LoopbackCommunicator comm(true);
  for (Collective collective : kCollectives)
    for (DType dtype : kDTypes)
      for (const CollectiveCase& c : casesFor(collective, dtype, 1)) {
        if (c.count > 0) {
          EXPECT_NE(runAndCheck(comm, c), "") << describe(c);
        }
      }
  for (DType dtype : kDTypes)
    for (const SendRecvCase& c : sendRecvCases(dtype, 1))
      if (c.count > 0) {
        EXPECT_NE(runAndCheck(comm, c), "") << describe(c);
      }
}

// A communicator that writes one element past recv: the checks must notice.
class OverrunCommunicator : public LoopbackCommunicator {
 public:
  OverrunCommunicator() : LoopbackCommunicator(false) {}
  void collective(const CollectiveArgs& call, void* stream) override {
    const CollectiveSignature& s = call.signature;
    std::vector<std::byte> copy(static_cast<const std::byte*>(call.send),
                                static_cast<const std::byte*>(call.send) + s.sendCount * dtypeSize(s.dtype));
    LoopbackCommunicator::collective({s, copy.data(), call.recv}, stream);
    if (s.kind == CollectiveKind::SendRecv) storeElement(s.dtype, call.recv, s.recvCount, 99.0);
  }
};

TEST(CollectiveChecksTest, CatchASendRecvThatWritesPastRecv) {
  OverrunCommunicator comm;
  for (const SendRecvCase& c : sendRecvCases(DType::F32, 1))
    if (c.layout == SendRecvLayout::Separate) {
      EXPECT_NE(runAndCheck(comm, c), "") << describe(c);
    }
}

}  // namespace
