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

  void allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp, void*) override {
    copy(send, recv, count, dtype);
  }
  void allgather(const void* send, void* recv, size_t count, DType dtype, void*) override {
    copy(send, recv, count, dtype);
  }
  void reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp, void*) override {
    copy(send, recv, count, dtype);
  }
  void broadcast(void* buffer, size_t count, DType dtype, int, void*) override { copy(buffer, buffer, count, dtype); }
  void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                void*) override {
    if (to != 0 || from != 0 || sendCount != recvCount) throw CommError("loopback: sendrecv is a copy to rank 0");
    copy(send, recv, sendCount, dtype);
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
  void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                void* stream) override {
    std::vector<std::byte> copy(static_cast<const std::byte*>(send),
                                static_cast<const std::byte*>(send) + sendCount * dtypeSize(dtype));
    LoopbackCommunicator::sendRecv(copy.data(), sendCount, to, recv, recvCount, from, dtype, stream);
    storeElement(dtype, recv, recvCount, 99.0);
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
