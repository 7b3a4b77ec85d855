#include "passes/canonicalize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hostir/printer.h"

namespace hostir {
namespace {

// Where a statement is: its index in the top-level body, then in each
// enclosing loop's body.
using Path = std::vector<size_t>;

std::vector<Statement>& listAt(std::vector<Statement>& body, const Path& path) {
  std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth + 1 < path.size(); ++depth) list = &(*list)[path[depth]].loop().body;
  return *list;
}

const Statement& statementAt(const std::vector<Statement>& body, const Path& path) {
  const std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth + 1 < path.size(); ++depth) list = &(*list)[path[depth]].loop().body;
  return (*list)[path.back()];
}

void eraseAt(std::vector<Statement>& body, const Path& path) {
  std::vector<Statement>& list = listAt(body, path);
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(path.back()));
}

// One line of source for a remark: `synchronize(main)`, `for j in range(S)`.
std::string brief(const Statement& stmt) {
  std::string text = printStatement(stmt);
  text = text.substr(0, text.find('\n'));
  size_t first = text.find_first_not_of(' ');
  text = first == std::string::npos ? "" : text.substr(first);
  if (stmt.isFor() && text.size() >= 2 && text.ends_with(" {")) text.resize(text.size() - 2);
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
  for (const std::optional<Arg>& arg : stmt.op().operands) {
    if (!arg) continue;
    if (exprNames(arg->expr, name)) return true;
    for (const Expr& dim : arg->type.dims)
      if (exprNames(dim, name)) return true;
  }
  return false;
}

// Whether a statement after `list[index]` in its list (loop bodies included)
// names `name`: where a name defined there is visible.
bool usedAfter(const std::vector<Statement>& list, size_t index, const std::string& name) {
  std::span<const Statement> rest = std::span(list).subspan(index + 1);
  bool used = false;
  walkStatements(rest, [&](const Statement& s) { used = used || statementNames(s, name); });
  return used;
}

// Whether no work is issued after the statement at `path`, in this
// iteration or a later one of the loops around it: then it orders nothing
// but the end of the program, where the executor waits for every stream.
bool nothingIssuedAfter(const std::vector<Statement>& body, const Path& path) {
  const std::vector<Statement>* list = &body;
  for (size_t depth = 0; depth < path.size(); ++depth) {
    for (size_t k = path[depth] + 1; k < list->size(); ++k)
      if (statementIssuesWork((*list)[k])) return false;
    if (depth + 1 == path.size()) break;
    // A later iteration of this enclosing loop runs its whole body again.
    const Statement& loop = (*list)[path[depth]];
    if (statementIssuesWork(loop)) return false;
    list = &loop.loop().body;
  }
  return true;
}

// Whether `body` switches the current stream (at its own level) before any
// statement uses the stream it was entered with.
bool switchesBeforeUse(const std::vector<Statement>& body) {
  for (const Statement& s : body) {
    if (isSwitch(s)) return true;
    if (usesCurrentStream(s) || (s.isFor() && containsSwitch(s))) return false;
  }
  return true;
}

class Canonicalizer {
 public:
  Canonicalizer(Program& program, const PassContext& context, std::string_view remarkAs)
      : program_(program), context_(context), remarkAs_(remarkAs) {}

  void run() {
    if (auto error = verifyProgram(program_, context_.bindings)) {
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
      changed = removeUnusedCaptures(program_.body);
      changed |= removeRedundantSwitches(program_.body, /*topLevel=*/true);
      changed |= removeEmptyLoops(program_.body);
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

  // Tries each synchronization alone, last to first (later ones are most
  // often implied by the end of the program): it goes when the program
  // without it verifies and has no race the current program lacks.
  void removeImpliedSynchronizations() {
    std::vector<Path> candidates;
    collect(program_.body, {}, candidates);
    if (candidates.empty()) return;
    std::vector<RaceFinding> races = context_.raceCheck(program_);
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
      const Statement& stmt = statementAt(program_.body, *it);
      const std::string text = brief(stmt);
      const SourceLoc loc = stmt.loc();
      Program candidate = program_;
      eraseAt(candidate.body, *it);
      if (auto error = verifyProgram(candidate, context_.bindings)) {
        remark(loc, fmt::format("kept {}: without it the program does not verify: {}", text, error->message));
        continue;
      }
      std::vector<RaceFinding> after = context_.raceCheck(candidate);
      std::vector<RaceFinding> added = newRaces(races, after);
      if (!added.empty()) {
        std::string more = added.size() > 1 ? fmt::format(" (and {} more)", added.size() - 1) : "";
        remark(loc, fmt::format("kept {}: without it there would be a {}{}", text, describeRace(added.front()), more),
               raceNotes(added.front()));
        continue;
      }
      if (nothingIssuedAfter(program_.body, *it))
        remark(loc, fmt::format("removed {}: nothing is issued after it, and the executor waits for every stream at "
                                "the end",
                                text));
      else
        remark(loc, fmt::format("removed {}: implied by stream order and the remaining synchronizations "
                                "(race-checked with the bound parameters)",
                                text));
      program_ = std::move(candidate);
      races = std::move(after);
    }
  }

  static void collect(const std::vector<Statement>& list, const Path& prefix, std::vector<Path>& out) {
    for (size_t k = 0; k < list.size(); ++k) {
      Path path = prefix;
      path.push_back(k);
      if (isSynchronization(list[k])) out.push_back(path);
      if (list[k].isFor()) collect(list[k].loop().body, path, out);
    }
  }

  // record_event and get_current_stream statements whose name nothing uses
  // any more: they order nothing and issue nothing.
  bool removeUnusedCaptures(std::vector<Statement>& list) {
    bool changed = false;
    for (size_t k = list.size(); k-- > 0;) {
      if (list[k].isFor()) {
        changed |= removeUnusedCaptures(list[k].loop().body);
        continue;
      }
      const Operation& op = list[k].op();
      if (op.kind != OpKind::RecordEvent && op.kind != OpKind::GetCurrentStream) continue;
      const NameDef* result = op.result();
      if (result && usedAfter(list, k, result->name)) continue;
      std::string what = op.kind == OpKind::RecordEvent ? "no wait_event waits for it" : "nothing uses it";
      remark(op.loc, fmt::format("removed {}: {}", brief(list[k]), what));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
      changed = true;
    }
    return changed;
  }

  // set_current_stream statements that change no statement's stream: one
  // overridden by the next switch before anything uses the current stream,
  // one to the stream already current, and at the end of the program one
  // after which nothing uses it.
  bool removeRedundantSwitches(std::vector<Statement>& list, bool topLevel) {
    bool changed = false;
    for (Statement& s : list)
      if (s.isFor()) changed |= removeRedundantSwitches(s.loop().body, /*topLevel=*/false);

    struct Removal {
      size_t index;
      std::string reason;
    };
    std::vector<Removal> removals;
    // Operands known to denote the current stream here (a capture, the
    // last switch's operand), as long as nothing switched in between.
    std::vector<Arg> current;
    constexpr size_t kNone = SIZE_MAX;
    size_t pending = kNone;  // the last switch nothing has used yet
    for (size_t k = 0; k < list.size(); ++k) {
      const Statement& s = list[k];
      if (isSwitch(s)) {
        const Arg& target = *s.op().operand("s");
        if (std::find(current.begin(), current.end(), target) != current.end()) {
          removals.push_back({k, fmt::format("{} is already the current stream", target.toString())});
          continue;
        }
        if (pending != kNone) {
          std::string at = s.loc().valid() ? fmt::format(" at {}:{}", s.loc().line, s.loc().col) : "";
          removals.push_back({pending, fmt::format("the switch{} overrides it before anything is issued", at)});
        }
        pending = k;
        current = {target};
        continue;
      }
      if (s.isFor() && containsSwitch(s)) {
        // The stream current after the loop is not evident here. A loop
        // whose every iteration switches before it uses the current stream
        // leaves a pending switch unused (with no iteration, too).
        if (!switchesBeforeUse(s.loop().body)) pending = kNone;
        current.clear();
        continue;
      }
      if (usesCurrentStream(s)) pending = kNone;
      if (s.isOp() && s.op().kind == OpKind::GetCurrentStream && s.op().result())
        current.push_back(Arg::name(s.op().result()->name));
    }
    if (topLevel && pending != kNone)
      removals.push_back({pending, "nothing is issued after it, and the executor waits for every stream at the end"});

    std::sort(removals.begin(), removals.end(), [](const Removal& a, const Removal& b) { return a.index < b.index; });
    for (const Removal& r : removals)
      remark(list[r.index].loc(), fmt::format("removed {}: {}", brief(list[r.index]), r.reason));
    for (auto r = removals.rbegin(); r != removals.rend(); ++r)
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(r->index));
    return changed || !removals.empty();
  }

  bool removeEmptyLoops(std::vector<Statement>& list) {
    bool changed = false;
    for (size_t k = list.size(); k-- > 0;) {
      if (!list[k].isFor()) continue;
      changed |= removeEmptyLoops(list[k].loop().body);
      if (!list[k].loop().body.empty()) continue;
      remark(list[k].loc(), fmt::format("removed {}: its body is empty", brief(list[k])));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
      changed = true;
    }
    return changed;
  }

  Program& program_;
  const PassContext& context_;
  std::string_view remarkAs_;
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
