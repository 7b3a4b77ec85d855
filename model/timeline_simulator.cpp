#include "model/timeline_simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace hostir {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Times closer than this (seconds) are the same instant: rates and sums
// leave rounding residue that must not become extra events.
constexpr double kEpsilon = 1e-12;
constexpr size_t kNone = ~size_t{0};
constexpr size_t kClasses = 5;  // WorkClass's values
static_assert(static_cast<size_t>(WorkClass::CopyEngineCommunication) + 1 == kClasses);

// The class of work an item is, for contention (docs/cost-model.md): the
// one the simulation backend gave it with its price; copies by their kind
// whatever was recorded, communications by what carries them.
WorkClass classOf(const WorkItem& item) {
  switch (item.kind) {
    case WorkItem::Kind::Memory: return WorkClass::Memory;
    case WorkItem::Kind::Communication:
      return item.workClass == WorkClass::CopyEngineCommunication ? item.workClass : WorkClass::Communication;
    case WorkItem::Kind::Compute:
    case WorkItem::Kind::Wait: break;
  }
  return item.workClass;
}

size_t indexOf(WorkClass c) { return static_cast<size_t>(c); }

enum class State : uint8_t {
  Waiting,   // its stream has not reached it, or what it waits for has not finished
  Ready,     // its stream reached it at `ready`: it may start then, given units (and peers)
  Admitted,  // holds its units: a computation running, a communication waiting for peers or moving data
  Done,
};

struct Rank {
  const RankWork* work = nullptr;
  RankTimeline timeline;
  std::vector<State> state;
  std::vector<double> remaining;             // a computation's work left, in seconds at full rate
  std::vector<std::vector<size_t>> streams;  // item indices per stream, in issue order
  std::vector<size_t> head;                  // per stream: its next unfinished item
  std::vector<double> streamFree;            // per stream: when its last finished item ended
  std::vector<size_t> gate;                  // IssueOrder: items that take units, in issue order
  size_t nextGate = 0;
  // The rank's communications in lanes (laneOf), each run one at a time in
  // issue order; lanes run side by side.
  struct Lane {
    std::vector<size_t> items;
    size_t next = 0;  // the next to be admitted
    bool busy = false;
  };
  std::map<uint32_t, Lane> lanes;
  std::vector<size_t> communicationOf;  // per item: its Communication (Simulator::communications_), or kNone
  std::vector<size_t> communicating;    // admitted communications not yet done, one per lane at most
  double freeUnits = 0;                 // IssueOrder
  std::vector<size_t> running;          // admitted computations and memory work
  double rate = 1;                      // Concurrent: the share of their units the computations get
  // Concurrent ranks with a contention table: each class's rate beside the
  // other classes running now (1 for all without contention).
  double classRate[kClasses] = {1, 1, 1, 1, 1};
  std::vector<double> issueEnd;  // per statement: when the host has issued it
  size_t done = 0;
  bool finished = false;
};

class Simulator {
 public:
  Simulator(const std::vector<RankWork>& work, const MachineProfile& profile) : profile_(profile) {
    for (const RankWork& w : work) ranks_.push_back(makeRank(w));
    matchCommunications();
  }

  Result<Timeline, std::string> run() {
    for (;;) {
      const bool settled = settle();
      if (std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.finished; })) break;
      updateRates();
      const double next = nextEvent();
      if (next == kInfinity) return stuck();
      if (!std::isfinite(next))
        return std::string(
            "the predicted times overflow: the program's work on this machine takes longer than "
            "a double can count");
      // Every step either changes what runs or moves time on; a step that
      // does neither would repeat for ever.
      if (!advanceTo(next) && !settled && next <= now_)
        return std::string("internal error: the simulation made no progress");
    }
    Timeline timeline;
    for (Rank& r : ranks_) {
      timeline.end = std::max(timeline.end, r.timeline.end);
      timeline.ranks.push_back(std::move(r.timeline));
    }
    return timeline;
  }

 private:
  // A communication across a group of ranks (the team, or a mesh group):
  // started once each of its ranks admitted it.
  struct Communication {
    size_t ranks = 0;                                // that take part: the group's size (1 for a rank standing for all)
    std::vector<std::pair<size_t, size_t>> members;  // (rank, item) of those that issue it
    size_t admitted = 0;
    double seconds = 0;  // the longest of the ranks' (their packing may differ)
    bool started = false;
    double end = 0;   // when it ends at its current rate
    double rate = 1;  // the slowest of its ranks' rates for it (contention)
    double nextRate = 1;
    uint64_t stamp = 0;  // the rate update that last visited it
  };

  Rank makeRank(const RankWork& work) {
    Rank r;
    r.work = &work;
    const size_t n = work.items.size();
    r.timeline.items.resize(n);
    r.state.assign(n, State::Waiting);
    r.remaining.assign(n, 0);
    r.streams.resize(static_cast<size_t>(std::max(work.streams, 1)));
    for (size_t i = 0; i < n; ++i) {
      const WorkItem& item = work.items[i];
      r.streams.at(static_cast<size_t>(item.stream)).push_back(i);
      r.remaining[i] = item.seconds;
      if (item.kind == WorkItem::Kind::Communication) r.lanes[laneOf(item)].items.push_back(i);
      if (item.kind == WorkItem::Kind::Communication || (item.kind != WorkItem::Kind::Wait && item.units > 0))
        r.gate.push_back(i);
    }
    r.head.assign(r.streams.size(), 0);
    r.streamFree.assign(r.streams.size(), 0);
    r.communicationOf.assign(n, kNone);
    r.freeUnits = profile_.computeUnits;
    r.issueEnd = issueTimes(work);
    r.timeline.issueEnd = r.issueEnd;
    r.timeline.hostEnd = work.statements * micros(profile_.overheads.issueMicros) + extraIssue(r.issueEnd, work);
    r.timeline.end = r.timeline.hostEnd;
    return r;
  }

  // The ranks of a group match their communications over the same axes by
  // their place among them, as the communicators do.
  void matchCommunications() {
    std::map<std::tuple<uint32_t, int64_t, int64_t>, size_t> byPlace;  // (over, group, place)
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const RankWork& work = *ranks_[r].work;
      for (size_t i = 0; i < work.items.size(); ++i) {
        const WorkItem& item = work.items[i];
        if (item.kind != WorkItem::Kind::Communication) continue;
        auto [at, fresh] = byPlace.try_emplace({item.over, item.group, item.communication}, communications_.size());
        if (fresh) {
          communications_.emplace_back();
          const bool symmetric = ranks_.size() == 1;
          communications_.back().ranks =
              symmetric || item.groupSize <= 0 ? ranks_.size() : static_cast<size_t>(item.groupSize);
        }
        communications_[at->second].members.emplace_back(r, i);
        ranks_[r].communicationOf[i] = at->second;
      }
    }
  }

  static double micros(double us) { return us * 1e-6; }

  // When the host has issued each statement: one `issue` overhead each, or
  // the statement's own where the profile has one for its operation (prefix
  // sums: O(statements)). Without costs by operation, exactly (s + 1) * issue.
  std::vector<double> issueTimes(const RankWork& work) const {
    const Overheads& o = profile_.overheads;
    const double issue = micros(o.issueMicros);
    std::vector<double> ends(work.statements);
    double extra = 0;
    for (uint32_t s = 0; s < work.statements; ++s) {
      if (!o.issueMicrosByOp.empty() && s < work.issued.size())
        if (auto own = o.issueMicrosByOp.find(work.issued[s].op); own != o.issueMicrosByOp.end())
          extra += micros(own->second) - issue;
      ends[s] = (s + 1) * issue + extra;
    }
    return ends;
  }

  // What the statements' own issue costs add to `statements` x issue.
  double extraIssue(const std::vector<double>& ends, const RankWork& work) const {
    if (ends.empty()) return 0;
    return ends.back() - work.statements * micros(profile_.overheads.issueMicros);
  }

  double issuedAt(const Rank& r, uint32_t statement) const {
    if (statement < r.issueEnd.size()) return r.issueEnd[statement];
    return (statement + 1) * micros(profile_.overheads.issueMicros);
  }
  bool issueOrder() const { return profile_.admission == Admission::IssueOrder; }
  // A communication's lane. The CPU backend gives each set of mesh axes its
  // own turns (the team's are 0); the CUDA backend chains every
  // communication of a rank after the one before (NCCL kernels of two
  // communicators at once may deadlock), so a GPU rank has one lane.
  uint32_t laneOf(const WorkItem& item) const { return issueOrder() ? item.over : 0; }
  double unitsOf(const WorkItem& item) const { return std::min(item.units, profile_.computeUnits); }

  // Everything that happens at `now_` without time passing: streams reach
  // their next work, waits resolve, work is admitted, communications start.
  // Returns whether anything did.
  bool settle() {
    bool any = false;
    bool changed = true;
    while (changed) {
      changed = false;
      for (Rank& r : ranks_) changed |= settleRank(r);
      // Communications every rank has admitted, in the order they became so.
      for (size_t k : fullyAdmitted_) {
        Communication& c = communications_[k];
        c.started = true;
        c.rate = 1;
        c.end = now_ + c.seconds;
        for (auto [r, i] : c.members) ranks_[r].timeline.items[i].start = now_;
        changed = true;
      }
      fullyAdmitted_.clear();
      any |= changed;
    }
    return any;
  }

  bool settleRank(Rank& r) {
    if (r.finished) return false;
    bool changed = false;
    for (size_t s = 0; s < r.streams.size(); ++s) changed |= reachNext(r, s);
    changed |= admit(r);
    if (r.done == r.state.size()) {
      r.finished = true;
      changed = true;
    }
    return changed;
  }

  // The stream's next item becomes ready once what comes before it has
  // finished; a wait finishes on its own when what it waits for has.
  bool reachNext(Rank& r, size_t s) {
    if (r.head[s] >= r.streams[s].size()) return false;
    const size_t i = r.streams[s][r.head[s]];
    if (r.state[i] != State::Waiting) return false;
    const WorkItem& item = r.work->items[i];
    const Overheads& o = profile_.overheads;
    double reached = std::max(issuedAt(r, item.statement) + micros(o.launchMicros), r.streamFree[s]);
    ItemTiming& timing = r.timeline.items[i];
    if (item.kind == WorkItem::Kind::Wait) {
      const size_t target = static_cast<size_t>(item.afterStream);
      if (r.head.at(target) < item.afterCount) return false;  // what it waits for has not finished
      const double awaited = item.afterCount == 0 ? 0 : r.timeline.items[r.streams[target][item.afterCount - 1]].end;
      double resolved = std::max(reached, awaited) + micros(o.syncMicros);
      if (awaited > reached) resolved += micros(o.wakeupMicros);  // the stream slept until then
      timing.ready = reached;
      timing.start = reached;
      timing.end = resolved;
      r.state[i] = State::Admitted;
      r.running.push_back(i);
      return true;
    }
    timing.ready = reached;
    r.state[i] = State::Ready;
    return true;
  }

  bool readyNow(const Rank& r, size_t i) const {
    return r.state[i] == State::Ready && r.timeline.items[i].ready <= now_ + kEpsilon;
  }

  bool admit(Rank& r) {
    bool changed = false;
    // Work without units (allocation fills on a GPU with no units, say) starts when ready.
    for (size_t s = 0; s < r.streams.size(); ++s) {
      if (r.head[s] >= r.streams[s].size()) continue;
      const size_t i = r.streams[s][r.head[s]];
      const WorkItem& item = r.work->items[i];
      if (!readyNow(r, i)) continue;
      if (item.units > 0 && item.kind != WorkItem::Kind::Communication) {
        if (issueOrder()) continue;  // through the gate below
      } else if (item.kind == WorkItem::Kind::Communication) {
        if (issueOrder()) continue;
        if (!admitCommunication(r, i)) continue;
        changed = true;
        continue;
      }
      start(r, i);
      changed = true;
    }
    if (!issueOrder()) return changed;
    // The CPU's compute gate: in issue order, each once its stream reached it and a unit is free.
    while (r.nextGate < r.gate.size()) {
      const size_t i = r.gate[r.nextGate];
      const WorkItem& item = r.work->items[i];
      if (!readyNow(r, i) || r.freeUnits + kEpsilon < unitsOf(item)) break;
      if (item.kind == WorkItem::Kind::Communication) {
        if (!admitCommunication(r, i)) break;
      } else {
        start(r, i);
      }
      r.freeUnits -= unitsOf(item);
      ++r.nextGate;
      changed = true;
    }
    return changed;
  }

  // A communication's turn comes when the one before it in its lane is done.
  bool admitCommunication(Rank& r, size_t i) {
    const WorkItem& item = r.work->items[i];
    Rank::Lane& lane = r.lanes.at(laneOf(item));
    if (lane.busy || lane.items[lane.next] != i) return false;
    lane.busy = true;
    ++lane.next;
    r.communicating.push_back(i);
    r.state[i] = State::Admitted;
    Communication& c = communications_[r.communicationOf[i]];
    c.seconds = std::max(c.seconds, item.seconds);
    if (++c.admitted == c.ranks) fullyAdmitted_.push_back(r.communicationOf[i]);
    return true;
  }

  void start(Rank& r, size_t i) {
    r.state[i] = State::Admitted;
    r.timeline.items[i].start = now_;
    r.running.push_back(i);
  }

  // Concurrent ranks: communications hold their units first; computations
  // share the rest in proportion to what they ask for. With a contention
  // table, each class of work also runs at the product of its rates beside
  // every other class running on the rank, and a communication moves data
  // at the slowest of its ranks' rates for it.
  void updateRates() {
    for (Rank& r : ranks_) {
      r.rate = 1;
      std::fill(std::begin(r.classRate), std::end(r.classRate), 1.0);
      if (issueOrder()) continue;
      double held = 0;
      for (size_t i : r.communicating) held += unitsOf(r.work->items[i]);
      double asked = 0;
      bool present[kClasses] = {};
      for (size_t i : r.running) {
        const WorkItem& item = r.work->items[i];
        if (item.kind == WorkItem::Kind::Wait) continue;
        asked += unitsOf(item);
        present[indexOf(classOf(item))] = true;
      }
      const double available = std::max(0.0, profile_.computeUnits - held);
      if (asked > available) r.rate = available / asked;
      if (profile_.contention.empty()) continue;
      for (size_t i : r.communicating)
        if (communicationOf(r, i).started) present[indexOf(classOf(r.work->items[i]))] = true;
      for (size_t slowed = 0; slowed < kClasses; ++slowed)
        for (size_t beside = 0; beside < kClasses; ++beside)
          if (beside != slowed && present[beside])
            r.classRate[slowed] *=
                contentionRate(profile_, static_cast<WorkClass>(slowed), static_cast<WorkClass>(beside));
    }
    if (profile_.contention.empty() || issueOrder()) return;
    // A started communication's rate: the slowest of its ranks'. Only the
    // communications in flight (one per lane of a rank at most) are
    // visited, so a long program's step stays O(ranks).
    ++rateStamp_;
    inFlight_.clear();
    for (const Rank& r : ranks_)
      for (size_t i : r.communicating) {
        const size_t k = r.communicationOf[i];
        Communication& c = communications_[k];
        if (!c.started) continue;
        if (c.stamp != rateStamp_) {
          c.stamp = rateStamp_;
          c.nextRate = kInfinity;
          inFlight_.push_back(k);
        }
        c.nextRate = std::min(c.nextRate, r.classRate[indexOf(classOf(r.work->items[i]))]);
      }
    for (size_t k : inFlight_) {
      Communication& c = communications_[k];
      if (c.nextRate == c.rate || c.end <= now_) continue;
      // The work left, at the old rate, now runs at the new one.
      c.end = now_ + (c.end - now_) * c.rate / c.nextRate;
      c.rate = c.nextRate;
    }
  }

  double rateOf(const Rank& r, size_t i) const {
    const WorkItem& item = r.work->items[i];
    return (item.units > 0 ? r.rate : 1) * r.classRate[indexOf(classOf(item))];
  }

  double nextEvent() const {
    double next = kInfinity;
    for (const Rank& r : ranks_) {
      for (size_t s = 0; s < r.streams.size(); ++s) {
        if (r.head[s] >= r.streams[s].size()) continue;
        const size_t i = r.streams[s][r.head[s]];
        if (r.state[i] == State::Ready && r.timeline.items[i].ready > now_ + kEpsilon)
          next = std::min(next, r.timeline.items[i].ready);
      }
      for (size_t i : r.running) next = std::min(next, finishAt(r, i));
    }
    for (const Rank& r : ranks_)
      for (size_t i : r.communicating)
        if (const Communication& c = communicationOf(r, i); c.started) next = std::min(next, c.end);
    return std::max(next, now_);
  }

  // When running item `i` finishes at the current rates: a wait at its
  // end, other work when its remaining work is done (never, at rate 0).
  double finishAt(const Rank& r, size_t i) const {
    if (r.work->items[i].kind == WorkItem::Kind::Wait) return r.timeline.items[i].end;
    const double rate = rateOf(r, i);
    return rate > 0 ? now_ + r.remaining[i] / rate : kInfinity;
  }

  // Moves time to `next`, the earliest event: work whose finish nextEvent
  // chose (the same expression, so at least one item) ends exactly there,
  // whatever rounding the large times of long runs leave. Returns whether
  // anything finished or time moved.
  bool advanceTo(double next) {
    const double elapsed = next - now_;
    bool progressed = next > now_;
    std::vector<std::pair<Rank*, size_t>> finished;
    for (Rank& r : ranks_) {
      std::vector<size_t> still;
      for (size_t i : r.running) {
        if (finishAt(r, i) <= next) {
          if (r.work->items[i].kind != WorkItem::Kind::Wait) {
            r.remaining[i] = 0;
            r.timeline.items[i].end = next;
          }
          finished.emplace_back(&r, i);
        } else {
          if (r.work->items[i].kind != WorkItem::Kind::Wait) r.remaining[i] -= rateOf(r, i) * elapsed;
          still.push_back(i);
        }
      }
      r.running = std::move(still);
    }
    now_ = next;
    for (auto [r, i] : finished) finish(*r, i);
    for (Rank& r : ranks_) {
      std::vector<size_t> still;
      for (size_t i : r.communicating) {
        const Communication& c = communicationOf(r, i);
        if (!c.started || c.end > now_) {
          still.push_back(i);
          continue;
        }
        r.timeline.items[i].end = c.end;
        r.lanes.at(laneOf(r.work->items[i])).busy = false;
        finish(r, i);
        progressed = true;
      }
      r.communicating = std::move(still);
    }
    return progressed || !finished.empty();
  }

  const Communication& communicationOf(const Rank& r, size_t i) const { return communications_[r.communicationOf[i]]; }

  void finish(Rank& r, size_t i) {
    const WorkItem& item = r.work->items[i];
    r.state[i] = State::Done;
    ++r.done;
    const size_t s = static_cast<size_t>(item.stream);
    r.streamFree[s] = r.timeline.items[i].end;
    ++r.head[s];
    if (issueOrder() && item.kind != WorkItem::Kind::Wait) r.freeUnits += unitsOf(item);
    r.timeline.end = std::max(r.timeline.end, r.timeline.items[i].end);
  }

  // Nothing can happen any more, yet work is left: some rank waits for a
  // communication another rank never issues.
  std::string stuck() const {
    for (const Communication& c : communications_) {
      if (c.started || c.members.size() == c.ranks) continue;
      const auto [r, i] = c.members.front();
      const WorkItem& item = ranks_[r].work->items[i];
      if (item.over != 0)
        return fmt::format(
            "communication #{} over a set of mesh axes: rank {} issues it, but only {} of the {} ranks of its group do",
            item.communication + 1, r, c.members.size(), c.ranks);
      std::vector<bool> issues(ranks_.size(), false);
      for (auto [m, unused] : c.members) issues[m] = true;
      const size_t missing = static_cast<size_t>(std::find(issues.begin(), issues.end(), false) - issues.begin());
      return fmt::format("rank {} never issues communication #{}, which other ranks wait for", missing,
                         item.communication + 1);
    }
    return "the simulated work can never finish (a wait for work that is never issued)";
  }

  const MachineProfile& profile_;
  std::vector<Rank> ranks_;
  std::vector<Communication> communications_;
  std::vector<size_t> inFlight_;  // updateRates: the started communications of some rank
  uint64_t rateStamp_ = 0;
  std::vector<size_t> fullyAdmitted_;  // admitted by every rank, not started yet
  double now_ = 0;
};

}  // namespace

Result<Timeline, std::string> simulateTimeline(const std::vector<RankWork>& ranks, const MachineProfile& profile) {
  return Simulator(ranks, profile).run();
}

}  // namespace hostir
