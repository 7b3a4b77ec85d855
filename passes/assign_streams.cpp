#include "passes/assign_streams.h"

#include <fmt/format.h>

#include <cstdint>

#include "passes/fresh_names.h"
#include "passes/pipeline.h"

namespace hostir {
namespace {

bool bodyDoesWork(const std::vector<Statement>& body) {
  bool issues = false;
  walkStatements(body, [&](const Statement& s) {
    if (s.isOp() && issuesWork(s.op().signature().category)) issues = true;
  });
  return issues;
}

// set_current_stream or a with block anywhere in `body`.
bool bodySetsStream(const std::vector<Statement>& body) {
  bool sets = false;
  walkStatements(body, [&](const Statement& s) {
    if (s.isWith() || (s.isOp() && s.op().kind == OpKind::SetCurrentStream)) sets = true;
  });
  return sets;
}

// Whether `body` may leave another stream current than the one it was
// entered with: a set_current_stream outside with blocks (which give the
// stream back), in a loop or an if branch too.
bool bodyLeavesAnotherStream(const std::vector<Statement>& body) {
  for (const Statement& s : body) {
    if (s.isOp() && s.op().kind == OpKind::SetCurrentStream) return true;
    if (s.isWith()) continue;
    for (const std::vector<Statement>& nested : s.nestedBodies())
      if (bodyLeavesAnotherStream(nested)) return true;
  }
  return false;
}

// Loops in `body` outside any loop (in with blocks and if branches), in order.
void collectOutermostLoops(const std::vector<Statement>& body, std::vector<const ForLoop*>& out) {
  for (const Statement& s : body) {
    if (s.isFor()) {
      out.push_back(&s.loop());
      continue;
    }
    for (const std::vector<Statement>& nested : s.nestedBodies()) collectOutermostLoops(nested, out);
  }
}

Statement streamOp(OpKind kind, Arg stream) {
  Operation op(kind);
  op.operand("s") = std::move(stream);
  return op;
}

// The iteration number of `index` in a loop starting at `start`: index -
// start, so that the first iteration is 0. A literal start is folded.
Expr iterationNumber(const std::string& index, const Expr& start) {
  Expr i = Expr::name(index);
  if (start.empty()) return i;
  if (auto value = start.literalValue()) {
    if (*value == 0) return i;
    if (*value < 0 && *value != INT64_MIN) return i + Expr::literal(-*value);
    return i - Expr::literal(*value);
  }
  return i - start;
}

// The worker stream of iteration `index`: stream(index - start), or on
// `streams` streams (0: one per iteration) stream((index - start) % streams).
Expr iterationStream(const std::string& index, const Expr& start, int64_t streams = 0) {
  Expr number = iterationNumber(index, start);
  return streams > 0 ? number % Expr::literal(streams) : number;
}

// The loop's trip count with the context's bindings, where its bounds
// depend on params and `world` alone.
std::optional<int64_t> tripCount(const ForLoop& loop, const Program& program, const Bindings& bindings) {
  Result<std::map<std::string, int64_t>> params = bindParams(program, bindings);
  if (!params) return std::nullopt;
  IntLookup lookup = [&](const std::string& name) -> std::optional<int64_t> {
    if (name == "world") return bindings.world;
    if (auto it = params->find(name); it != params->end()) return it->second;
    return std::nullopt;
  };
  Result<int64_t> end = evaluate(loop.end, lookup);
  Result<int64_t> start = loop.start.empty() ? Result<int64_t>(int64_t{0}) : evaluate(loop.start, lookup);
  if (!end || !start || *end < *start) return std::nullopt;
  return *end - *start;
}

// The loop with its body in a with block on worker streams, then the join
// loop; the capture of the current stream first when `captureFirst`. The
// with block gives the stream back after each iteration.
std::vector<Statement> rewriteLoop(const ForLoop& original, bool captureFirst, const std::string& main,
                                   const std::string& joinIndex, int64_t streams) {
  std::vector<Statement> out;
  if (captureFirst) {
    Operation capture(OpKind::GetCurrentStream);
    capture.results.push_back(NameDef{main, {}});
    out.push_back(std::move(capture));
  }
  ForLoop loop = original;
  WithBlock onWorker;
  onWorker.stream = Arg::stream(iterationStream(loop.index.name, loop.start, streams));
  onWorker.body.reserve(loop.body.size() + 1);
  onWorker.body.push_back(streamOp(OpKind::Synchronize, Arg::name(main)));
  for (Statement& s : loop.body) onWorker.body.push_back(std::move(s));
  loop.body.clear();
  loop.body.push_back(std::move(onWorker));

  ForLoop join;
  join.index = NameDef{joinIndex, {}};
  if (streams > 0) {
    join.end = Expr::literal(streams);
    join.body.push_back(streamOp(OpKind::Synchronize, Arg::stream(Expr::name(joinIndex))));
  } else {
    join.start = original.start;
    join.end = original.end;
    join.body.push_back(streamOp(OpKind::Synchronize, Arg::stream(iterationStream(joinIndex, original.start))));
  }

  out.push_back(std::move(loop));
  out.push_back(std::move(join));
  return out;
}

// `shell`'s params and declarations with the statements of `parts`, copied.
Program assemble(const Program& shell, std::initializer_list<std::pair<const Statement*, const Statement*>> parts) {
  Program p;
  p.name = shell.name;
  p.loc = shell.loc;
  p.params = shell.params;
  p.decls = shell.decls;
  for (const auto& [begin, end] : parts) p.body.insert(p.body.end(), begin, end);
  return p;
}

// One run of the pass over a program's top-level statements: the body
// rewritten so far, and what later loops reuse (the captured main stream,
// the races of the program so far).
//
// Proving each rewrite alone costs a verification and a race proof of the
// whole program per loop: quadratic in the program. So a first, optimistic
// run (`optimistic`) rewrites every loop it may without proving each, and
// proves the result once; when that adds no race, it is what the careful
// run would have made (a rewrite never removes a race another one added),
// and its remarks are the careful run's. Otherwise the careful run decides
// loop by loop.
class TopLevelRewriter {
 public:
  TopLevelRewriter(Program& program, const PassContext& context, const AssignStreamsPass::ChooseRewrite& choose,
                   const AssignStreamsPass::ConsiderLoop& consider, bool moreSchedules, bool optimistic = false)
      : program_(program),
        context_(context),
        choose_(choose),
        consider_(consider),
        moreSchedules_(moreSchedules),
        optimistic_(optimistic),
        names_(program),
        // Join loops are siblings, so they can all share one index name.
        joinIndex_(names_.takeForLoopIndex("j")) {}

  // The optimistic run: true when its rewrite is proved and kept (its
  // remarks then made), false when the program is left for a careful run.
  bool runOptimistically() {
    const Program original = program_;
    run();
    if (races_) {
      Status unverified = verifyProgram(program_, context_.bindings, context_.cancel);
      if (unverified || !newRaces(*races_, context_.raceCheck(program_)).empty()) {
        program_ = original;
        return false;
      }
    }
    for (const PendingRemark& r : pending_) context_.remark(AssignStreamsPass::kName, r.loc, r.message, r.notes);
    return true;
  }

  void run() {
    const std::vector<Statement> original = std::move(program_.body);
    body_.reserve(original.size());
    for (size_t k = 0; k < original.size(); ++k) {
      // A loop costs a verification and a race proof of the whole program.
      context_.checkCancelled();
      const Statement& stmt = original[k];
      if (stmt.isWith()) {
        remarkLoopsInWith(stmt.with());
      } else if (stmt.isIf()) {
        remarkLoopsInIf(stmt);
        // A branch that switches streams leaves the captured one behind.
        for (const std::vector<Statement>& branch : stmt.nestedBodies())
          if (bodyLeavesAnotherStream(branch)) capture_.reset();
      } else if (stmt.isOp()) {
        if (stmt.op().kind == OpKind::SetCurrentStream) capture_.reset();
      } else if (tryRewrite(stmt.loop(), original.data() + k, original.data() + original.size())) {
        continue;
      }
      body_.push_back(stmt);
    }
    program_.body = std::move(body_);
  }

 private:
  struct PendingRemark {
    SourceLoc loc;
    std::string message;
    std::vector<Note> notes;
  };

  using Span = std::pair<const Statement*, const Statement*>;

  void remark(const ForLoop& loop, std::string message, std::vector<Note> notes = {}) const {
    if (optimistic_)
      pending_.push_back(PendingRemark{loop.loc, std::move(message), std::move(notes)});
    else
      context_.remark(AssignStreamsPass::kName, loop.loc, std::move(message), std::move(notes));
  }

  Span bodySoFar() const { return {body_.data(), body_.data() + body_.size()}; }

  // The block gives the current stream back, so a capture stays valid; its
  // loops run on the block's stream, which the block chose.
  void remarkLoopsInWith(const WithBlock& with) const {
    std::vector<const ForLoop*> inside;
    collectOutermostLoops(with.body, inside);
    for (const ForLoop* loop : inside)
      if (bodyDoesWork(loop->body))
        remark(*loop, fmt::format("loop left as it is: it is inside 'with {}', which chooses its stream",
                                  with.stream.toString()));
  }

  // Only top-level loops move to worker streams; a loop in an if branch
  // runs on some ranks or iterations only, and stays as it is.
  void remarkLoopsInIf(const Statement& stmt) const {
    std::vector<const ForLoop*> inside;
    for (const std::vector<Statement>& branch : stmt.nestedBodies()) collectOutermostLoops(branch, inside);
    for (const ForLoop* loop : inside)
      if (bodyDoesWork(loop->body))
        remark(*loop, "loop left as it is: it is inside an 'if' branch; only top-level loops are rewritten");
  }

  // Whether `loop`, at `rest` of the original body ending at `end`, is worth
  // rewriting and can be race-checked; a remark says why not.
  bool rewritable(const ForLoop& loop, const Statement* rest, const Statement* end) {
    if (!bodyDoesWork(loop.body)) {
      remark(loop, "loop left as it is: it issues no computation or communication, so there is nothing to overlap");
      return false;
    }
    if (bodySetsStream(loop.body)) {
      if (bodyLeavesAnotherStream(loop.body)) capture_.reset();
      remark(loop, "loop left as it is: it chooses its own streams (set_current_stream or with)");
      return false;
    }
    if (!context_.raceCheck) {
      remark(loop, "loop left as it is: no race check is available to prove its iterations independent");
      return false;
    }
    // Computed at the first loop that needs them, for the program as
    // rewritten so far.
    if (!races_ && !unprovable_) {
      Program current = assemble(program_, {bodySoFar(), {rest, end}});
      unprovable_ = verifyProgram(current, context_.bindings, context_.cancel);
      if (!unprovable_) races_ = context_.raceCheck(current);
    }
    if (unprovable_) {
      remark(loop, fmt::format("loop left as it is: the program does not verify with the bound parameters, so its "
                               "iterations cannot be proved independent: {}",
                               unprovable_->message));
      return false;
    }
    return true;
  }

  // The races of `withRewrite`, the program with `loop` rewritten, when it
  // verifies and adds no race; else `whyNot` says why.
  std::optional<std::vector<RaceFinding>> checkRewrite(const Program& withRewrite,
                                                       std::optional<PendingRemark>& whyNot) const {
    if (auto error = verifyProgram(withRewrite, context_.bindings, context_.cancel)) {
      whyNot = PendingRemark{
          {}, fmt::format("loop left as it is: on worker streams it would not verify: {}", error->message), {}};
      return std::nullopt;
    }
    std::vector<RaceFinding> after = context_.raceCheck(withRewrite);
    std::vector<RaceFinding> added = newRaces(*races_, after);
    if (!added.empty()) {
      std::string more = added.size() > 1 ? fmt::format(" (and {} more)", added.size() - 1) : "";
      whyNot = PendingRemark{{},
                             fmt::format("loop left as it is: its iterations are not independent; on worker streams "
                                         "there would be a {}{}",
                                         describeRace(added.front()), more),
                             raceNotes(added.front())};
      return std::nullopt;
    }
    return after;
  }

  // Appends `loop`'s rewrite to the body when it is safe and kept; false
  // leaves the loop to the caller as it is.
  bool tryRewrite(const ForLoop& loop, const Statement* rest, const Statement* end) {
    if (!rewritable(loop, rest, end)) return false;
    if (consider_ && !consider_(loop)) return false;
    if (!capture_ && !unusedMainName_) unusedMainName_ = names_.take("main");
    const std::string main = capture_ ? *capture_ : *unusedMainName_;
    Candidate chosen{0, rewriteLoop(loop, !capture_, main, joinIndex_, 0), {}, 0, true};
    if (optimistic_) {
      chosen.races = *races_;  // proved once, at the end
    } else {
      std::optional<Candidate> picked = choose(loop, rest, end, std::move(chosen.statements), main);
      if (!picked) return false;
      chosen = std::move(*picked);
    }
    if (chosen.depth == 0)
      remark(loop,
             fmt::format("iteration {} runs on stream({}), joined after the loop: the iterations are independent "
                         "(race-checked with the bound parameters)",
                         loop.index.name, iterationStream(loop.index.name, loop.start, chosen.streams).toString()));
    if (!capture_ && chosen.capturesMain) {
      capture_ = main;
      unusedMainName_.reset();
    }
    races_ = std::move(chosen.races);
    for (Statement& s : chosen.statements) body_.push_back(std::move(s));
    return true;
  }

  // A rewrite of one loop: on `streams` worker streams (0: one per
  // iteration), or a pipeline of `depth` (0: none).
  struct Candidate {
    int64_t streams = 0;
    std::vector<Statement> statements;
    std::vector<RaceFinding> races;  // of the whole program with it
    int64_t depth = 0;
    bool capturesMain = true;  // its statements define the main stream's capture when there was none

    std::string schedule() const {
      if (depth > 0) return fmt::format("pipeline of depth {}", depth);
      return streams > 0 ? fmt::format("{} worker streams", streams) : "worker streams";
    }
  };

  Program withStatements(const std::vector<Statement>& statements, const Statement* rest, const Statement* end) const {
    return assemble(program_,
                    {bodySoFar(), {statements.data(), statements.data() + statements.size()}, {rest + 1, end}});
  }

  // The rewrite to keep, proved safe: the one per iteration where nothing
  // chooses, else the one choose_ picks among those that verify and add no race.
  std::optional<Candidate> choose(const ForLoop& loop, const Statement* rest, const Statement* end,
                                  std::vector<Statement> perIteration, const std::string& main) {
    std::optional<PendingRemark> whyNot;
    std::optional<std::vector<RaceFinding>> races = checkRewrite(withStatements(perIteration, rest, end), whyNot);
    std::vector<Candidate> candidates;
    if (races) candidates.push_back(Candidate{0, std::move(perIteration), std::move(*races), 0, true});
    if (choose_ && moreSchedules_) {
      // Fewer streams share the iterations' independence; a pipeline keeps
      // the computation in order, so it may hold where they do not.
      if (races) addFewerStreams(loop, rest, end, main, candidates);
      addPipelines(loop, rest, end, main, candidates);
    }
    if (candidates.empty()) {
      remark(loop, whyNot->message, whyNot->notes);
      return std::nullopt;
    }
    if (!choose_) return std::move(candidates.front());
    std::vector<AssignStreamsPass::LoopRewrite> rewrites;
    for (const Candidate& c : candidates) rewrites.push_back({c.schedule(), withStatements(c.statements, rest, end)});
    std::optional<size_t> picked = choose_(assemble(program_, {bodySoFar(), {rest, end}}), rewrites, loop);
    if (!picked || *picked >= candidates.size()) return std::nullopt;
    return std::move(candidates[*picked]);
  }

  // The loop on 2, 4, ... worker streams, fewer than its iterations, each
  // kept where it verifies and adds no race (silently: the rewrite on one
  // stream per iteration said what stops the loop).
  void addFewerStreams(const ForLoop& loop, const Statement* rest, const Statement* end, const std::string& main,
                       std::vector<Candidate>& candidates) const {
    std::optional<int64_t> trips = tripCount(loop, program_, context_.bindings);
    if (!trips) return;
    for (int64_t streams = 2, added = 0; streams < *trips && added < AssignStreamsPass::kMaxFewerStreams;
         streams *= 2, ++added) {
      std::vector<Statement> statements = rewriteLoop(loop, !capture_, main, joinIndex_, streams);
      Program withRewrite = withStatements(statements, rest, end);
      if (verifyProgram(withRewrite, context_.bindings, context_.cancel)) continue;
      std::vector<RaceFinding> after = context_.raceCheck(withRewrite);
      if (!newRaces(*races_, after).empty()) continue;
      candidates.push_back(Candidate{streams, std::move(statements), std::move(after), 0, true});
    }
  }

  // The loop pipelined at each depth, where it fits the pipeline's shape,
  // verifies and adds no race (silently, as addFewerStreams; `pipeline`
  // run alone says what stops a loop). Without an input communication
  // every depth is the same rewrite, offered once.
  void addPipelines(const ForLoop& loop, const Statement* rest, const Statement* end, const std::string& main,
                    std::vector<Candidate>& candidates) {
    const Program current = assemble(program_, {bodySoFar(), {rest, end}});
    for (int64_t depth : AssignStreamsPass::kPipelineDepths) {
      std::variant<PipelinedLoop, PipelineStop> rewrite = pipelineLoop(loop, depth, main, !capture_, names_, current);
      auto* pipelined = std::get_if<PipelinedLoop>(&rewrite);
      if (!pipelined) return;
      Program withRewrite = withStatements(pipelined->statements, rest, end);
      if (verifyProgram(withRewrite, context_.bindings, context_.cancel)) return;
      std::vector<RaceFinding> after = context_.raceCheck(withRewrite);
      if (!newRaces(*races_, after).empty()) return;
      candidates.push_back(Candidate{0, std::move(pipelined->statements), std::move(after),
                                     pipelined->hasInput ? depth : 1, pipelined->hasInput});
      if (!pipelined->hasInput) return;
    }
  }

  Program& program_;
  const PassContext& context_;
  const AssignStreamsPass::ChooseRewrite& choose_;
  const AssignStreamsPass::ConsiderLoop& consider_;
  const bool moreSchedules_;
  const bool optimistic_;
  mutable std::vector<PendingRemark> pending_;  // the optimistic run's remarks, made once it is kept
  FreshNames names_;
  const std::string joinIndex_;
  std::vector<Statement> body_;
  // The captured main stream is reused by later loops while nothing at the
  // top level switches the current stream.
  std::optional<std::string> capture_;
  std::optional<std::string> unusedMainName_;  // taken from `names_`, not yet defined
  // The races of the program as rewritten so far: a rewrite is kept only
  // if it adds none.
  std::optional<std::vector<RaceFinding>> races_;
  Status unprovable_;  // why nothing can be race-checked, once known
};

}  // namespace

std::string AssignStreamsPass::LoopRewrite::inWords() const {
  return schedule.rfind("pipeline", 0) == 0 ? "as a " + schedule : "iterations on " + schedule;
}

bool assignStreamsApplies(const ForLoop& loop) { return bodyDoesWork(loop.body) && !bodySetsStream(loop.body); }

Status AssignStreamsPass::run(Program& program, const PassContext& context) {
  // A rewrite the cost model must weigh (choose_) is decided loop by loop.
  if (!choose_ && context.raceCheck &&
      TopLevelRewriter(program, context, choose_, consider_, moreSchedules_, true).runOptimistically())
    return std::nullopt;
  TopLevelRewriter(program, context, choose_, consider_, moreSchedules_).run();
  return std::nullopt;
}

}  // namespace hostir
