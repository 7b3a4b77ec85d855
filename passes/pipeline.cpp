#include "passes/pipeline.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "passes/operation_names.h"

namespace hostir {
namespace {

constexpr int64_t kInputStream = 0;
constexpr int64_t kOutputStream = 1;

// What a statement of the loop body is to the pipeline.
enum class Role { Setup, Input, Compute, Output, Wait };

// The loop body sorted into the pipeline's parts.
struct BodyShape {
  std::vector<Role> roles;                  // per statement
  std::vector<size_t> inputs, outputs;      // communications, in order
  std::optional<size_t> firstCompute;       // the first computation
  std::map<size_t, size_t> waitBefore;      // input -> the first computation that touches what it writes
  std::map<std::string, size_t> definedAt;  // name -> statement of the body
  std::set<size_t> rotated;                 // allocations the inputs write: they rotate
};

std::string quoted(const Operation& op) { return fmt::format("'{}'", op.signature().name); }

std::string lineOf(SourceLoc loc) { return loc.valid() ? fmt::format(" (line {})", loc.line) : ""; }

std::optional<PipelineStop> stopAt(const Statement& s, std::string reason) {
  return PipelineStop{s.loc(), std::move(reason)};
}

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& x : a)
    if (b.count(x)) return true;
  return false;
}

// The buffers (by root) each statement of the body reads and writes.
struct Accesses {
  std::vector<std::set<std::string>> reads, writes;
};

// Whether a statement may stand in a pipelined body at all; else why not.
std::optional<PipelineStop> checkKind(const Statement& s, const std::set<std::string>& handles) {
  if (!s.isOp())
    return stopAt(s, fmt::format("it holds {}; the pipeline moves operations only",
                                 s.isFor() ? "a nested loop" : (s.isWith() ? "a 'with' block" : "an 'if' block")));
  const Operation& op = s.op();
  if (namesArrayElement(op))
    return stopAt(s, "it names an element of a handle or event array; the pipeline writes its own");
  const OpCategory category = op.signature().category;
  if (category == OpCategory::Communication && !op.result())
    return stopAt(s, fmt::format("the {} has no handle for the pipeline to wait", quoted(op)));
  if (op.kind == OpKind::Wait) {
    const std::optional<Arg>& h = op.operand("h");
    if (!h || !h->isName() || !handles.count(h->nameValue()))
      return stopAt(s, "it waits for a communication issued outside the loop");
    return std::nullopt;
  }
  if (category == OpCategory::Synchronization || category == OpCategory::Host) {
    if (op.kind != OpKind::IntValue) return stopAt(s, fmt::format("the {} manages streams itself", quoted(op)));
  }
  return std::nullopt;
}

// Sorts the body's statements, or names the one that stops the pipeline.
// A communication is an input when nothing computed before it in the
// iteration feeds it or is overwritten by it (by buffer): it may be issued
// ahead of the computation, wherever the body writes it (FSDP's weight
// allgather after the gradient GEMM). Otherwise it is an output, and no
// computation may follow it.
std::optional<PipelineStop> sortBody(const ForLoop& loop, BodyShape& shape) {
  std::set<std::string> handles;
  for (const Statement& s : loop.body)
    if (s.isOp() && s.op().signature().category == OpCategory::Communication && s.op().result())
      handles.insert(s.op().result()->name);
  Roots roots;
  Accesses access;
  std::set<std::string> computedReads, computedWrites;  // what the computation so far touches
  std::optional<size_t> firstOutput;
  for (size_t k = 0; k < loop.body.size(); ++k) {
    const Statement& s = loop.body[k];
    if (auto stop = checkKind(s, handles)) return stop;
    const Operation& op = s.op();
    for (const NameDef& r : op.results) shape.definedAt[r.name] = k;
    recordView(roots, op);
    access.reads.emplace_back();
    access.writes.emplace_back();
    accessesOf(op, roots, access.reads.back(), access.writes.back());
    const OpCategory category = op.signature().category;
    Role role = Role::Setup;
    if (category == OpCategory::Communication) {
      const bool follows = intersects(access.reads[k], computedWrites) || intersects(access.writes[k], computedReads) ||
                           intersects(access.writes[k], computedWrites);
      role = follows ? Role::Output : Role::Input;
      (follows ? shape.outputs : shape.inputs).push_back(k);
      if (follows && !firstOutput) firstOutput = k;
    } else if (isLocalTensorWork(category) || category == OpCategory::Deallocation) {
      if (firstOutput)
        return stopAt(loop.body[*firstOutput],
                      fmt::format("the {} is issued between computations (another computation follows at line {}); "
                                  "the pipeline takes one input, one computation and one output stage",
                                  quoted(loop.body[*firstOutput].op()), s.loc().line));
      role = Role::Compute;
      if (!shape.firstCompute) shape.firstCompute = k;
      computedReads.insert(access.reads[k].begin(), access.reads[k].end());
      computedWrites.insert(access.writes[k].begin(), access.writes[k].end());
    } else if (op.kind == OpKind::Wait) {
      role = Role::Wait;
    }
    shape.roles.push_back(role);
  }
  if (!shape.firstCompute) return PipelineStop{loop.loc, "it issues no computation for its communications to overlap"};
  if (shape.inputs.empty() && shape.outputs.empty())
    return PipelineStop{loop.loc, "it issues no communication to overlap"};
  // Each input is waited before the first computation that touches what it writes.
  for (size_t input : shape.inputs)
    for (size_t k = 0; k < loop.body.size(); ++k)
      if (shape.roles[k] == Role::Compute &&
          (intersects(access.writes[input], access.reads[k]) || intersects(access.writes[input], access.writes[k]))) {
        shape.waitBefore[input] = k;
        break;
      }
  return std::nullopt;
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  bool found = false;
  forEachName(e, [&](const std::string& n, SourceLoc) { found |= names.count(n) != 0; });
  return found;
}

// The allocations of the body that the input communications write must
// rotate through d + 1 slots; each must keep its shape across iterations
// and be touched by the inputs only as their output.
std::optional<PipelineStop> findRotated(const ForLoop& loop, BodyShape& shape) {
  std::set<std::string> bodyNames{loop.index.name};
  for (const auto& [name, at] : shape.definedAt) bodyNames.insert(name);
  for (size_t k : shape.inputs) {
    const Operation& op = loop.body[k].op();
    const OpSignature& sig = op.signature();
    const bool hasOut = op.operand("out").has_value();
    for (size_t a = 0; a < sig.operands.size(); ++a) {
      const std::optional<Arg>& arg = op.operands[a];
      if (!arg || sig.operands[a].kind != OperandKind::Tensor || !arg->isName()) continue;
      // The buffer the operand is a view of, when the body allocates it.
      std::string name = arg->nameValue();
      for (auto it = shape.definedAt.find(name); it != shape.definedAt.end(); it = shape.definedAt.find(name)) {
        const Operation& def = loop.body[it->second].op();
        if (def.kind == OpKind::ShardByStream) {
          name = def.operand("t")->nameValue();
          continue;
        }
        if (def.kind != OpKind::Allocate)
          return stopAt(loop.body[k], fmt::format("the input {} reads '{}', which the iteration computes", quoted(op),
                                                  arg->nameValue()));
        const Effect effect = operandEffect(sig, a, hasOut);
        if (effect != Effect::Write)
          return stopAt(loop.body[k], fmt::format("the input {} reads '{}', allocated in the iteration", quoted(op),
                                                  arg->nameValue()));
        const TensorType& type = def.operand("type")->type;
        if (type.dims.empty()) return stopAt(loop.body[it->second], "a scalar buffer cannot rotate through slots");
        for (const Expr& dim : type.dims)
          if (mentions(dim, bodyNames))
            return stopAt(loop.body[it->second],
                          fmt::format("the shape of '{}', which the input {} writes, changes with the iteration, "
                                      "so it cannot rotate through slots",
                                      name, quoted(op)));
        if (def.operand("zero") && def.operand("zero")->boolValue)
          return stopAt(
              loop.body[it->second],
              fmt::format("'{}' is allocated zeroed; a rotating slot would keep the last chunk's values", name));
        shape.rotated.insert(it->second);
        break;
      }
    }
  }
  return std::nullopt;
}

Statement intBinding(const std::string& name, Expr value) {
  Operation op(OpKind::IntValue);
  op.results.push_back(NameDef{name});
  op.operand("value") = Arg::integer(std::move(value));
  return op;
}

Statement streamOp(OpKind kind, Arg stream) {
  Operation op(kind);
  op.operand("s") = std::move(stream);
  return op;
}

Statement eventOp(OpKind kind, const std::string& array, const Expr& index) {
  Operation op(kind);
  if (kind == OpKind::RecordEvent)
    op.results.push_back(NameDef{array, {}, index});
  else
    op.operand(kind == OpKind::Wait ? "h" : "ev") = Arg::element(array, index);
  return op;
}

WithBlock onStream(int64_t number) {
  WithBlock with;
  with.stream = Arg::stream(Expr::literal(number));
  return with;
}

// a + b, folded when a is a literal and the sum fits (else left to the
// verifier, which reports the overflow at the loop).
Expr plus(const Expr& a, int64_t b) {
  if (a.empty()) return Expr::literal(b);
  int64_t sum = 0;
  if (auto value = a.literalValue(); value && !__builtin_add_overflow(*value, b, &sum)) return Expr::literal(sum);
  return b == 0 ? a : a + Expr::literal(b);
}

// The rewrite of one loop, once its shape is known.
class PipelineWriter {
 public:
  PipelineWriter(const ForLoop& loop, const BodyShape& shape, int64_t depth, FreshNames& names, const Program& program)
      : loop_(loop), shape_(shape), depth_(shape.inputs.empty() ? 0 : depth), names_(names) {
    // A handle's array keeps its name when no other statement defines it.
    std::map<std::string, int> definitions;
    walkStatements(program.body, [&](const Statement& s) {
      if (s.isOp())
        for (const NameDef& r : s.op().results) ++definitions[r.name];
    });
    for (size_t k : shape.inputs) arrayOf(k, definitions);
    for (size_t k : shape.outputs) arrayOf(k, definitions);
    if (!shape.outputs.empty() || !shape.rotated.empty()) done_ = names_.take("done");
    for (size_t k : shape.rotated) ringOf_[k] = names_.take(loop.body[k].op().result()->name + "_ring");
  }

  PipelinedLoop write(const std::string& main, bool captureMain) {
    PipelinedLoop out;
    out.hasInput = !shape_.inputs.empty();
    if (out.hasInput) {
      if (captureMain) {
        Operation capture(OpKind::GetCurrentStream);
        capture.results.push_back(NameDef{main});
        out.statements.push_back(std::move(capture));
      }
      for (size_t k : shape_.rotated) out.statements.push_back(ringAllocation(k));
      // The inputs' stream starts after everything issued before the loop.
      WithBlock start = onStream(kInputStream);
      start.body.push_back(streamOp(OpKind::Synchronize, Arg::name(main)));
      out.statements.push_back(std::move(start));
      out.statements.push_back(skewedLoop());
    } else {
      ForLoop plain = loop_;
      plain.body = computeStage();
      out.statements.push_back(std::move(plain));
    }
    if (!shape_.outputs.empty() || shape_.waitBefore.size() < shape_.inputs.size())
      out.statements.push_back(joinUnwaited());
    out.moved = describe();
    return out;
  }

 private:
  void arrayOf(size_t k, const std::map<std::string, int>& definitions) {
    const std::string& handle = loop_.body[k].op().result()->name;
    auto it = definitions.find(handle);
    arrayOf_[k] = it != definitions.end() && it->second == 1 ? handle : names_.take(handle);
  }

  const std::string& index() const { return loop_.index.name; }

  // The iteration's number from 0, which indexes arrays and slots: of the
  // loop's own index, or of `other`, an index over the same range.
  Expr number(const std::string& other = {}) const {
    Expr i = Expr::name(other.empty() ? index() : other);
    if (loop_.start.empty()) return i;
    if (auto value = loop_.start.literalValue(); value && *value == 0) return i;
    return i - loop_.start;
  }

  Statement ringAllocation(size_t k) const {
    const Operation& def = loop_.body[k].op();
    TensorType type = def.operand("type")->type;
    type.dims[0] = Expr::literal(depth_ + 1) * type.dims[0];
    Operation alloc(OpKind::Allocate);
    alloc.results.push_back(NameDef{ringOf_.at(k)});
    alloc.operand("type") = Arg::ofType(std::move(type));
    return alloc;
  }

  // Slot (number mod d + 1) of the ring, under the allocation's own name.
  Statement slotView(size_t k) const {
    Operation view(OpKind::ShardByStream, loop_.body[k].loc());
    view.results.push_back(NameDef{loop_.body[k].op().result()->name});
    view.operand("t") = Arg::name(ringOf_.at(k));
    view.operand("axis") = Arg::integer(Expr::literal(0));
    view.operand("index") = Arg::integer(number() % Expr::literal(depth_ + 1));
    view.operand("chunks") = Arg::integer(Expr::literal(depth_ + 1));
    return view;
  }

  // The communication at `k`, defining its element of the array.
  Statement communication(size_t k) const {
    Operation op = loop_.body[k].op();
    op.results[0] = NameDef{arrayOf_.at(k), op.results[0].loc, number()};
    return op;
  }

  // A body statement as a stage issues it: a rotating allocation becomes its slot.
  Statement setup(size_t k) const { return shape_.rotated.count(k) ? slotView(k) : loop_.body[k]; }

  // The setup statements that `k` needs, transitively (a worklist: a body
  // may chain thousands of views).
  void collectNeeded(size_t k, std::set<size_t>& needed) const {
    std::vector<size_t> pending{k};
    while (!pending.empty()) {
      const size_t at = pending.back();
      pending.pop_back();
      for (const std::string& name : namesUsedBy(loop_.body[at].op())) {
        auto it = shape_.definedAt.find(name);
        if (it == shape_.definedAt.end() || it->second >= at || shape_.roles[it->second] != Role::Setup) continue;
        if (needed.insert(it->second).second) pending.push_back(it->second);
      }
    }
  }

  std::vector<Statement> inputStage() const {
    std::set<size_t> needed;
    for (size_t k : shape_.inputs) collectNeeded(k, needed);
    std::vector<Statement> stage;
    for (size_t k : needed) stage.push_back(setup(k));
    WithBlock issue = onStream(kInputStream);
    for (size_t k : shape_.inputs) issue.body.push_back(communication(k));
    stage.push_back(std::move(issue));
    return stage;
  }

  // The setup the computation and the outputs use, the input waits, the
  // computation, then the event and the outputs.
  std::vector<Statement> computeStage() const {
    std::set<size_t> needed;
    for (size_t k = 0; k < loop_.body.size(); ++k)
      if (shape_.roles[k] == Role::Compute || shape_.roles[k] == Role::Output) collectNeeded(k, needed);
    std::vector<Statement> stage;
    for (size_t k = 0; k < loop_.body.size(); ++k) {
      for (size_t input : shape_.inputs)
        if (auto at = shape_.waitBefore.find(input); at != shape_.waitBefore.end() && at->second == k)
          stage.push_back(eventOp(OpKind::Wait, arrayOf_.at(input), number()));
      if (shape_.roles[k] == Role::Compute || (shape_.roles[k] == Role::Setup && needed.count(k)))
        stage.push_back(setup(k));
    }
    if (done_.empty()) return stage;
    stage.push_back(eventOp(OpKind::RecordEvent, done_, number()));
    if (!shape_.rotated.empty()) {
      // Later inputs refill the slot this iteration read.
      WithBlock refill = onStream(kInputStream);
      refill.body.push_back(eventOp(OpKind::WaitEvent, done_, number()));
      stage.push_back(std::move(refill));
    }
    if (!shape_.outputs.empty()) {
      WithBlock send = onStream(shape_.inputs.empty() ? kInputStream : kOutputStream);
      send.body.push_back(eventOp(OpKind::WaitEvent, done_, number()));
      for (size_t k : shape_.outputs) send.body.push_back(communication(k));
      stage.push_back(std::move(send));
    }
    return stage;
  }

  // for step in range(start, end + d): issue input `step`, compute `step - d`.
  Statement skewedLoop() const {
    ForLoop skewed;
    skewed.loc = loop_.loc;
    skewed.index = NameDef{names_.take("step")};
    const Expr step = Expr::name(skewed.index.name);
    skewed.start = loop_.start;
    skewed.end = plus(loop_.end, depth_);

    IfBlock issue;
    issue.cond = Condition::compare(CompareOp::Less, step, loop_.end);
    issue.thenBody.push_back(intBinding(index(), step));
    for (Statement& s : inputStage()) issue.thenBody.push_back(std::move(s));

    IfBlock compute;
    compute.cond = Condition::compare(CompareOp::GreaterEqual, step, plus(loop_.start, depth_));
    compute.thenBody.push_back(intBinding(index(), step - Expr::literal(depth_)));
    for (Statement& s : computeStage()) compute.thenBody.push_back(std::move(s));

    skewed.body.push_back(std::move(issue));
    skewed.body.push_back(std::move(compute));
    return skewed;
  }

  // After the loop the current stream waits every output, and every input
  // no computation of the loop waited.
  Statement joinUnwaited() const {
    ForLoop join;
    join.index = NameDef{names_.takeForLoopIndex("j")};
    join.start = loop_.start;
    join.end = loop_.end;
    const Expr j = number(join.index.name);
    for (size_t k : shape_.inputs)
      if (!shape_.waitBefore.count(k)) join.body.push_back(eventOp(OpKind::Wait, arrayOf_.at(k), j));
    for (size_t k : shape_.outputs) join.body.push_back(eventOp(OpKind::Wait, arrayOf_.at(k), j));
    return join;
  }

  std::string describe() const {
    std::vector<std::string> parts;
    for (size_t k : shape_.inputs) {
      const Operation& op = loop_.body[k].op();
      parts.push_back(
          fmt::format("the {}{} of iteration {} + {} is issued on stream({}) before iteration {}'s "
                      "computation{}",
                      quoted(op), lineOf(op.loc), index(), depth_, kInputStream, index(),
                      shape_.waitBefore.count(k) ? ""
                                                 : ", which does not read it, and is waited after "
                                                   "the loop"));
    }
    for (size_t k : shape_.rotated) {
      const Operation& def = loop_.body[k].op();
      parts.push_back(
          fmt::format("'{}' rotates through {} slots of '{}'", def.result()->name, depth_ + 1, ringOf_.at(k)));
    }
    for (size_t k : shape_.outputs) {
      const Operation& op = loop_.body[k].op();
      parts.push_back(
          fmt::format("the {}{} goes on stream({}) after an event of the computation, and is waited "
                      "after the loop",
                      quoted(op), lineOf(op.loc), shape_.inputs.empty() ? kInputStream : kOutputStream));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  const ForLoop& loop_;
  const BodyShape& shape_;
  const int64_t depth_;  // 0 without inputs: nothing is issued ahead
  FreshNames& names_;
  std::map<size_t, std::string> arrayOf_;  // communication -> its handle array
  std::map<size_t, std::string> ringOf_;   // rotating allocation -> its ring buffer
  std::string done_;                       // the event array, when one is needed
};

}  // namespace

std::variant<PipelinedLoop, PipelineStop> pipelineLoop(const ForLoop& loop, int64_t depth, const std::string& main,
                                                       bool captureMain, FreshNames& names, const Program& program) {
  BodyShape shape;
  if (auto stop = sortBody(loop, shape)) return *stop;
  if (auto stop = findRotated(loop, shape)) return *stop;
  return PipelineWriter(loop, shape, depth, names, program).write(main, captureMain);
}

Result<int64_t> PipelinePass::parseOptions(std::string_view options) {
  constexpr std::string_view kKey = "depth=";
  auto bad = [&](std::string why) -> Result<int64_t> {
    return Diagnostic{{},
                      fmt::format("pass 'pipeline': {} (write pipeline{{depth=d}}, d from 1 to {})", why, kMaxDepth)};
  };
  if (options.substr(0, kKey.size()) != kKey) return bad(fmt::format("unknown option '{}'", options));
  std::string_view value = options.substr(kKey.size());
  int64_t depth = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), depth);
  if (error != std::errc() || end != value.data() + value.size() || value.empty())
    return bad(fmt::format("depth '{}' is not an integer", value));
  if (depth < 1 || depth > kMaxDepth) return bad(fmt::format("depth {} is out of range", depth));
  return depth;
}

Status PipelinePass::run(Program& program, const PassContext& context) {
  std::optional<std::vector<RaceFinding>> races;
  for (size_t k = 0; k < program.body.size(); ++k) {
    context.checkCancelled();
    if (!program.body[k].isFor()) continue;
    const ForLoop& loop = program.body[k].loop();
    FreshNames names(program);
    const std::string main = names.take("main");
    std::variant<PipelinedLoop, PipelineStop> rewrite = pipelineLoop(loop, depth_, main, true, names, program);
    if (const auto* stop = std::get_if<PipelineStop>(&rewrite)) {
      context.remark(kName, loop.loc, "loop left as it is: it does not fit the pipeline's shape",
                     {Note{stop->loc, stop->reason}});
      continue;
    }
    if (!context.raceCheck) {
      context.remark(kName, loop.loc, "loop left as it is: no race check is available to prove the pipeline safe");
      continue;
    }
    if (!races) {
      if (auto error = verifyProgram(program, context.bindings, context.cancel)) {
        context.remark(kName, loop.loc,
                       fmt::format("loop left as it is: the program does not verify with the bound parameters: {}",
                                   error->message));
        return std::nullopt;
      }
      races = context.raceCheck(program);
    }
    PipelinedLoop& pipelined = std::get<PipelinedLoop>(rewrite);
    Program candidate = program;
    const auto at = candidate.body.begin() + static_cast<std::ptrdiff_t>(k);
    candidate.body.erase(at);
    candidate.body.insert(candidate.body.begin() + static_cast<std::ptrdiff_t>(k), pipelined.statements.begin(),
                          pipelined.statements.end());
    if (auto error = verifyProgram(candidate, context.bindings, context.cancel)) {
      context.remark(kName, loop.loc,
                     fmt::format("loop left as it is: pipelined it would not verify: {}", error->message));
      continue;
    }
    std::vector<RaceFinding> after = context.raceCheck(candidate);
    std::vector<RaceFinding> added = newRaces(*races, after);
    if (!added.empty()) {
      context.remark(kName, loop.loc,
                     fmt::format("loop left as it is: its iterations are not independent; pipelined there would be "
                                 "a {}",
                                 describeRace(added.front())),
                     raceNotes(added.front()));
      continue;
    }
    const std::string depth = pipelined.hasInput ? fmt::format(" at depth {}", depth_) : "";
    context.remark(
        kName, loop.loc,
        fmt::format("loop pipelined{}: {} (race-checked with the bound parameters)", depth, pipelined.moved));
    k += pipelined.statements.size() - 1;
    program = std::move(candidate);
    races = std::move(after);
  }
  return std::nullopt;
}

}  // namespace hostir
