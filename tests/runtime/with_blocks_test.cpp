// with blocks in the evaluator: the block's work is issued on its stream,
// and the stream current before it is current again after it, however the
// blocks nest, inside loops too, and whatever the body switches to.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "harness.h"
#include "runtime/evaluator.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

class SlotStream : public Stream {
 public:
  explicit SlotStream(int slot) : slot_(slot) {}
  int slot() const override { return slot_; }

 private:
  int slot_;
};

// Issues nothing: records the stream of every copy (-1 for the main stream).
class StreamRecordingBackend : public Backend {
 public:
  std::vector<int> copyStreams;

  std::string_view name() const override { return "stream-recording"; }
  void beginRun() override {}
  Stream* mainStream() override { return &main_; }
  Stream* workerStream(int64_t number) override { return &workers_[static_cast<size_t>(number % 4)]; }
  Event recordEvent(Stream* stream) override { return Event{stream, 0}; }
  void waitEvent(Stream*, const Event&) override {}
  void synchronizeHost() override {}
  TensorView allocate(DType dtype, const Dims& shape, Stream*, bool) override {
    TensorView view;
    view.dtype = dtype;
    view.shape = shape;
    return view;
  }
  void deallocate(const TensorView&, Stream*) override {}
  void compute(Stream*, const KernelCall&) override {}
  void copy(Stream* stream, const TensorView&, const TensorView&) override { copyStreams.push_back(stream->slot()); }
  void collective(Stream*, const CollectiveCall&) override {}
  void upload(const void*, const TensorView&) override {}
  void download(const TensorView&, void*) override {}

 private:
  SlotStream main_{-1};
  std::array<SlotStream, 4> workers_{SlotStream{0}, SlotStream{1}, SlotStream{2}, SlotStream{3}};
};

std::vector<int> copyStreamsOf(const std::string& text) {
  Program program = parseOrThrow(text, "with.hir");
  if (Status error = verifyFor(program, {}, 1)) throw std::runtime_error(error->message);
  Evaluator evaluator(program, bindAll(program, {}), 0, 1);
  StreamRecordingBackend backend;
  TensorView x = backend.allocate(DType::F32, Dims{8}, backend.mainStream(), false);
  evaluator.run(backend, {{"x", x}});
  return backend.copyStreams;
}

TEST(WithBlocks, IssueOnTheirStreamAndGiveTheStreamBack) {
  std::vector<int> streams = copyStreamsOf(testing::testProgramText("runtime/programs/with_nested_blocks.hir"));
  EXPECT_EQ(streams, (std::vector<int>{-1, 1, 2, 1, -1}));
}

TEST(WithBlocks, GiveTheStreamBackInEveryIterationOfALoop) {
  std::vector<int> streams = copyStreamsOf(testing::testProgramText("runtime/programs/with_blocks_in_loops.hir"));
  EXPECT_EQ(streams, (std::vector<int>{0, -1, 0, -1, 1, -1, 1, -1, 3, 3, -1}));
}

TEST(WithBlocks, RestoreTheStreamEvenAfterTheBodySwitches) {
  std::vector<int> streams = copyStreamsOf(testing::testProgramText("runtime/programs/with_block_after_switch.hir"));
  EXPECT_EQ(streams, (std::vector<int>{2, 1, 1}));
}

}  // namespace
}  // namespace hostir::reftest
