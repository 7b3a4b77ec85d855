#include "executor/resident_team.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "comm/in_process_communicator.h"
#include "executor/backend_factory.h"
#include "ir/thread_start.h"

namespace hostir {

// What the caller and the rank threads share; guarded by `mutex`.
struct ResidentTeam::Shared {
  const RunRequest& request;
  const int64_t world;
  InProcessTeam team;
  // The signature exchange of --unchecked runs has a team of its own.
  std::optional<InProcessTeam> signatureTeam;
  // Written before the ranks start: a rank that runs out of memory while it
  // is set up could not allocate its message then.
  std::vector<Diagnostic> outOfMemoryAtStart;

  std::mutex mutex;
  std::condition_variable callPosted;  // ranks wait for the next call or the stop
  std::condition_variable rankDone;    // the caller waits for every rank's outcome
  uint64_t generation = 0;             // calls posted so far
  const RunCall* call = nullptr;
  bool stopping = false;
  int64_t finished = 0;
  std::vector<RankOutcome> outcomes;
  std::vector<RankSession*> sessions;  // each rank's, once set up; alive until the stop
  bool broken = false;
  std::vector<std::thread> threads;

  Shared(const RunRequest& request, int64_t world) : request(request), world(world), team(static_cast<int>(world)) {
    if (request.matchCommunications) signatureTeam.emplace(static_cast<int>(world));
    for (int64_t rank = 0; rank < world; ++rank)
      outOfMemoryAtStart.push_back(Diagnostic{{}, fmt::format("out of memory while starting rank {}", rank)});
    outcomes.resize(static_cast<size_t>(world), RankOutcome{RunResult{}});
    sessions.resize(static_cast<size_t>(world), nullptr);
  }

  void abortTeams(const std::string& reason) {
    team.abort(reason);
    if (signatureTeam) signatureTeam->abort(reason);
  }
  void report(int64_t rank, RankOutcome outcome);
  void rankBody(int64_t rank);
  // Serves calls until the stop.
  void serve(int64_t rank, RankSession& session);
  // Waits for every rank's outcome, acting on the call's cancel flag and
  // interrupt check (none while the ranks start).
  void awaitRanks(const RunCall* call);
  void stop();
};

void ResidentTeam::Shared::report(int64_t rank, RankOutcome outcome) {
  bool last = false;
  {
    std::lock_guard lock(mutex);
    outcomes[static_cast<size_t>(rank)] = std::move(outcome);
    last = ++finished == world;
  }
  // Only the last rank wakes the caller: each wake-up is a context switch
  // on a machine whose cores the ranks share.
  if (last) rankDone.notify_all();
}

void ResidentTeam::Shared::serve(int64_t rank, RankSession& session) {
  uint64_t seen = 0;
  while (true) {
    const RunCall* posted = nullptr;
    {
      std::unique_lock lock(mutex);
      callPosted.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping) return;
      seen = generation;
      posted = call;
    }
    report(rank, session.run(*posted));
  }
}

void ResidentTeam::Shared::rankBody(int64_t rank) {
  std::unique_ptr<Communicator> comm, signatures;
  std::optional<RankSession> session;
  std::optional<RankOutcome> failedStart;
  try {
    comm = team.communicator(static_cast<int>(rank));
    if (signatureTeam) signatures = signatureTeam->communicator(static_cast<int>(rank));
    session.emplace(request, *comm, signatures.get());
  } catch (const std::bad_alloc&) {
    failedStart = RankOutcome{std::move(outOfMemoryAtStart[static_cast<size_t>(rank)]), false, true};
  } catch (...) {
    failedStart = RankOutcome{failureDiagnostic(std::current_exception()), false, true};
  }
  if (failedStart) {
    // The ranks already running wait for this one: the team is aborted.
    session.reset();
    abortTeams(failedStart->result.error().message);
    report(rank, std::move(*failedStart));
    std::unique_lock lock(mutex);
    callPosted.wait(lock, [&] { return stopping; });
    return;
  }
  RankOutcome setUp = session->setUp();
  if (!setUp.result && signatureTeam) signatureTeam->abort(setUp.result.error().message);
  {
    std::lock_guard lock(mutex);
    sessions[static_cast<size_t>(rank)] = &*session;
  }
  report(rank, std::move(setUp));
  serve(rank, *session);  // a team that failed to start serves no call, only its stop
}

void ResidentTeam::Shared::awaitRanks(const RunCall* call) {
  std::unique_lock lock(mutex);
  const bool watched = call && (call->cancel || call->interruptCheck);
  bool cancelHandled = false;
  while (finished < world) {
    if (!watched || cancelHandled) {
      rankDone.wait(lock);
      continue;
    }
    // A rank blocked in its streams' work would see the flag only once that
    // work drained: the caller makes the streams drop it and releases the
    // ranks waiting for one another.
    rankDone.wait_for(lock, std::chrono::milliseconds(10));
    if (finished == world) break;
    bool cancelled = call->cancel && call->cancel->load(std::memory_order_relaxed);
    if (!cancelled && call->interruptCheck) {
      lock.unlock();
      cancelled = call->interruptCheck();
      lock.lock();
    }
    if (!cancelled) continue;
    cancelHandled = true;
    broken = true;
    std::vector<RankSession*> ranks = sessions;
    lock.unlock();
    for (RankSession* session : ranks)
      if (session) session->abandonQueuedWork();
    abortTeams("the run was cancelled");
    lock.lock();
  }
}

void ResidentTeam::Shared::stop() {
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  callPosted.notify_all();
  for (std::thread& thread : threads) thread.join();
  threads.clear();
}

ResidentTeam::ResidentTeam(std::unique_ptr<Shared> shared) : shared_(std::move(shared)) {}

ResidentTeam::~ResidentTeam() { shared_->stop(); }

Result<std::unique_ptr<ResidentTeam>> ResidentTeam::start(const RunRequest& request, int64_t world) {
  loadBackendLibraries(request.backend, request.program, world);
  std::unique_ptr<ResidentTeam> resident(new ResidentTeam(std::make_unique<Shared>(request, world)));
  Shared& shared = *resident->shared_;
  // A rank whose thread cannot start fails the start: the ranks already
  // started wait for it in their first collective, so the team is aborted.
  for (int64_t rank = 0; rank < world; ++rank) {
    try {
      shared.threads.push_back(
          startThread(fmt::format("rank {}'s thread", rank), [&shared, rank] { shared.rankBody(rank); }));
    } catch (const ResourceError& e) {
      shared.abortTeams(e.what());
      return Diagnostic{{}, e.what()};  // the destructor stops and joins the started ranks
    }
  }
  shared.awaitRanks(nullptr);
  if (const Diagnostic* cause = firstCause(shared.outcomes)) return *cause;
  return resident;
}

Result<RunResult> ResidentTeam::run(const RunCall& call) {
  Shared& shared = *shared_;
  {
    std::lock_guard lock(shared.mutex);
    shared.finished = 0;
    shared.call = &call;
    ++shared.generation;
  }
  shared.callPosted.notify_all();
  shared.awaitRanks(&call);
  std::vector<RankOutcome> outcomes = std::move(shared.outcomes);
  shared.outcomes.assign(static_cast<size_t>(shared.world), RankOutcome{RunResult{}});
  for (const RankOutcome& outcome : outcomes)
    if (outcome.abortedTeam) shared.broken = true;
  if (const Diagnostic* cause = firstCause(outcomes)) return *cause;
  // Races may differ between ranks (rank-dependent programs): report every rank's.
  RunResult result = std::move(outcomes[0].result.value());
  for (size_t rank = 1; rank < outcomes.size(); ++rank)
    for (RaceReport& race : outcomes[rank].result.value().races) result.races.push_back(std::move(race));
  return result;
}

bool ResidentTeam::broken() const { return shared_->broken; }

}  // namespace hostir
