#include "passes/canonicalize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "passes/whole_program_budget.h"

namespace hostir {
namespace {

// Where a statement is: from the top-level body down, the index of each
// enclosing block in its list and which of its bodies holds the rest (an
// if's then branch 0, its else branch 1; a loop's or with block's body 0),
// then the statement's own index.
struct Step {
  size_t index = 0;
  size_t body = 0;
};
using Path = std::vector<Step>;

std::vector<Statement>& listAt(std::vector<Statement>& body, const Path& path) {
  std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth + 1 < path.size(); ++depth)
    list = &(*list)[path[depth].index].nestedBodies()[path[depth].body];
  return *list;
}

const Statement& statementAt(const std::vector<Statement>& body, const Path& path) {
  const std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth + 1 < path.size(); ++depth)
    list = &(*list)[path[depth].index].nestedBodies()[path[depth].body];
  return (*list)[path.back().index];
}

void eraseAt(std::vector<Statement>& body, const Path& path) {
  std::vector<Statement>& list = listAt(body, path);
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(path.back().index));
}

// A statement that a pass made has no position of its own: the nearest
// one before it in its list that has, else the nearest after it.
SourceLoc nearestPosition(const std::vector<Statement>& list, size_t index) {
  for (size_t i = index + 1; i-- > 0;)
    if (list[i].loc().valid()) return list[i].loc();
  for (size_t i = index + 1; i < list.size(); ++i)
    if (list[i].loc().valid()) return list[i].loc();
  return {};
}

// Where a remark about the statement at `path` points: its own position,
// or, for one a pass inserted, the nearest one beside it in the innermost
// list that has one.
SourceLoc positionOf(const std::vector<Statement>& body, const Path& path) {
  const std::vector<Statement>* list = &body;
  SourceLoc found;
  for (size_t depth = 0; depth < path.size(); ++depth) {
    const Statement& s = (*list)[path[depth].index];
    if (SourceLoc here = nearestPosition(*list, path[depth].index); here.valid()) found = here;
    if (depth + 1 < path.size()) list = &s.nestedBodies()[path[depth].body];
  }
  return found;
}

// One line of source for a remark: `synchronize(main)`, `for j in range(S)`.
std::string brief(const Statement& stmt) {
  std::string text = printStatement(stmt);
  text = text.substr(0, text.find('\n'));
  size_t first = text.find_first_not_of(' ');
  text = first == std::string::npos ? "" : text.substr(first);
  if (!stmt.isOp() && text.size() >= 2 && text.ends_with(" {")) text.resize(text.size() - 2);
  return text;
}

bool isSynchronization(const Statement& s) {
  if (!s.isOp()) return false;
  OpKind kind = s.op().kind;
  return kind == OpKind::Synchronize || kind == OpKind::Wait || kind == OpKind::WaitEvent;
}

bool isSwitch(const Statement& s) { return s.isOp() && s.op().kind == OpKind::SetCurrentStream; }

// Whether the operation is issued on, or reads, the current stream: all but
// switches, host integers and views (which touch no element).
bool opUsesCurrentStream(const Operation& op) {
  return op.kind != OpKind::SetCurrentStream && op.kind != OpKind::IntValue && op.kind != OpKind::ShardByStream;
}

// Whether `stmt` or a statement in its body satisfies `test`.
template <typename Test>
bool anyWithin(const Statement& stmt, Test&& test) {
  std::span<const Statement> one(&stmt, 1);
  bool found = false;
  walkStatements(one, [&](const Statement& s) { found = found || test(s); });
  return found;
}

bool usesCurrentStream(const Statement& stmt) {
  return anyWithin(stmt, [](const Statement& s) { return s.isOp() && opUsesCurrentStream(s.op()); });
}

bool containsSwitch(const Statement& stmt) { return anyWithin(stmt, isSwitch); }

// Whether it issues work that touches memory (a deallocation included).
bool statementIssuesWork(const Statement& stmt) {
  return anyWithin(stmt, [](const Statement& s) {
    if (!s.isOp()) return false;
    OpCategory category = s.op().signature().category;
    return issuesWork(category) || category == OpCategory::Deallocation;
  });
}

bool exprNames(const Expr& expr, const std::string& name) {
  bool found = false;
  if (!expr.empty()) forEachName(expr, [&](const std::string& n, SourceLoc) { found |= n == name; });
  return found;
}

bool statementNames(const Statement& stmt, const std::string& name) {
  if (stmt.isFor()) return exprNames(stmt.loop().start, name) || exprNames(stmt.loop().end, name);
  if (stmt.isWith()) return exprNames(stmt.with().stream.expr, name);
  if (stmt.isIf()) {
    bool found = false;
    forEachName(stmt.ifBlock().cond, [&](const std::string& n, SourceLoc) { found |= n == name; });
    return found;
  }
  for (const NameDef& result : stmt.op().results)
    if (exprNames(result.index, name)) return true;
  for (const std::optional<Arg>& arg : stmt.op().operands) {
    if (!arg) continue;
    if (exprNames(arg->expr, name) || exprNames(arg->index, name)) return true;
    for (const Expr& dim : arg->type.dims)
      if (exprNames(dim, name)) return true;
    for (const Expr& item : arg->items)
      if (exprNames(item, name)) return true;
  }
  return false;
}

// The statements after a point that see the names defined there, beyond
// the rest of its own list: for each with block around the point, up to the
// nearest loop, the rest of the list that holds the block (with blocks open
// no scope).
using LaterInScope = std::vector<std::span<const Statement>>;

bool namedIn(std::span<const Statement> statements, const std::string& name) {
  bool used = false;
  walkStatements(statements, [&](const Statement& s) { used = used || statementNames(s, name); });
  return used;
}

// Whether a statement after `list[index]` where a name defined there is
// visible (loop and with bodies included) names `name`.
bool usedAfter(const std::vector<Statement>& list, size_t index, const LaterInScope& later, const std::string& name) {
  if (namedIn(std::span(list).subspan(index + 1), name)) return true;
  for (std::span<const Statement> rest : later)
    if (namedIn(rest, name)) return true;
  return false;
}

// Whether no work is issued after the statement at `path`, in this
// iteration or a later one of the loops around it: then it orders nothing
// but the end of the program, where the executor waits for every stream.
bool nothingIssuedAfter(const std::vector<Statement>& body, const Path& path) {
  const std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth < path.size(); ++depth) {
    for (size_t k = path[depth].index + 1; k < list->size(); ++k)
      if (statementIssuesWork((*list)[k])) return false;
    if (depth + 1 == path.size()) break;
    // A later iteration of an enclosing loop runs its whole body again; after
    // an if branch, what follows the if runs.
    const Statement& enclosing = (*list)[path[depth].index];
    if (enclosing.isFor() && statementIssuesWork(enclosing)) return false;
    list = &enclosing.nestedBodies()[path[depth].body];
  }
  return true;
}

// A loop or an if: a block whose body may run several times, once or not
// at all, so that the stream current after it is not evident from the text
// when it switches streams.
bool runsConditionally(const Statement& s) { return s.isFor() || s.isIf(); }

// Whether `body` switches the current stream (at its own level) before any
// statement uses the stream it was entered with.
bool switchesBeforeUse(const std::vector<Statement>& body) {
  for (const Statement& s : body) {
    if (isSwitch(s)) return true;
    if (usesCurrentStream(s) || (runsConditionally(s) && containsSwitch(s))) return false;
  }
  return true;
}

// Whether the stream current at the end of `body` is the one it was entered
// with, as the text shows: no switch at its own level, and no loop that
// switches, and no if that switches (a with block gives its stream back).
bool leavesStreamAsEntered(const std::vector<Statement>& body) {
  for (const Statement& s : body)
    if (isSwitch(s) || (runsConditionally(s) && containsSwitch(s))) return false;
  return true;
}

bool knownCurrent(const std::vector<Arg>& current, const Arg& stream) {
  return std::find(current.begin(), current.end(), stream) != current.end();
}

std::string position(SourceLoc loc) { return loc.valid() ? fmt::format(" at {}:{}", loc.line, loc.col) : ""; }

// Where a statement list ends, for a switch nothing uses before it.
enum class ListEnd {
  Program,    // the executor waits for every stream
  WithBlock,  // the block gives the stream current before it back
  LoopBody,   // the next iteration follows
  Branch,     // the statements after the if follow
};

class Canonicalizer {
 public:
  Canonicalizer(Program& program, const PassContext& context, std::string_view remarkAs)
      : program_(program), context_(context), remarkAs_(remarkAs), budget_(program) {}

  void run() {
    if (auto error = verifyProgram(program_, context_.bindings, context_.cancel)) {
      context_.remark(
          remarkAs_, program_.loc,
          fmt::format("program left as it is: it does not verify with the bound parameters: {}", error->message));
      return;
    }
    // Removing a synchronization only takes ordering away, so one that is
    // needed stays needed: one sweep suffices. The other removals keep the
    // meaning exactly and may enable each other, so they run to a fixpoint.
    if (context_.raceCheck)
      removeImpliedSynchronizations();
    else if (containsSynchronization())
      context_.remark(remarkAs_, program_.loc,
                      "synchronizations kept: no race check is available to prove any of them implied");
    bool changed = true;
    while (changed) {
      context_.checkCancelled();
      changed = removeUnusedCaptures(program_.body, {});
      changed |= removeRedundantSwitches(program_.body, ListEnd::Program, {});
      changed |= formWithBlocks(program_.body, {});
      changed |= removeEmptyBlocks(program_.body);
    }
  }

 private:
  void remark(SourceLoc loc, std::string message, std::vector<Note> notes = {}) const {
    context_.remark(remarkAs_, loc, std::move(message), std::move(notes));
  }

  bool containsSynchronization() const {
    bool found = false;
    walkStatements(program_.body, [&](const Statement& s) { found |= isSynchronization(s); });
    return found;
  }

  // Decides each synchronization as if alone, last to first (later ones
  // are most often implied by the end of the program): it goes when the
  // program without it verifies and has no race the current program lacks.
  // Removing synchronizations only takes ordering away, so when a run of
  // them can go together, each would have gone alone in turn: a run is
  // tried whole first and split in halves only when it cannot, so a program
  // whose synchronizations are implied costs one proof, not one each.
  void removeImpliedSynchronizations() {
    std::vector<Path> candidates;
    collect(program_.body, {}, candidates);
    if (candidates.empty()) return;
    std::vector<RaceFinding> races = context_.raceCheck(program_);
    removeImplied(candidates, 0, candidates.size(), races);
  }

  // candidates[first, last), decided last to first.
  void removeImplied(const std::vector<Path>& candidates, size_t first, size_t last, std::vector<RaceFinding>& races) {
    if (first == last) return;
    if (!budget_.take(1, context_, remarkAs_, positionOf(program_.body, candidates[last - 1]),
                      "this synchronization and those before it kept unproved"))
      return;
    if (last - first == 1) {
      removeIfImplied(candidates[first], races);
      return;
    }
    if (removeAllIfImplied(candidates, first, last, races)) return;
    const size_t middle = first + (last - first) / 2;
    removeImplied(candidates, middle, last, races);
    removeImplied(candidates, first, middle, races);
  }

  // Removes the run whole when the program without it verifies and has no new race.
  bool removeAllIfImplied(const std::vector<Path>& candidates, size_t first, size_t last,
                          std::vector<RaceFinding>& races) {
    // Each try costs a verification and a race proof of the whole program.
    context_.checkCancelled();
    Program candidate = program_;
    for (size_t k = last; k-- > first;) eraseAt(candidate.body, candidates[k]);
    if (verifyProgram(candidate, context_.bindings, context_.cancel)) return false;
    std::vector<RaceFinding> after = context_.raceCheck(candidate);
    if (!newRaces(races, after).empty()) return false;
    // The remarks one at a time would make, each against the program as it stood.
    for (size_t k = last; k-- > first;) {
      remarkRemoved(candidates[k]);
      eraseAt(program_.body, candidates[k]);
    }
    races = std::move(after);
    return true;
  }

  void removeIfImplied(const Path& path, std::vector<RaceFinding>& races) {
    context_.checkCancelled();
    const Statement& stmt = statementAt(program_.body, path);
    const std::string text = brief(stmt);
    const SourceLoc loc = stmt.loc();
    Program candidate = program_;
    eraseAt(candidate.body, path);
    if (auto error = verifyProgram(candidate, context_.bindings, context_.cancel)) {
      remark(loc, fmt::format("kept {}: without it the program does not verify: {}", text, error->message));
      return;
    }
    std::vector<RaceFinding> after = context_.raceCheck(candidate);
    std::vector<RaceFinding> added = newRaces(races, after);
    if (!added.empty()) {
      std::string more = added.size() > 1 ? fmt::format(" (and {} more)", added.size() - 1) : "";
      remark(loc, fmt::format("kept {}: without it there would be a {}{}", text, describeRace(added.front()), more),
             raceNotes(added.front()));
      return;
    }
    remarkRemoved(path);
    program_ = std::move(candidate);
    races = std::move(after);
  }

  void remarkRemoved(const Path& path) const {
    const Statement& stmt = statementAt(program_.body, path);
    const std::string text = brief(stmt);
    if (nothingIssuedAfter(program_.body, path))
      remark(stmt.loc(), fmt::format("removed {}: nothing is issued after it, and the executor waits for every "
                                     "stream at the end",
                                     text));
    else
      remark(stmt.loc(), fmt::format("removed {}: implied by stream order and the remaining synchronizations "
                                     "(race-checked with the bound parameters)",
                                     text));
  }

  static void collect(const std::vector<Statement>& list, const Path& prefix, std::vector<Path>& out) {
    for (size_t k = 0; k < list.size(); ++k) {
      Path path = prefix;
      path.push_back({k, 0});
      if (isSynchronization(list[k])) out.push_back(path);
      NestedBodies<const std::vector<Statement>> nested = list[k].nestedBodies();
      for (size_t b = 0; b < nested.size(); ++b) {
        path.back().body = b;
        collect(nested[b], path, out);
      }
    }
  }

  // record_event and get_current_stream statements whose name nothing uses
  // any more: they order nothing and issue nothing.
  bool removeUnusedCaptures(std::vector<Statement>& list, const LaterInScope& later) {
    bool changed = false;
    for (size_t k = list.size(); k-- > 0;) {
      if (list[k].bodiesAreScopes()) {
        // What a loop body or an if branch defines is seen only inside it.
        for (std::vector<Statement>& nested : list[k].nestedBodies()) changed |= removeUnusedCaptures(nested, {});
        continue;
      }
      if (list[k].isWith()) {
        LaterInScope inBlock = later;
        inBlock.push_back(std::span<const Statement>(list).subspan(k + 1));
        changed |= removeUnusedCaptures(list[k].with().body, inBlock);
        continue;
      }
      const Operation& op = list[k].op();
      if (op.kind != OpKind::RecordEvent && op.kind != OpKind::GetCurrentStream) continue;
      context_.checkCancelled();  // per capture: a walk of the rest of its scope
      const NameDef* result = op.result();
      // An array element may be waited in any scope after it: it stays.
      if (result && (result->isElement() || usedAfter(list, k, later, result->name))) continue;
      std::string what = op.kind == OpKind::RecordEvent ? "no wait_event waits for it" : "nothing uses it";
      remark(op.loc, fmt::format("removed {}: {}", brief(list[k]), what));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
      changed = true;
    }
    return changed;
  }

  // set_current_stream statements that change no statement's stream: one
  // overridden by the next switch before anything uses the current stream,
  // one to the stream already current, and at the end of the program or of
  // a with block one after which nothing uses it. `entered`: operands known
  // to denote the stream current when the list starts.
  bool removeRedundantSwitches(std::vector<Statement>& list, ListEnd end, const std::vector<Arg>& entered) {
    bool changed = false;
    for (Statement& s : list) {
      if (s.isFor()) changed |= removeRedundantSwitches(s.loop().body, ListEnd::LoopBody, {});
      if (s.isWith()) changed |= removeRedundantSwitches(s.with().body, ListEnd::WithBlock, {s.with().stream});
    }

    struct Removal {
      size_t index;
      std::string reason;
    };
    std::vector<Removal> removals;
    // Operands known to denote the current stream here (a capture, the
    // last switch's operand), as long as nothing switched in between.
    std::vector<Arg> current = entered;
    constexpr size_t kNone = SIZE_MAX;
    size_t pending = kNone;  // the last switch nothing has used yet
    for (size_t k = 0; k < list.size(); ++k) {
      // A branch starts with the stream current before the if.
      if (list[k].isIf())
        for (std::vector<Statement>& branch : list[k].nestedBodies())
          changed |= removeRedundantSwitches(branch, ListEnd::Branch, current);
      const Statement& s = list[k];
      if (isSwitch(s)) {
        const Arg& target = *s.op().operand("s");
        if (std::find(current.begin(), current.end(), target) != current.end()) {
          removals.push_back({k, fmt::format("{} is already the current stream", target.toString())});
          continue;
        }
        if (pending != kNone)
          removals.push_back(
              {pending, fmt::format("the switch{} overrides it before anything is issued", position(s.loc()))});
        pending = k;
        current = {target};
        continue;
      }
      // A with block issues nothing on the stream current around it and
      // gives that stream back, so what is known stays known. A pending
      // switch before it stays: the pair it may form with a switch back is
      // written as a block (formWithBlocks) rather than dropped.
      if (s.isWith()) {
        pending = kNone;
        continue;
      }
      if (runsConditionally(s) && containsSwitch(s)) {
        // The stream current after the loop or if is not evident here. A
        // loop whose every iteration switches before it uses the current
        // stream leaves a pending switch unused (with no iteration, too);
        // so does an if each of whose branches does (a missing else too).
        bool switchesFirst = true;
        for (const std::vector<Statement>& nested : s.nestedBodies()) switchesFirst &= switchesBeforeUse(nested);
        if (!switchesFirst) pending = kNone;
        current.clear();
        continue;
      }
      if (usesCurrentStream(s)) pending = kNone;
      if (s.isOp() && s.op().kind == OpKind::GetCurrentStream && s.op().result())
        current.push_back(Arg::name(s.op().result()->name));
    }
    if (end == ListEnd::Program && pending != kNone)
      removals.push_back({pending, "nothing is issued after it, and the executor waits for every stream at the end"});
    if (end == ListEnd::WithBlock && pending != kNone)
      removals.push_back({pending, "nothing is issued after it before the with block gives the stream back"});

    std::sort(removals.begin(), removals.end(), [](const Removal& a, const Removal& b) { return a.index < b.index; });
    for (const Removal& r : removals)
      remark(list[r.index].loc(), fmt::format("removed {}: {}", brief(list[r.index]), r.reason));
    for (auto r = removals.rbegin(); r != removals.rend(); ++r) {
      context_.checkCancelled();  // per removal: a shift of the rest of the list
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(r->index));
    }
    return changed || !removals.empty();
  }

  // The fewest stream switches, written as with blocks:
  //   * set_current_stream(s) ... set_current_stream(p), where p is known to
  //     be the stream current before the first, becomes `with s { ... }`;
  //   * `with s` where s is known to be current already gives way to its body;
  //   * adjacent `with s` blocks merge, when only statements that use no
  //     stream (views, integers) stand between them.
  // `entered`: operands known to denote the stream current when the list starts.
  bool formWithBlocks(std::vector<Statement>& list, const std::vector<Arg>& entered) {
    bool changed = false;
    for (Statement& s : list) {
      if (s.isFor()) changed |= formWithBlocks(s.loop().body, {});
      if (s.isWith()) changed |= formWithBlocks(s.with().body, {s.with().stream});
    }
    std::vector<Arg> current = entered;
    for (size_t k = 0; k < list.size(); ++k) {
      Statement& s = list[k];
      // A branch starts with the stream current before the if.
      if (s.isIf())
        for (std::vector<Statement>& branch : s.nestedBodies()) changed |= formWithBlocks(branch, current);
      if (isSwitch(s)) {
        context_.checkCancelled();  // per switch: a search of the rest of the list
        const Arg target = *s.op().operand("s");
        if (std::optional<size_t> back = nextSwitch(list, k);
            back && knownCurrent(current, switchTarget(list[*back]))) {
          pairToWithBlock(list, k, *back);
          changed = true;
          continue;  // the stream around the new block is still `current`
        }
        current = {target};
        continue;
      }
      if (s.isWith()) {
        context_.checkCancelled();  // per block: a splice or merge shifts the rest of the list
        if (knownCurrent(current, s.with().stream) && leavesStreamAsEntered(s.with().body)) {
          remark(s.loc(),
                 fmt::format("removed {}: {} is already the current stream", brief(s), s.with().stream.toString()));
          std::vector<Statement> inner = std::move(s.with().body);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
          list.insert(list.begin() + static_cast<std::ptrdiff_t>(k), std::make_move_iterator(inner.begin()),
                      std::make_move_iterator(inner.end()));
          changed = true;
          --k;  // look at the spliced statements with the same knowledge
          continue;
        }
        changed |= mergeFollowingBlocks(list, k);
        continue;
      }
      if (runsConditionally(s) && containsSwitch(s)) current.clear();
      if (s.isOp() && s.op().kind == OpKind::GetCurrentStream && s.op().result())
        current.push_back(Arg::name(s.op().result()->name));
    }
    return changed;
  }

  static const Arg& switchTarget(const Statement& s) { return *s.op().operand("s"); }

  // The first switch at this level after list[k].
  static std::optional<size_t> nextSwitch(const std::vector<Statement>& list, size_t k) {
    for (size_t m = k + 1; m < list.size(); ++m)
      if (isSwitch(list[m])) return m;
    return std::nullopt;
  }

  // list[open] switches to s and list[close] back to the stream current
  // before it: `with s` holds what stands between them.
  void pairToWithBlock(std::vector<Statement>& list, size_t open, size_t close) {
    WithBlock with;
    with.stream = switchTarget(list[open]);
    with.loc = list[open].loc();
    remark(with.loc, fmt::format("{} and {}{} became with {}: {} was the current stream before", brief(list[open]),
                                 brief(list[close]), position(list[close].loc()), with.stream.toString(),
                                 switchTarget(list[close]).toString()));
    auto first = list.begin() + static_cast<std::ptrdiff_t>(open);
    auto last = list.begin() + static_cast<std::ptrdiff_t>(close);
    with.body.assign(std::make_move_iterator(first + 1), std::make_move_iterator(last));
    list.erase(first + 1, last + 1);
    list[open] = Statement(std::move(with));
  }

  // Merges into the with block list[k] the following blocks on the same
  // stream, with the stream-free statements between them.
  bool mergeFollowingBlocks(std::vector<Statement>& list, size_t k) {
    bool changed = false;
    while (leavesStreamAsEntered(list[k].with().body)) {
      size_t m = k + 1;
      while (m < list.size() && list[m].isOp() && !isSwitch(list[m]) && !opUsesCurrentStream(list[m].op())) ++m;
      if (m == list.size() || !list[m].isWith() || !(list[m].with().stream == list[k].with().stream)) break;
      context_.checkCancelled();  // per merge: a shift of the rest of the list
      remark(list[m].loc(), fmt::format("merged {} into the block{}: the same stream, and nothing between them uses "
                                        "a stream",
                                        brief(list[m]), position(list[k].loc())));
      std::vector<Statement>& into = list[k].with().body;
      for (size_t between = k + 1; between < m; ++between) into.push_back(std::move(list[between]));
      for (Statement& inner : list[m].with().body) into.push_back(std::move(inner));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(k + 1), list.begin() + static_cast<std::ptrdiff_t>(m + 1));
      changed = true;
    }
    return changed;
  }

  // Loops, with blocks and ifs left with no statement; an if whose then
  // branch is empty but not its else branch becomes `if not COND { ... }`.
  bool removeEmptyBlocks(std::vector<Statement>& list) {
    bool changed = false;
    for (size_t k = list.size(); k-- > 0;) {
      Statement& s = list[k];
      bool empty = !s.isOp();
      for (std::vector<Statement>& nested : s.nestedBodies()) {
        changed |= removeEmptyBlocks(nested);
        empty &= nested.empty();
      }
      if (s.isIf() && !empty && s.ifBlock().thenBody.empty()) {
        negateIntoThenBranch(s);
        changed = true;
        continue;
      }
      if (!empty) continue;
      context_.checkCancelled();  // per removal: a shift of the rest of the list
      remark(s.loc(), fmt::format("removed {}: its body is empty", brief(s)));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
      changed = true;
    }
    return changed;
  }

  // `if c { } else { B }` as `if not c { B }` (`if d { B }` when c is `not d`).
  void negateIntoThenBranch(Statement& s) {
    IfBlock& block = s.ifBlock();
    const std::string before = brief(s);
    Condition negated = block.cond.kind() == ConditionKind::Not ? block.cond.node().operands[0]
                                                                : Condition::logicalNot(block.cond, block.cond.loc());
    block.cond = std::move(negated);
    block.thenBody = std::move(block.elseBody);
    block.elseBody.clear();
    remark(s.loc(), fmt::format("{} became {}: its then branch is empty", before, brief(s)));
  }

  Program& program_;
  const PassContext& context_;
  std::string_view remarkAs_;
  WholeProgramBudget budget_;  // for the race proofs of removeImpliedSynchronizations
};

}  // namespace

Status canonicalizeProgram(Program& program, const PassContext& context, std::string_view remarkAs) {
  Canonicalizer(program, context, remarkAs).run();
  return std::nullopt;
}

Status CanonicalizePass::run(Program& program, const PassContext& context) {
  return canonicalizeProgram(program, context);
}

}  // namespace hostir
