#include "passes/overlap.h"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/cancellation.h"
#include "passes/assign_streams.h"
#include "passes/canonicalize.h"
#include "passes/fresh_names.h"
#include "passes/list_schedule.h"
#include "passes/operation_names.h"
#include "passes/whole_program_budget.h"

namespace hostir {
namespace {

constexpr std::string_view kPass = OverlapPass::kName;

// Predictions closer than this fraction are a tie between two rewrites.
constexpr double kScheduleTieFraction = 1e-3;

// The worker stream that straight-line communications move to.
constexpr int64_t kCommunicationStream = 0;

// Which processor of the straight-line schedule a task needs.
enum ResourceClass : int { kComputeClass = 0, kCommunicationClass = 1 };

// "1.234 ms against 1.500 ms as written (17.7% faster)"; a gain that one
// decimal would round onto the threshold gets two, so that "5.0% faster,
// below the 5.0% threshold" never appears.
std::string comparison(double changed, double asWritten, double minimumGain) {
  double gain = asWritten > 0 ? 1.0 - changed / asWritten : 0.0;
  bool roundsOntoThreshold = gain < minimumGain - 1e-12 && std::round(gain * 1000) >= std::round(minimumGain * 1000);
  int decimals = roundsOntoThreshold ? 2 : 1;
  return fmt::format("predicted {:.4f} ms against {:.4f} ms as written ({:.{}f}% {})", changed * 1e3, asWritten * 1e3,
                     std::abs(gain) * 100, decimals, gain >= 0 ? "faster" : "slower");
}

// The gain test, with a tolerance so that a gain equal to the threshold
// (as the user wrote it, e.g. 0.05) is not lost to rounding.
bool paysOff(double changed, double asWritten, double minimumGain) {
  if (!(asWritten > 0)) return false;
  return 1.0 - changed / asWritten >= minimumGain - 1e-12;
}

// Statements a straight-line region may hold: work, views, host integers,
// and waits for its own communications (the schedule re-derives those).
bool isRegionKind(const Operation& op) {
  if (namesArrayElement(op)) return false;
  switch (op.signature().category) {
    case OpCategory::Compute:
    case OpCategory::Copy:
    case OpCategory::Communication:
    case OpCategory::Allocation:
    case OpCategory::Deallocation:
    case OpCategory::View: return true;
    case OpCategory::Host: return op.kind == OpKind::IntValue;
    case OpCategory::Synchronization: return op.kind == OpKind::Wait;
  }
  return false;
}

bool isStreamTask(const Operation& op) {
  OpCategory c = op.signature().category;
  return issuesWork(c) || c == OpCategory::Deallocation;
}

// A run of top-level statements [begin, end) that list scheduling may reorder.
struct Region {
  size_t begin = 0;
  size_t end = 0;
};

// One region's statements as a task graph.
struct RegionGraph {
  std::vector<size_t> taskStatement;  // task -> statement index in the body
  std::map<size_t, size_t> taskOf;    // statement index -> task
  ScheduleProblem problem;
  size_t communications = 0;
  size_t computations = 0;
};

// `cancel` is polled per task: each is compared with every earlier one.
RegionGraph buildGraph(const std::vector<Statement>& body, Region region, Roots roots,
                       const std::vector<double>& statementSeconds, const std::atomic<bool>* cancel) {
  RegionGraph graph;
  std::vector<std::set<std::string>> reads, writes;
  for (size_t k = region.begin; k < region.end; ++k) {
    const Operation& op = body[k].op();
    recordView(roots, op);
    if (!isStreamTask(op)) continue;
    throwIfCancelled(cancel);
    const size_t task = graph.taskStatement.size();
    graph.taskStatement.push_back(k);
    graph.taskOf[k] = task;
    ScheduleTask t;
    t.seconds = k < statementSeconds.size() ? statementSeconds[k] : 0.0;
    bool communication = op.signature().category == OpCategory::Communication;
    t.resourceClass = communication ? kCommunicationClass : kComputeClass;
    if (communication) ++graph.communications;
    if (isLocalTensorWork(op.signature().category)) ++graph.computations;
    reads.emplace_back();
    writes.emplace_back();
    accessesOf(op, roots, reads.back(), writes.back());
    for (size_t earlier = 0; earlier < task; ++earlier) {
      auto touches = [](const std::set<std::string>& a, const std::set<std::string>& b) {
        for (const std::string& x : a)
          if (b.count(x)) return true;
        return false;
      };
      if (touches(writes[earlier], writes[task]) || touches(writes[earlier], reads[task]) ||
          touches(reads[earlier], writes[task]))
        t.predecessors.push_back(earlier);
    }
    graph.problem.tasks.push_back(std::move(t));
  }
  graph.problem.processors = {kComputeClass, kCommunicationClass};
  return graph;
}

Statement streamOp(OpKind kind, Arg stream) {
  Operation op(kind);
  op.operand("s") = std::move(stream);
  return op;
}

// Emits a region's statements in a schedule's issue order: computations on
// the stream current at the region (captured as `current`), communications
// on the communication stream, and events or waits only where a dependence
// crosses the two.
class ScheduleEmitter {
 public:
  ScheduleEmitter(const std::vector<Statement>& body, Region region, const RegionGraph& graph, const Schedule& schedule,
                  FreshNames& names)
      : body_(body),
        region_(region),
        graph_(graph),
        schedule_(schedule),
        names_(names),
        emitted_(body.size(), false),
        completion_(graph.taskStatement.size()),
        positionOnProcessor_(graph.taskStatement.size(), 0) {}

  std::vector<Statement> emit() {
    const size_t n = graph_.taskStatement.size();
    for (size_t t = 0; t < n; ++t) usesCommunicationStream_ |= schedule_.processor[t] == kCommunicationClass;
    for (size_t k = region_.begin; k < region_.end; ++k)
      for (const NameDef& r : body_[k].op().results) definedAt_[r.name] = k;
    if (usesCommunicationStream_) startCommunicationStream();
    markCrossSuccessors();
    for (size_t t : schedule_.order) emitTask(t);
    emitUnusedHostStatements();
    if (usesCommunicationStream_) {
      switchTo(kComputeClass);
      out_.push_back(streamOp(OpKind::Synchronize, communicationStream_));
    }
    return std::move(out_);
  }

 private:
  // Host statements (views, integers) go right before their first user.
  void emitDefinitionsFor(size_t k) {
    for (const std::string& name : namesUsedBy(body_[k].op())) {
      auto it = definedAt_.find(name);
      if (it == definedAt_.end() || emitted_[it->second] || graph_.taskOf.count(it->second)) continue;
      emitDefinitionsFor(it->second);
      emitted_[it->second] = true;
      out_.push_back(body_[it->second]);
    }
  }

  // Captures the current stream; the communication stream starts after
  // everything issued before the region.
  void startCommunicationStream() {
    current_ = names_.take("current");
    Operation capture(OpKind::GetCurrentStream);
    capture.results.push_back(NameDef{current_, {}});
    out_.push_back(std::move(capture));
    out_.push_back(streamOp(OpKind::SetCurrentStream, communicationStream_));
    out_.push_back(streamOp(OpKind::Synchronize, Arg::name(current_)));
    on_ = kCommunicationClass;
  }

  void switchTo(size_t processor) {
    if (processor == on_) return;
    out_.push_back(
        streamOp(OpKind::SetCurrentStream, processor == kComputeClass ? Arg::name(current_) : communicationStream_));
    on_ = processor;
  }

  // Tasks with a successor on another processor must mark their completion.
  void markCrossSuccessors() {
    crossSuccessor_.assign(graph_.taskStatement.size(), false);
    for (size_t t = 0; t < graph_.taskStatement.size(); ++t)
      for (size_t p : graph_.problem.tasks[t].predecessors)
        if (schedule_.processor[p] != schedule_.processor[t]) crossSuccessor_[p] = true;
  }

  void emitTask(size_t t) {
    const size_t k = graph_.taskStatement[t];
    const size_t processor = schedule_.processor[t];
    emitDefinitionsFor(k);
    switchTo(processor);
    if (std::optional<size_t> latest = latestUnwaitedCrossPredecessor(t)) waitFor(*latest, processor);
    emitted_[k] = true;
    out_.push_back(body_[k]);
    positionOnProcessor_[t] = issuedOn_[processor]++;
    if (crossSuccessor_[t]) markCompletion(t, body_[k].op());
  }

  // Waiting for the latest cross-stream predecessor covers the earlier ones
  // on its stream.
  std::optional<size_t> latestUnwaitedCrossPredecessor(size_t t) const {
    const size_t processor = schedule_.processor[t];
    std::optional<size_t> latest;
    for (size_t p : graph_.problem.tasks[t].predecessors) {
      const size_t from = schedule_.processor[p];
      if (from == processor || positionOnProcessor_[p] < waited_[processor][from]) continue;
      if (!latest || positionOnProcessor_[p] > positionOnProcessor_[*latest]) latest = p;
    }
    return latest;
  }

  // `processor` waits for task `p`: on its handle when it is a communication
  // with one, else on the event recorded after it.
  void waitFor(size_t p, size_t processor) {
    const Operation& producer = body_[graph_.taskStatement[p]].op();
    bool isHandle = producer.signature().category == OpCategory::Communication && producer.result();
    Operation wait(isHandle ? OpKind::Wait : OpKind::WaitEvent);
    wait.operand(isHandle ? "h" : "ev") = Arg::name(*completion_[p]);
    out_.push_back(std::move(wait));
    waited_[processor][schedule_.processor[p]] = positionOnProcessor_[p] + 1;
  }

  void markCompletion(size_t t, const Operation& op) {
    if (op.signature().category == OpCategory::Communication && op.result()) {
      completion_[t] = op.result()->name;
      return;
    }
    completion_[t] = names_.take("done");
    Operation record(OpKind::RecordEvent);
    record.results.push_back(NameDef{*completion_[t], {}});
    out_.push_back(std::move(record));
  }

  // Host statements nothing used, in their order (the region's waits are
  // re-derived by the schedule).
  void emitUnusedHostStatements() {
    for (size_t k = region_.begin; k < region_.end; ++k) {
      const Operation& op = body_[k].op();
      if (emitted_[k] || op.kind == OpKind::Wait) continue;
      emitDefinitionsFor(k);
      if (!emitted_[k]) out_.push_back(body_[k]);
      emitted_[k] = true;
    }
  }

  const std::vector<Statement>& body_;
  const Region region_;
  const RegionGraph& graph_;
  const Schedule& schedule_;
  FreshNames& names_;
  const Arg communicationStream_ = Arg::stream(Expr::literal(kCommunicationStream));
  bool usesCommunicationStream_ = false;
  std::string current_;                      // the stream current at the region, when captured
  size_t on_ = kComputeClass;                // the processor whose stream is current
  std::map<std::string, size_t> definedAt_;  // name -> statement that defines it, in the region
  std::vector<Statement> out_;
  std::vector<bool> emitted_;
  std::vector<bool> crossSuccessor_;
  std::vector<std::optional<std::string>> completion_;  // the handle or event that marks a task done
  std::vector<size_t> positionOnProcessor_;
  size_t issuedOn_[2] = {0, 0};
  // waited_[a][b]: tasks of processor b that processor a has already waited for (a prefix).
  size_t waited_[2][2] = {{0, 0}, {0, 0}};
};

std::vector<Statement> emitSchedule(const std::vector<Statement>& body, Region region, const RegionGraph& graph,
                                    const Schedule& schedule, FreshNames& names) {
  return ScheduleEmitter(body, region, graph, schedule, names).emit();
}

// The regions of straight-line code worth scheduling: runs of region
// statements with at least one communication and one computation whose
// waits are for communications of the same run.
std::vector<Region> findRegions(const std::vector<Statement>& body) {
  std::vector<Region> regions;
  size_t k = 0;
  while (k < body.size()) {
    if (!body[k].isOp() || !isRegionKind(body[k].op())) {
      ++k;
      continue;
    }
    Region region{k, k};
    std::set<std::string> handles;
    bool communication = false, computation = false;
    while (region.end < body.size() && body[region.end].isOp() && isRegionKind(body[region.end].op())) {
      const Operation& op = body[region.end].op();
      if (op.kind == OpKind::Wait) {
        const std::optional<Arg>& h = op.operand("h");
        if (!h || !h->isName() || !handles.count(h->nameValue())) break;
      }
      OpCategory c = op.signature().category;
      communication |= c == OpCategory::Communication;
      computation |= isLocalTensorWork(c);
      if (c == OpCategory::Communication && op.result()) handles.insert(op.result()->name);
      ++region.end;
    }
    if (communication && computation) regions.push_back(region);
    k = std::max(region.end, k + 1);
  }
  return regions;
}

std::string describeLines(const std::vector<Statement>& body, Region region) {
  SourceLoc first = body[region.begin].loc(), last = body[region.end - 1].loc();
  if (!first.valid() || !last.valid()) return "these statements";
  return first.line == last.line ? fmt::format("line {}", first.line)
                                 : fmt::format("lines {}-{}", first.line, last.line);
}

class Overlapper {
 public:
  Overlapper(Program& program, const PassContext& context) : program_(program), context_(context), budget_(program) {}

  Status run() {
    if (!context_.predict) {
      context_.remark(kPass, program_.loc, "program left as it is: no machine profile to predict with (--machine)");
      return std::nullopt;
    }
    if (!context_.raceCheck) {
      context_.remark(kPass, program_.loc, "program left as it is: no race check to prove a new schedule safe");
      return std::nullopt;
    }
    if (auto error = overlapLoops()) return error;
    if (auto error = scheduleStraightLineCode()) return error;
    // A program the pass leaves alone comes out as it went in; a changed
    // one drops what the change made implied.
    if (!changed_) return std::nullopt;
    return canonicalizeProgram(program_, context_, kPass);
  }

 private:
  // The prediction for `program` as the pass would emit it: canonicalized,
  // so that synchronizations it would drop are not charged.
  Result<CostPrediction> predictCanonical(Program program) {
    context_.checkCancelled();  // a simulation of the whole program follows
    PassContext quiet = context_;
    quiet.remarks = nullptr;
    if (auto error = canonicalizeProgram(program, quiet, kPass)) return *error;
    return context_.predict(program);
  }

  std::optional<double> predictSeconds(const Program& program, SourceLoc at, std::string_view what) {
    Result<CostPrediction> prediction = predictCanonical(program);
    if (!prediction) {
      context_.remark(
          kPass, at,
          fmt::format("{} left as it is: the cost model cannot predict it: {}", what, prediction.error().message));
      return std::nullopt;
    }
    return prediction->seconds;
  }

  // assign-streams, on one worker stream per iteration or on fewer, keeping
  // the rewrite predicted fastest where it pays.
  Status overlapLoops() {
    PassContext relabelled = context_;
    if (context_.remarks)
      relabelled.remarks = [this](const Remark& r) {
        // assign-streams' reasons for leaving a loop are overlap's too; its
        // rewrite remarks are replaced by the predicted comparison.
        if (r.message.rfind("loop left as it is", 0) == 0)
          context_.remarks(Remark{std::string(kPass), r.loc, r.message, r.notes});
      };
    AssignStreamsPass loops(
        [this](const Program& asWritten, const std::vector<AssignStreamsPass::LoopRewrite>& rewrites,
               const ForLoop& loop) { return fastestRewrite(asWritten, rewrites, loop); },
        [this](const ForLoop& loop) {
          // assign-streams' proof of each rewrite, then a prediction of each
          // and of the loop as written: a canonicalization (a verification and
          // a race proof) and a simulation.
          constexpr int64_t kRewrites = AssignStreamsPass::kMaxRewrites;
          return budget_.take(3 + 5 * kRewrites, context_, kPass, loop.loc,
                              "this loop and those after it left as they are");
        },
        /*moreSchedules=*/true);
    return loops.run(program_, relabelled);
  }

  // The rewrite predicted fastest, where it clears the minimum gain over
  // the loop as written; the remark lists every candidate's prediction.
  std::optional<size_t> fastestRewrite(const Program& asWritten,
                                       const std::vector<AssignStreamsPass::LoopRewrite>& rewrites,
                                       const ForLoop& loop) {
    std::optional<double> before = predictSeconds(asWritten, loop.loc, "loop");
    if (!before) return std::nullopt;
    std::optional<size_t> fastest;
    std::vector<double> predicted;
    for (size_t r = 0; r < rewrites.size(); ++r) {
      std::optional<double> after = predictSeconds(rewrites[r].program, loop.loc, "loop");
      if (!after) return std::nullopt;
      predicted.push_back(*after);
      // Among rewrites within kScheduleTieFraction the earlier one (more streams) stays:
      // a difference the remark's four decimals may not show is no reason to pick.
      if (!fastest || *after < predicted[*fastest] * (1 - kScheduleTieFraction)) fastest = r;
    }
    if (!fastest) return std::nullopt;
    const double best = predicted[*fastest];
    const bool pays = paysOff(best, *before, context_.minimumGain);
    std::string message = fmt::format("{}: {} {}", pays ? "loop rewritten" : "loop left as it is",
                                      rewrites[*fastest].inWords(), comparison(best, *before, context_.minimumGain)) +
                          (pays || best > *before ? "" : belowThreshold());
    std::vector<Note> notes;
    if (rewrites.size() > 1) {
      // Unpositioned: the remark above already shows the loop.
      notes.push_back(Note{{}, fmt::format("as written: predicted {:.4f} ms", *before * 1e3)});
      for (size_t r = 0; r < rewrites.size(); ++r)
        notes.push_back(Note{{}, fmt::format("{}: predicted {:.4f} ms", rewrites[r].schedule, predicted[r] * 1e3)});
    }
    if (context_.remarks)
      context_.remarks(Remark{std::string(kPass), loop.loc, std::move(message), std::move(notes), false,
                              pays ? rewrites[*fastest].schedule : "as written"});
    changed_ |= pays;
    if (!pays) return std::nullopt;
    return fastest;
  }

  Status scheduleStraightLineCode() {
    remarkBlocksLeft();
    // Regions are replaced from the last, so earlier indices stay valid.
    std::vector<Region> regions = findRegions(program_.body);
    for (auto it = regions.rbegin(); it != regions.rend(); ++it) {
      context_.checkCancelled();
      if (auto error = scheduleRegion(*it)) return error;
    }
    return std::nullopt;
  }

  // Straight-line scheduling moves top-level operations only: a block that
  // chooses its own stream, a branch, or a statement that names an array
  // element stays as its author wrote it.
  void remarkBlocksLeft() {
    for (const Statement& stmt : program_.body) {
      // A block a loop's rewrite inserted (a pipeline's start) is not the author's.
      if (!stmt.loc().valid()) continue;
      if (stmt.isWith())
        context_.remark(kPass, stmt.loc(),
                        "'with' block left as written: its statements run on the stream it names, and straight-line "
                        "scheduling moves only the statements outside such blocks");
      else if (stmt.isIf())
        context_.remark(kPass, stmt.loc(),
                        "'if' block left as written: straight-line scheduling stops at a branch and starts again "
                        "after it");
      else if (stmt.isOp() && namesArrayElement(stmt.op()))
        context_.remark(kPass, stmt.loc(),
                        "statement left as written: it names an element of a handle or event array, which another "
                        "iteration or a later statement may wait; straight-line scheduling starts again after it");
    }
  }

  Status scheduleRegion(Region region) {
    const SourceLoc at = program_.body[region.begin].loc();
    const std::string where = describeLines(program_.body, region);
    // Two predictions as written and one per schedule priority, each a
    // canonicalization and a simulation.
    if (!budget_.take(10, context_, kPass, at, "this straight-line code and the code before it left as it is"))
      return std::nullopt;
    // The tasks' costs, by statement of the program as it is.
    Result<CostPrediction> asWritten = context_.predict(program_);
    if (!asWritten) {
      context_.remark(kPass, at,
                      fmt::format("straight-line code at {} left as it is: the cost model cannot predict "
                                  "it: {}",
                                  where, asWritten.error().message));
      return std::nullopt;
    }
    std::optional<double> asWrittenSeconds = predictSeconds(program_, at, "straight-line code");
    if (!asWrittenSeconds) return std::nullopt;
    Roots roots;
    for (size_t k = 0; k < region.begin; ++k)
      if (program_.body[k].isOp()) recordView(roots, program_.body[k].op());
    RegionGraph graph = buildGraph(program_.body, region, roots, asWritten->statementSeconds, context_.cancel);

    std::optional<Program> best;
    double bestSeconds = 0;
    std::string bestOrder;
    std::set<std::vector<size_t>> tried;
    for (SchedulePriority priority : {SchedulePriority::UpwardRank, SchedulePriority::ProgramOrder}) {
      Schedule schedule = listSchedule(graph.problem, priority, context_.cancel);
      std::vector<size_t> key = schedule.order;
      key.insert(key.end(), schedule.processor.begin(), schedule.processor.end());
      if (!tried.insert(key).second) continue;
      FreshNames names(program_);
      std::vector<Statement> scheduled = emitSchedule(program_.body, region, graph, schedule, names);
      Program candidate;
      candidate.name = program_.name;
      candidate.loc = program_.loc;
      candidate.params = program_.params;
      candidate.decls = program_.decls;
      candidate.body.assign(program_.body.begin(), program_.body.begin() + static_cast<std::ptrdiff_t>(region.begin));
      candidate.body.insert(candidate.body.end(), scheduled.begin(), scheduled.end());
      candidate.body.insert(candidate.body.end(), program_.body.begin() + static_cast<std::ptrdiff_t>(region.end),
                            program_.body.end());
      Result<CostPrediction> predicted = predictCanonical(candidate);
      if (!predicted) continue;
      if (!best || predicted->seconds < bestSeconds) {
        best = std::move(candidate);
        bestSeconds = predicted->seconds;
        bestOrder = priority == SchedulePriority::UpwardRank ? "upward-rank (HEFT) order" : "program order";
      }
    }
    if (!best) {
      context_.remark(kPass, at,
                      fmt::format("straight-line code at {} left as it is: no schedule could be predicted", where));
      return std::nullopt;
    }
    const std::string what =
        fmt::format("{} computations and {} communications at {}", graph.computations, graph.communications, where);
    if (!paysOff(bestSeconds, *asWrittenSeconds, context_.minimumGain)) {
      context_.remark(kPass, at,
                      fmt::format("{} left as written: on a communication stream {}{}", what,
                                  comparison(bestSeconds, *asWrittenSeconds, context_.minimumGain),
                                  bestSeconds > *asWrittenSeconds ? "" : belowThreshold()));
      return std::nullopt;
    }
    // The dependences are conservative (whole buffers), so this holds by
    // construction; the proof keeps a mistake from becoming a race.
    std::vector<RaceFinding> before = context_.raceCheck(program_);
    if (!newRaces(before, context_.raceCheck(*best)).empty()) {
      context_.remark(kPass, at, fmt::format("{} left as written: the schedule would race", what));
      return std::nullopt;
    }
    context_.remark(kPass, at,
                    fmt::format("{} scheduled onto the main and a communication stream in {}: {}", what, bestOrder,
                                comparison(bestSeconds, *asWrittenSeconds, context_.minimumGain)));
    program_ = std::move(*best);
    changed_ = true;
    return std::nullopt;
  }

  std::string belowThreshold() const {
    return fmt::format(", below the {:.1f}% threshold (--min-gain)", context_.minimumGain * 100);
  }

  Program& program_;
  const PassContext& context_;
  WholeProgramBudget budget_;  // the whole-program predictions of the rewrites it considers
  bool changed_ = false;
};

}  // namespace

Status OverlapPass::run(Program& program, const PassContext& context) {
  if (auto error = verifyProgram(program, context.bindings, context.cancel)) return error;
  return Overlapper(program, context).run();
}

}  // namespace hostir
