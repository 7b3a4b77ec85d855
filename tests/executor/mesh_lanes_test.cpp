// Collectives over different mesh axes run at the same time: a tp
// allreduce and a dp allreduce issued on two streams are both inside their
// groups' communicators at once on every rank, and give the sums of their
// groups. Each rank's group communicators are wrapped so that a call waits
// (up to 30 s) for the rank's other group call to arrive before it
// runs: run one after the other, the first would wait alone, and the count
// of calls inside at once would stay 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/in_process_communicator.h"
#include "executor/cpu/cpu_backend.h"
#include "harness.h"
#include "runtime/evaluator.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

// One rank's group calls: how many are inside at once, and the most so far.
struct Meeting {
  std::mutex mutex;
  std::condition_variable changed;
  int inside = 0, most = 0;
};

// Forwards every call; the groups it splits meet in `meeting` before each call.
class MeetingCommunicator final : public Communicator {
 public:
  MeetingCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<Meeting> meeting, bool group)
      : inner_(std::move(inner)), meeting_(std::move(meeting)), group_(group) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return inner_->name(); }
  bool groupsOverlap() const override { return inner_->groupsOverlap(); }
  void barrier() override { inner_->barrier(); }
  void abort(const std::string& reason) override { inner_->abort(reason); }
  std::unique_ptr<Communicator> split(int color, int key) override {
    return std::make_unique<MeetingCommunicator>(inner_->split(color, key), meeting_, true);
  }
  void collective(const CollectiveArgs& call, void* stream) override {
    if (group_) {
      std::unique_lock lock(meeting_->mutex);
      ++meeting_->inside;
      meeting_->most = std::max(meeting_->most, meeting_->inside);
      meeting_->changed.notify_all();
      meeting_->changed.wait_for(lock, std::chrono::seconds(30), [&] { return meeting_->most >= 2; });
    }
    inner_->collective(call, stream);
    if (group_) {
      std::lock_guard lock(meeting_->mutex);
      --meeting_->inside;
    }
  }

 private:
  std::unique_ptr<Communicator> inner_;
  std::shared_ptr<Meeting> meeting_;
  bool group_;
};

TEST(MeshLanes, CollectivesOverDifferentAxesAreInFlightAtOnce) {
  const int world = 4;
  const int64_t tp = 2, n = 256;
  Program program = parseOrThrow(testing::testProgramText("executor/programs/mesh_lanes.hir"), "mesh_lanes.hir");
  const std::map<std::string, int64_t> params = bindAll(program, {});
  if (Status error = verifyFor(program, params, world)) FAIL() << error->message;
  InProcessTeam team(world);
  std::vector<std::shared_ptr<Meeting>> meetings;
  std::vector<std::vector<float>> a(world), b(world);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world; ++rank) meetings.push_back(std::make_shared<Meeting>());
  for (int rank = 0; rank < world; ++rank)
    ranks.emplace_back([&, rank] {
      MeetingCommunicator comm(team.communicator(rank), meetings[static_cast<size_t>(rank)], false);
      cpu::CpuBackend backend(cpu::CpuBackendOptions{}, comm);
      Evaluator evaluator(program, params, rank, world);
      TensorView x = backend.allocate(DType::F32, Dims{n}, backend.mainStream(), false);
      std::vector<float> host(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(100 * rank + i);
      backend.upload(host.data(), x);
      auto outputs = evaluator.run(backend, {{"x", x}});
      a[static_cast<size_t>(rank)].resize(static_cast<size_t>(n));
      b[static_cast<size_t>(rank)].resize(static_cast<size_t>(n));
      backend.download(outputs.at("a"), a[static_cast<size_t>(rank)].data());
      backend.download(outputs.at("b"), b[static_cast<size_t>(rank)].data());
    });
  for (std::thread& t : ranks) t.join();
  for (int rank = 0; rank < world; ++rank) {
    EXPECT_EQ(meetings[static_cast<size_t>(rank)]->most, 2) << "rank " << rank << "'s tp and dp calls ran apart";
    const int64_t row = rank / tp, column = rank % tp;
    for (int64_t i = 0; i < n; ++i) {
      // Over tp: the ranks of its row; over dp: the ranks of its column.
      const float overTp = static_cast<float>(100 * (row * tp) + i + 100 * (row * tp + 1) + i);
      const float overDp = static_cast<float>(100 * column + i + 100 * (tp + column) + i);
      EXPECT_EQ(a[static_cast<size_t>(rank)][static_cast<size_t>(i)], overTp) << "rank " << rank;
      EXPECT_EQ(b[static_cast<size_t>(rank)][static_cast<size_t>(i)], overDp) << "rank " << rank;
    }
  }
}

}  // namespace
}  // namespace hostir::reftest
