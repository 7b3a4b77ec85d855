// MpiCommunicator under mpirun: the same checks as the in-process team,
// each rank computing its expected results on its own. Only rank 0 prints
// gtest's report; the others print their failures, and all ranks agree on
// the exit status.
#include "comm/mpi_communicator.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "collective_checks.h"
#include "fmt/format.h"
#include "split_checks.h"

namespace {

using namespace hostir;
using namespace hostir::commtest;

// The communicator over MPI_COMM_WORLD, alive while the tests run.
MpiCommunicator* world = nullptr;
// MpiSession::launchedByMpirun() before MPI_Init (which may set the same variables).
bool launchedByMpirun = false;

void runCases(Communicator& comm, const std::vector<CollectiveCase>& cases) {
  for (const CollectiveCase& c : cases) {
    std::string problem = runAndCheck(comm, c);
    EXPECT_TRUE(problem.empty()) << problem;
  }
}

using MatrixParam = std::tuple<Collective, DType>;

class MpiCollectiveTest : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(MpiCollectiveTest, MatchesReference) {
  auto [collective, dtype] = GetParam();
  runCases(*world, casesFor(collective, dtype, world->size()));
}

INSTANTIATE_TEST_SUITE_P(World, MpiCollectiveTest,
                         ::testing::Combine(::testing::ValuesIn(kCollectives), ::testing::ValuesIn(kDTypes)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return std::string(collectiveName(std::get<0>(info.param))) + "_" +
                                  std::string(dtypeName(std::get<1>(info.param)));
                         });

// The collectives that move i32 indices.
INSTANTIATE_TEST_SUITE_P(Indices, MpiCollectiveTest,
                         ::testing::Combine(::testing::ValuesIn(kMovingCollectives), ::testing::Values(DType::I32)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return std::string(collectiveName(std::get<0>(info.param))) + "_i32";
                         });

class MpiSendRecvTest : public ::testing::TestWithParam<DType> {};

TEST_P(MpiSendRecvTest, MatchesReference) {
  for (const SendRecvCase& c : sendRecvCases(GetParam(), world->size())) {
    std::string problem = runAndCheck(*world, c);
    EXPECT_TRUE(problem.empty()) << problem;
  }
}

INSTANTIATE_TEST_SUITE_P(World, MpiSendRecvTest, ::testing::ValuesIn(kDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return "sendrecv_" + std::string(dtypeName(info.param));
                         });

TEST(MpiCommunicatorTest, SendRecvSplitsCountsAboveThePerCallLimit) {
  MpiCommunicator limited(MPI_COMM_WORLD, 64);
  constexpr size_t kCountsAroundTheLimit[] = {63, 64, 65, 1000};
  for (DType dtype : {DType::F64, DType::BF16})
    for (const SendRecvCase& c : sendRecvCases(dtype, limited.size(), kCountsAroundTheLimit)) {
      std::string problem = runAndCheck(limited, c);
      EXPECT_TRUE(problem.empty()) << problem;
    }
}

TEST(MpiCommunicatorTest, SendRecvsAndCollectivesInterleaveByOrder) {
  const int size = world->size();
  for (size_t i = 0; i < 120; ++i) {
    std::string problem;
    if (i % 3 == 0) {
      CollectiveCase c;
      c.collective = kCollectives[(i / 3) % std::size(kCollectives)];
      c.dtype = kDTypes[i % std::size(kDTypes)];
      c.count = (i * 37) % 97;
      c.root = static_cast<int>(i % static_cast<size_t>(size));
      problem = runAndCheck(*world, c);
    } else {
      SendRecvCase c;
      c.dtype = kDTypes[(i / 2) % std::size(kDTypes)];
      c.count = (i * 53) % 89;
      c.perRankCounts = i % 4 == 1;
      c.shift = static_cast<int>(i % static_cast<size_t>(size));
      c.layout = kSendRecvLayouts[(i / 5) % std::size(kSendRecvLayouts)];
      problem = runAndCheck(*world, c);
    }
    EXPECT_TRUE(problem.empty()) << problem;
  }
}

TEST(MpiCommunicatorTest, BadSendRecvPeersFailOnEveryRank) {
  float send[4] = {}, recv[4] = {};
  const int size = world->size();
  const int rank = world->rank();
  try {
    world->sendRecv(send, 4, size, recv, 4, rank, DType::F32);
    ADD_FAILURE() << "no CommError";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("sendrecv to rank {}, but the team has {} ranks", size, size)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(world->sendRecv(send, 4, rank, recv, 4, -1, DType::F32), CommError);
  // A copy to itself whose counts differ.
  EXPECT_THROW(world->sendRecv(send, 4, rank, recv, 3, rank, DType::F32), CommError);
  world->barrier();
}

TEST(MpiCommunicatorTest, SplitsCountsAboveThePerCallLimit) {
  // A limit of 64 elements takes the paths that int-overflowing counts take.
  MpiCommunicator limited(MPI_COMM_WORLD, 64);
  constexpr size_t kCountsAroundTheLimit[] = {63, 64, 65, 1000};
  for (Collective collective : kCollectives)
    for (DType dtype : {DType::F32, DType::BF16})
      runCases(limited, casesFor(collective, dtype, limited.size(), kCountsAroundTheLimit));
}

TEST(MpiCommunicatorTest, ReduceScattersOfLargeBlocksReduceEachBlockOntoItsRank) {
  // Blocks just below, at and above the size from which each block is
  // reduced on its own: every op and layout on both sides of the switch.
  for (DType dtype : kDTypes) {
    const size_t atSwitch = MpiCommunicator::kReduceEachBlockFromBytes / dtypeSize(dtype);
    const size_t counts[] = {atSwitch - 1, atSwitch, atSwitch + 3};
    runCases(*world, casesFor(Collective::ReduceScatter, dtype, world->size(), counts));
  }
}

TEST(MpiCommunicatorTest, ManyBackToBackCollectivesMatchByOrder) {
  std::vector<CollectiveCase> cases;
  for (size_t i = 0; i < 400; ++i) {
    CollectiveCase c;
    c.collective = kCollectives[i % std::size(kCollectives)];
    c.dtype = kDTypes[(i / 4) % std::size(kDTypes)];
    c.op = kReduceOps[(i / 3) % std::size(kReduceOps)];
    c.count = (i * 37) % 97;
    c.layout = i % 5 == 0 ? Layout::InPlace : Layout::OutOfPlace;
    c.root = static_cast<int>(i % static_cast<size_t>(world->size()));
    cases.push_back(c);
    if (i % 50 == 0) world->barrier();
  }
  runCases(*world, cases);
}

// The groups of a mesh's axes through MPI_Comm_split: rows of 2 where the
// job's size is even, of 1 and of the whole job otherwise.
TEST(MpiCommunicatorTest, SplitsIntoTheGroupsOfAMesh) {
  for (int columns : {world->size() % 2 == 0 ? 2 : 1, world->size()}) {
    SCOPED_TRACE(::testing::Message() << "rows of " << columns);
    for (const std::string& problem : checkMeshGroups(*world, columns)) ADD_FAILURE() << problem;
  }
}

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Pins the calling thread to `cpus`; returns the set it had.
cpu_set_t pinCallingThread(const cpu_set_t& cpus) {
  cpu_set_t before;
  pthread_getaffinity_np(pthread_self(), sizeof before, &before);
  pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
  return before;
}

// A rank waiting in a collective for a late peer gives its core to a
// thread that wants it (a stream's computation): Open MPI polls without
// pause unless told to yield when idle, which MpiSession asks for. The
// waiting thread and a busy thread share one core; spinning would take
// about half of it.
TEST(MpiCommunicatorTest, AWaitForALatePeerGivesTheCoreAway) {
  world->barrier();
  float value = 1.0f;
  if (world->rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    world->allreduce(&value, &value, 1, DType::F32, ReduceOp::Sum);
  } else {
    cpu_set_t oneCore;
    CPU_ZERO(&oneCore);
    CPU_SET(sched_getcpu(), &oneCore);
    const cpu_set_t before = pinCallingThread(oneCore);
    std::atomic<bool> stop{false};
    double busyCpu = 0;
    std::thread busy([&] {
      pinCallingThread(oneCore);
      const double start = threadCpuSeconds();
      volatile uint64_t sink = 0;
      while (!stop.load(std::memory_order_relaxed)) sink = sink + 1;
      busyCpu = threadCpuSeconds() - start;
    });
    const double waitStart = threadCpuSeconds();
    world->allreduce(&value, &value, 1, DType::F32, ReduceOp::Sum);
    const double waitCpu = threadCpuSeconds() - waitStart;
    stop = true;
    busy.join();
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    EXPECT_LT(waitCpu, 0.5 * busyCpu) << "the wait kept the core: " << waitCpu << " s of CPU beside " << busyCpu
                                      << " s of the busy thread's";
  }
  EXPECT_EQ(value, static_cast<float>(world->size()));
}

TEST(MpiCommunicatorTest, DescribesTheJob) {
  int worldRank = -1, worldSize = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  EXPECT_EQ(world->rank(), worldRank);
  EXPECT_EQ(world->size(), worldSize);
  EXPECT_EQ(world->name(), "mpi");
  EXPECT_TRUE(world->blocking());
  EXPECT_TRUE(launchedByMpirun) << "run this under mpirun";
  int threadLevel = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threadLevel);
  EXPECT_GE(threadLevel, MPI_THREAD_SERIALIZED);
}

// all_to_all's parts are equal: a count the team size does not divide is
// refused on every rank before anything moves, and the team goes on.
TEST(MpiCommunicatorTest, AllToAllOfUnevenPartsFailsOnEveryRank) {
  const size_t size = static_cast<size_t>(world->size());
  std::vector<float> send(2 * size + 1), recv(2 * size + 1);
  const size_t count = size > 1 ? 2 * size + 1 : 0;
  try {
    world->collective({{CollectiveKind::AllToAll, DType::F32, count, count}, send.data(), recv.data()});
    if (size > 1) ADD_FAILURE() << "no CommError";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("do not split into {} equal parts", size)), std::string::npos)
        << e.what();
  }
  world->barrier();
}

TEST(MpiCommunicatorTest, BadBroadcastRootFailsOnEveryRank) {
  float data[4] = {};
  EXPECT_THROW(world->broadcast(data, 4, DType::F32, world->size()), CommError);
  EXPECT_THROW(world->broadcast(data, 4, DType::F32, -1), CommError);
  world->barrier();
}

// What ranks other than 0 print instead of gtest's report: their failures.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (test.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, test.test_suite_name(), test.name());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  launchedByMpirun = MpiSession::launchedByMpirun();
  std::optional<MpiSession> session;
  try {
    session.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "comm_mpi_tests: %s\n", e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }

  int failed = 0;
  {
    MpiCommunicator worldCommunicator;
    world = &worldCommunicator;
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    world = nullptr;
  }
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0 && anyFailed && !failed)
    std::fprintf(stderr, "comm_mpi_tests: FAILED on another rank (see its [rank N] lines)\n");
  return anyFailed ? 1 : 0;
}
