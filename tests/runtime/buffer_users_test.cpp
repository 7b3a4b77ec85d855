// The bookkeeping behind stream-ordered frees (runtime/buffer_users.h):
// which other streams a deallocating stream must wait for.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "runtime/buffer_users.h"

namespace hostir {
namespace {

struct FakeStream final : Stream {
  explicit FakeStream(int slot) : slot_(slot) {}
  int slot() const override { return slot_; }
  int slot_;
};

struct Fixture : ::testing::Test {
  FakeStream main{-1}, s0{0}, s1{1}, s2{2};
  BorrowedBuffer a{nullptr, 16}, b{nullptr, 16};
  BufferUsers users;
};

using BufferUsersTest = Fixture;

TEST_F(BufferUsersTest, TheFreeingStreamWaitsForEveryOtherUserInFirstUseOrder) {
  users.noteUse(&a, &main);  // allocated on main
  users.noteUse(&a, &s1);
  users.noteUse(&a, &s0);
  users.noteUse(&a, &s1);  // noted once
  EXPECT_EQ(users.release(&a, &main), (std::vector<Stream*>{&s1, &s0}));
}

TEST_F(BufferUsersTest, ABufferUsedOnlyByTheFreeingStreamNeedsNoWait) {
  users.noteUse(&a, &s2);
  users.noteUse(&a, &s2);
  EXPECT_TRUE(users.release(&a, &s2).empty());
}

TEST_F(BufferUsersTest, FreeingOnAStreamThatNeverUsedItWaitsForAllUsers) {
  users.noteUse(&a, &s0);
  users.noteUse(&a, &s1);
  EXPECT_EQ(users.release(&a, &main), (std::vector<Stream*>{&s0, &s1}));
}

TEST_F(BufferUsersTest, BuffersAreTrackedApartAndForgottenWhenReleased) {
  users.noteUse(&a, &s0);
  users.noteUse(&b, &s1);
  EXPECT_EQ(users.trackedBuffers(), 2u);
  EXPECT_EQ(users.release(&b, &main), (std::vector<Stream*>{&s1}));
  EXPECT_EQ(users.trackedBuffers(), 1u);
  // A second release of the same buffer (or an unknown one) waits for nothing.
  EXPECT_TRUE(users.release(&b, &main).empty());
  EXPECT_EQ(users.release(&a, &main), (std::vector<Stream*>{&s0}));
  EXPECT_EQ(users.trackedBuffers(), 0u);
}

TEST_F(BufferUsersTest, AfterTheHostSynchronizedNoEarlierUseIsWaitedFor) {
  users.noteUse(&a, &s0);
  users.noteUse(&a, &s1);
  users.clear();  // every stream idle
  users.noteUse(&a, &s2);
  EXPECT_EQ(users.release(&a, &main), (std::vector<Stream*>{&s2}));
}

TEST_F(BufferUsersTest, NullBuffersAndStreamsAreIgnored) {
  users.noteUse(nullptr, &s0);
  users.noteUse(&a, nullptr);
  EXPECT_EQ(users.trackedBuffers(), 0u);
}

// A random schedule against the definition: the waits are exactly the
// distinct other streams that used the buffer since the last clear.
TEST_F(BufferUsersTest, RandomSchedulesMatchTheDefinition) {
  std::vector<Stream*> streams{&main, &s0, &s1, &s2};
  std::vector<std::unique_ptr<BorrowedBuffer>> buffers;
  for (int i = 0; i < 6; ++i) buffers.push_back(std::make_unique<BorrowedBuffer>(nullptr, 8));
  std::vector<std::vector<Stream*>> expected(buffers.size());
  uint32_t state = 12345;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  for (int step = 0; step < 2000; ++step) {
    size_t buffer = next(static_cast<uint32_t>(buffers.size()));
    Stream* stream = streams[next(static_cast<uint32_t>(streams.size()))];
    switch (next(10)) {
      case 0: {
        std::vector<Stream*> want;
        for (Stream* s : expected[buffer])
          if (s != stream) want.push_back(s);
        EXPECT_EQ(users.release(buffers[buffer].get(), stream), want) << "step " << step;
        expected[buffer].clear();
        break;
      }
      case 1:
        users.clear();
        for (auto& e : expected) e.clear();
        break;
      default:
        users.noteUse(buffers[buffer].get(), stream);
        if (std::find(expected[buffer].begin(), expected[buffer].end(), stream) == expected[buffer].end())
          expected[buffer].push_back(stream);
    }
  }
}

}  // namespace
}  // namespace hostir
