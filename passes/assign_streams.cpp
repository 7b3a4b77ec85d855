#include "passes/assign_streams.h"

#include <fmt/format.h>

#include <cstdint>

#include "passes/fresh_names.h"

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

// The worker stream of iteration `index` of a loop starting at `start`:
// stream(index - start), so that the first iteration gets stream(0) and
// no stream number is negative. A literal start is folded.
Expr iterationStream(const std::string& index, const Expr& start) {
  Expr i = Expr::name(index);
  if (start.empty()) return i;
  if (auto value = start.literalValue()) {
    if (*value == 0) return i;
    if (*value < 0 && *value != INT64_MIN) return i + Expr::literal(-*value);
    return i - Expr::literal(*value);
  }
  return i - start;
}

// The loop with its body in a with block on worker streams, then the join
// loop; the capture of the current stream first when `captureFirst`. The
// with block gives the stream back after each iteration.
std::vector<Statement> rewriteLoop(const ForLoop& original, bool captureFirst, const std::string& main,
                                   const std::string& joinIndex) {
  std::vector<Statement> out;
  if (captureFirst) {
    Operation capture(OpKind::GetCurrentStream);
    capture.results.push_back(NameDef{main, {}});
    out.push_back(std::move(capture));
  }
  ForLoop loop = original;
  WithBlock onWorker;
  onWorker.stream = Arg::stream(iterationStream(loop.index.name, loop.start));
  onWorker.body.reserve(loop.body.size() + 1);
  onWorker.body.push_back(streamOp(OpKind::Synchronize, Arg::name(main)));
  for (Statement& s : loop.body) onWorker.body.push_back(std::move(s));
  loop.body.clear();
  loop.body.push_back(std::move(onWorker));

  ForLoop join;
  join.index = NameDef{joinIndex, {}};
  join.start = original.start;
  join.end = original.end;
  join.body.push_back(streamOp(OpKind::Synchronize, Arg::stream(iterationStream(joinIndex, original.start))));

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
  TopLevelRewriter(Program& program, const PassContext& context, const AssignStreamsPass::KeepRewrite& keep,
                   const AssignStreamsPass::ConsiderLoop& consider, bool optimistic = false)
      : program_(program),
        context_(context),
        keep_(keep),
        consider_(consider),
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
  // verifies and adds no race; a remark says why not.
  std::optional<std::vector<RaceFinding>> checkRewrite(const ForLoop& loop, const Program& withRewrite) const {
    if (auto error = verifyProgram(withRewrite, context_.bindings, context_.cancel)) {
      remark(loop, fmt::format("loop left as it is: on worker streams it would not verify: {}", error->message));
      return std::nullopt;
    }
    std::vector<RaceFinding> after = context_.raceCheck(withRewrite);
    std::vector<RaceFinding> added = newRaces(*races_, after);
    if (!added.empty()) {
      std::string more = added.size() > 1 ? fmt::format(" (and {} more)", added.size() - 1) : "";
      remark(loop,
             fmt::format("loop left as it is: its iterations are not independent; on worker streams there would be "
                         "a {}{}",
                         describeRace(added.front()), more),
             raceNotes(added.front()));
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
    std::vector<Statement> rewritten = rewriteLoop(loop, !capture_, main, joinIndex_);
    std::optional<std::vector<RaceFinding>> after;
    if (optimistic_) {
      after = races_;  // proved once, at the end
    } else {
      Program withRewrite =
          assemble(program_, {bodySoFar(), {rewritten.data(), rewritten.data() + rewritten.size()}, {rest + 1, end}});
      after = checkRewrite(loop, withRewrite);
      if (!after) return false;
      if (keep_ && !keep_(assemble(program_, {bodySoFar(), {rest, end}}), withRewrite, loop)) return false;
    }
    remark(loop, fmt::format("iteration {} runs on stream({}), joined after the loop: the iterations are independent "
                             "(race-checked with the bound parameters)",
                             loop.index.name, iterationStream(loop.index.name, loop.start).toString()));
    if (!capture_) {
      capture_ = main;
      unusedMainName_.reset();
    }
    races_ = std::move(*after);
    for (Statement& s : rewritten) body_.push_back(std::move(s));
    return true;
  }

  struct PendingRemark {
    SourceLoc loc;
    std::string message;
    std::vector<Note> notes;
  };

  Program& program_;
  const PassContext& context_;
  const AssignStreamsPass::KeepRewrite& keep_;
  const AssignStreamsPass::ConsiderLoop& consider_;
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

bool assignStreamsApplies(const ForLoop& loop) { return bodyDoesWork(loop.body) && !bodySetsStream(loop.body); }

Status AssignStreamsPass::run(Program& program, const PassContext& context) {
  // A rewrite the cost model must weigh (keep_) is decided loop by loop.
  if (!keep_ && context.raceCheck && TopLevelRewriter(program, context, keep_, consider_, true).runOptimistically())
    return std::nullopt;
  TopLevelRewriter(program, context, keep_, consider_).run();
  return std::nullopt;
}

}  // namespace hostir
