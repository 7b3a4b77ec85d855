#include "runtime/evaluator.h"

#include <fmt/format.h>

#include <algorithm>

#include <new>

#include "ir/mesh.h"
#include "ir/names.h"
#include "ir/shapes.h"
#include "runtime/compiled_program.h"
#include "runtime/issue_rules.h"

namespace hostir {

// ---------------------------------------------------------------------------
// Compiling into the form of runtime/compiled_program.h

namespace {

constexpr std::array<int32_t, kMaxOperands> absentOperands() {
  std::array<int32_t, kMaxOperands> slots{};
  for (int32_t& slot : slots) slot = -1;
  return slots;
}

// An instruction as the compiler builds it, every operand in place; push()
// lays it out as the interpreter reads it (runtime/compiled_program.h).
struct Draft {
  Instruction in;
  std::array<int32_t, kMaxOperands> operand = absentOperands();
  std::array<int32_t, kMaxOperands> accessSlot = absentOperands();
  std::array<Effect, kMaxOperands> effect{};
  std::vector<int32_t> dims;
  InstructionDetail detail;
};

class Compiler {
 public:
  Compiler(const Program& p, CompiledProgram& out) : program_(p), out_(out) {}

  // `meshBuiltins`: this rank's coord(AXIS) and size(AXIS), in the mesh's order.
  void compile(const std::map<std::string, int64_t>& params,
               const std::vector<std::pair<std::string, int64_t>>& meshBuiltins) {
    // Float and dtype parameters are bound into the program's operands (bindValueParams).
    for (const Param& param : program_.params)
      if (param.kind == ParamKind::Int)
        out_.paramSlots.emplace_back(define(param.name, ValueKind::Int), params.at(param.name));
    for (const auto& [name, value] : meshBuiltins) out_.paramSlots.emplace_back(define(name, ValueKind::Int), value);
    for (const Decl& d : program_.decls)
      if (d.kind == DeclKind::Input) out_.inputSlots.emplace_back(define(d.name, ValueKind::Tensor), d.name);
    body(program_.body);
    for (const Decl& d : program_.decls)
      if (d.kind == DeclKind::Output) out_.outputSlots.emplace_back(lookup(d.name), d.name);
    out_.slotCount = names_.slotCount();
  }

 private:
  int32_t define(const std::string& name, ValueKind kind) { return names_.define(name, kind).slot; }

  // A handle or event array's one slot, in no scope: its elements outlive
  // the loop or branch that defines them.
  int32_t arraySlot(const std::string& name) {
    auto found = arraySlots_.find(name);
    if (found == arraySlots_.end()) found = arraySlots_.emplace(name, names_.anonymousSlot()).first;
    return found->second;
  }

  int32_t lookup(const std::string& name) const {
    if (const NameSlot* slot = names_.lookup(name)) return slot->slot;
    throw std::logic_error(fmt::format("internal error: '{}' is not bound (was the program verified?)", name));
  }

  void emitInt(const Expr& e, IntCode& code) const {
    const ExprNode& n = e.node();
    switch (n.kind) {
      case ExprKind::Literal: code.code.push_back({IntOpcode::Const, n.value}); return;
      case ExprKind::Name: code.code.push_back({IntOpcode::Slot, lookup(n.name)}); return;
      case ExprKind::Binary: {
        emitInt(n.operands[0], code);
        emitInt(n.operands[1], code);
        static constexpr IntOpcode kOps[] = {IntOpcode::Add, IntOpcode::Sub, IntOpcode::Mul, IntOpcode::Div,
                                             IntOpcode::Mod};
        code.code.push_back({kOps[static_cast<int>(n.binaryOp)], 0});
        return;
      }
      case ExprKind::Call: {
        emitInt(n.operands[0], code);
        emitInt(n.operands[1], code);
        static constexpr IntOpcode kFns[] = {IntOpcode::CeilDiv, IntOpcode::Min, IntOpcode::Max};
        code.code.push_back({kFns[static_cast<int>(n.function)], 0});
        return;
      }
    }
  }

  // A condition as integer code of 0 or 1; `and` and `or` jump past their
  // right side when the left one decides (ir/condition.h: short-circuit).
  void emitCondition(const Condition& c, IntCode& code) const {
    const ConditionNode& n = c.node();
    switch (n.kind) {
      case ConditionKind::Compare: {
        emitInt(n.lhs, code);
        emitInt(n.rhs, code);
        static constexpr IntOpcode kCompare[] = {IntOpcode::Equal,     IntOpcode::NotEqual, IntOpcode::Less,
                                                 IntOpcode::LessEqual, IntOpcode::Greater,  IntOpcode::GreaterEqual};
        code.code.push_back({kCompare[static_cast<int>(n.compare)], 0});
        return;
      }
      case ConditionKind::Not:
        emitCondition(n.operands[0], code);
        code.code.push_back({IntOpcode::Not, 0});
        return;
      case ConditionKind::And:
      case ConditionKind::Or: {
        emitCondition(n.operands[0], code);
        size_t jump = code.code.size();
        code.code.push_back({n.kind == ConditionKind::And ? IntOpcode::AndJump : IntOpcode::OrJump, 0});
        emitCondition(n.operands[1], code);
        code.code[jump].operand = static_cast<int64_t>(code.code.size());
        return;
      }
    }
  }

  int32_t conditionCode(const Condition& c) {
    IntCode code;
    emitCondition(c, code);
    out_.ints.push_back(std::move(code));
    return static_cast<int32_t>(out_.ints.size() - 1);
  }

  // Appends `draft` to the code: its operands (as many as its operation's
  // signature has, two for a control instruction), dims and details to the
  // program's pools. Returns its index.
  size_t push(const Draft& draft) {
    Instruction in = draft.in;
    const size_t operands =
        in.kind == Instruction::Kind::Op ? signatureOf(in.op).operands.size() : size_t{kLoopEnd + 1};
    in.firstOperand = static_cast<uint32_t>(out_.operands.size());
    for (size_t i = 0; i < operands; ++i)
      out_.operands.push_back(OperandEntry{draft.operand[i], draft.accessSlot[i], draft.effect[i]});
    in.firstDim = static_cast<uint32_t>(out_.dims.size());
    in.dimCount = static_cast<uint32_t>(draft.dims.size());
    out_.dims.insert(out_.dims.end(), draft.dims.begin(), draft.dims.end());
    in.detail = static_cast<uint32_t>(out_.details.size());
    out_.details.push_back(draft.detail);
    out_.code.push_back(in);
    return out_.code.size() - 1;
  }

  int32_t intCode(const Expr& e) {
    IntCode code;
    emitInt(e, code);
    out_.ints.push_back(std::move(code));
    return static_cast<int32_t>(out_.ints.size() - 1);
  }

  void body(const std::vector<Statement>& stmts) {
    for (const Statement& s : stmts) {
      if (s.isOp()) {
        operation(s.op());
        continue;
      }
      if (s.isWith()) {
        withBlock(s.with());
        continue;
      }
      if (s.isIf()) {
        ifBlock(s.ifBlock());
        continue;
      }
      const ForLoop& loop = s.loop();
      Draft begin;
      begin.in.kind = Instruction::Kind::LoopBegin;
      begin.detail.loc = loop.loc;
      begin.operand[kLoopStart] = loop.start.empty() ? intCode(Expr(0)) : intCode(loop.start);
      begin.operand[kLoopEnd] = intCode(loop.end);
      names_.openScope();
      begin.in.result = define(loop.index.name, ValueKind::Int);
      begin.in.endSlot = names_.anonymousSlot();
      size_t beginAt = push(begin);
      body(loop.body);
      names_.closeScope();
      Draft end = begin;
      end.in.kind = Instruction::Kind::LoopEnd;
      end.in.jump = static_cast<int32_t>(beginAt);
      push(end);
      out_.code[beginAt].jump = static_cast<int32_t>(out_.code.size());
    }
  }

  // IfBegin (to the else branch or the end when the condition is 0), the
  // then branch, and with an else branch, Else (to the end) and the else
  // branch. Each branch is a scope.
  void ifBlock(const IfBlock& block) {
    Draft begin;
    begin.in.kind = Instruction::Kind::IfBegin;
    begin.detail.loc = block.loc;
    begin.operand[kIfCondition] = conditionCode(block.cond);
    size_t beginAt = push(begin);
    branch(block.thenBody);
    if (block.elseBody.empty()) {
      out_.code[beginAt].jump = static_cast<int32_t>(out_.code.size());
      return;
    }
    Draft otherwise;
    otherwise.in.kind = Instruction::Kind::Else;
    otherwise.detail.loc = block.loc;
    size_t elseAt = push(otherwise);
    out_.code[beginAt].jump = static_cast<int32_t>(out_.code.size());
    branch(block.elseBody);
    out_.code[elseAt].jump = static_cast<int32_t>(out_.code.size());
  }

  void branch(const std::vector<Statement>& stmts) {
    names_.openScope();
    body(stmts);
    names_.closeScope();
  }

  // set_current_stream(S), the body, then the saved stream current again;
  // no scope, so the body's names stay bound after it.
  void withBlock(const WithBlock& with) {
    Draft begin;
    begin.in.kind = Instruction::Kind::WithBegin;
    begin.detail.loc = with.loc;
    begin.detail.operandLoc[kWithStream] = with.stream.loc.valid() ? with.stream.loc : with.loc;
    if (with.stream.form == Arg::Form::Stream) {
      begin.operand[kWithStream] = intCode(with.stream.expr);
      begin.in.streamNumberMask = 1u << kWithStream;
    } else {
      begin.operand[kWithStream] = lookup(with.stream.nameValue());
    }
    begin.in.result = names_.anonymousSlot();
    push(begin);
    body(with.body);
    Draft end = begin;
    end.in.kind = Instruction::Kind::WithEnd;
    push(end);
  }

  // What the statement does to each tensor, from the op table: the slot
  // each tensor operand (or the name standing for it) accesses, its effect
  // and its name.
  void accesses(const Operation& op, Draft& d) {
    const OpSignature& sig = op.signature();
    const Instruction& in = d.in;
    auto out = operandIndex(sig, "out");
    bool hasOut = out && op.operands[*out];
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (sig.operands[i].kind == OperandKind::Type && sig.category == OpCategory::Compute) {
        // fill, iota: the computation writes the tensor its type names, its result.
        d.effect[i] = Effect::Write;
        d.accessSlot[i] = in.result;
        d.detail.accessName[i] = d.detail.resultName;
      }
      if (sig.operands[i].kind != OperandKind::Tensor) continue;
      d.effect[i] = operandEffect(sig, i, hasOut);
      d.accessSlot[i] = d.operand[i];
      if (op.operands[i]) d.detail.accessName[i] = op.operands[i]->nameValue();
      // A name of `y = op(...)` stands for its written operand (v and i of `v, i = top_k(...)`).
      for (size_t k = 0; k < op.results.size() && !hasOut; ++k)
        if (resultOperand(sig, k) == i) {
          d.accessSlot[i] = k == 0 ? in.result : in.secondResult;
          d.detail.accessName[i] = op.results[k].toString();
        }
    }
  }

  void operation(const Operation& op) {
    Draft d;
    Instruction& in = d.in;
    in.op = op.kind;
    d.detail.loc = op.loc;
    const OpSignature& sig = op.signature();
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (!op.operands[i]) continue;
      const Arg& arg = *op.operands[i];
      d.detail.operandLoc[i] = arg.loc.valid() ? arg.loc : op.loc;
      switch (sig.operands[i].kind) {
        case OperandKind::Tensor:
        case OperandKind::Event:
        case OperandKind::Handle:
          if (arg.isElement()) {
            d.operand[i] = arraySlot(arg.nameValue());
            in.operandElement = intCode(arg.index);
            d.detail.accessName[i] = arg.nameValue();
          } else {
            d.operand[i] = lookup(arg.nameValue());
          }
          break;
        case OperandKind::Stream:
          if (arg.form == Arg::Form::Stream) {
            d.operand[i] = intCode(arg.expr);
            in.streamNumberMask |= static_cast<uint16_t>(1u << i);
          } else {
            d.operand[i] = lookup(arg.nameValue());
          }
          break;
        case OperandKind::Int: d.operand[i] = intCode(arg.expr); break;
        case OperandKind::Type:
          in.dtype = arg.type.dtype;
          for (const Expr& dim : arg.type.dims) d.dims.push_back(intCode(dim));
          break;
        case OperandKind::IntList:  // no operation has a type and a list both
          for (const Expr& item : arg.items) d.dims.push_back(intCode(item));
          break;
        case OperandKind::Bool:
          d.operand[i] = intCode(Expr(arg.boolValue ? 1 : 0));
          if (op.kind == OpKind::Allocate) in.zero = arg.boolValue;
          break;
        case OperandKind::ReduceOp: in.reduceOp = *parseReduceOp(arg.nameValue()); break;
        case OperandKind::Float:
          d.operand[i] = static_cast<int32_t>(out_.floats.size());
          out_.floats.push_back(arg.floatValue);
          break;
        case OperandKind::DType: in.dtype = arg.type.dtype; break;
        case OperandKind::MeshAxes: {
          auto axes = meshAxesOf(program_, arg);  // verified
          if (!axes) throw std::logic_error("internal error: " + axes.error().message);
          d.operand[i] = intCode(Expr(static_cast<int64_t>(*axes)));
          if (*axes != allMeshAxes(program_.mesh.size())) out_.meshOvers.push_back(*axes);
          break;
        }
      }
    }
    if (const NameDef* result = op.result()) {
      if (result->isElement()) {
        in.result = arraySlot(result->name);
        in.resultElement = intCode(result->index);
      } else {
        in.result = define(result->name, sig.resultKind);
      }
      d.detail.resultName = result->toString();
    }
    if (op.results.size() > 1) in.secondResult = define(op.results[1].name, sig.resultKind);
    in.issuesWork = issuesWork(sig.category);
    accesses(op, d);
    push(d);
  }

  const Program& program_;
  CompiledProgram& out_;
  NameResolver names_;
  std::unordered_map<std::string, int32_t> arraySlots_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Running: the interpreter loop; each operation's work is issued by its
// rule in runtime/issue_*.cpp (runtime/issue_rules.h).

RunFrame::RunFrame(const CompiledProgram& compiled, Backend& target, int64_t rankInTeam, int64_t teamSize)
    : program(compiled), backend(target), rank(rankInTeam), world(teamSize), values(compiled.slotCount) {
  for (auto [slot, v] : program.paramSlots) value(slot).integer = v;
  value(kRankSlot).integer = rank;
  value(kWorldSlot).integer = world;
}

const Event& RunFrame::eventOperand(const Instruction& in, size_t operand) {
  RuntimeValue& v = value(slot(in, operand));
  if (in.operandElement < 0) return v.event;
  int64_t index = integer(in.operandElement);
  auto found = v.elements.find(index);
  if (found == v.elements.end())
    throw DiagnosticError{
        Diagnostic{program.detail(in).operandLoc[operand],
                   fmt::format("'{}' waits on '{}[{}]', which rank {} has not issued yet", signatureOf(in.op).name,
                               program.detail(in).accessName[operand], index, rank)}};
  return found->second;
}

Event& RunFrame::eventResult(const Instruction& in) {
  RuntimeValue& v = value(in.result);
  if (in.resultElement < 0) return v.event;
  int64_t index = integer(in.resultElement);
  if (index < 0 || v.elements.count(index))
    throw DiagnosticError{
        Diagnostic{program.detail(in).loc,
                   index < 0 ? fmt::format("'{}' has the negative index {}", program.detail(in).resultName, index)
                             : fmt::format("'{}' is defined twice in this run (index {}, rank {})",
                                           program.detail(in).resultName, index, rank)}};
  return v.elements[index];
}

namespace {

// What each statement tells the backend before its work, built once per
// run rather than per issued operation: the accesses point into this
// run's values, which stay where they are until the run ends.
std::vector<OperationInfo> operationInfos(RunFrame& frame) {
  const std::vector<Instruction>& code = frame.program.code;
  std::vector<OperationInfo> infos(code.size());
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const Instruction& in = code[pc];
    if (in.kind != Instruction::Kind::Op) continue;
    OperationInfo& info = infos[pc];
    const InstructionDetail& detail = frame.program.detail(in);
    info.kind = in.op;
    info.loc = detail.loc;
    info.result = detail.resultName;
    for (size_t i = 0; i < signatureOf(in.op).operands.size(); ++i) {
      const OperandEntry& operand = frame.program.operand(in, i);
      if (operand.access >= 0) {
        info.tensors[i] = TensorAccess{&frame.value(operand.access).tensor, operand.effect};
        info.names[i] = detail.accessName[i];
      }
    }
  }
  return infos;
}

// Runs the control instruction at `pc` (a loop's, a with block's or an if
// block's begin or end, or an else); returns the next instruction's index.
size_t stepControl(RunFrame& frame, const Instruction& in, size_t pc) {
  switch (in.kind) {
    case Instruction::Kind::LoopBegin: {
      int64_t start = frame.integer(frame.slot(in, kLoopStart));
      int64_t end = frame.integer(frame.slot(in, kLoopEnd));
      if (start >= end) return static_cast<size_t>(in.jump);
      frame.value(in.result).integer = start;
      frame.value(in.endSlot).integer = end;
      return pc + 1;
    }
    case Instruction::Kind::LoopEnd: {
      int64_t next = ++frame.value(in.result).integer;
      return next < frame.value(in.endSlot).integer ? static_cast<size_t>(in.jump) + 1 : pc + 1;
    }
    case Instruction::Kind::WithBegin:
      frame.value(in.result).stream = frame.current;
      frame.current = frame.stream(in, kWithStream);
      return pc + 1;
    case Instruction::Kind::WithEnd: frame.current = frame.value(in.result).stream; return pc + 1;
    case Instruction::Kind::IfBegin:
      return frame.integer(frame.slot(in, kIfCondition)) != 0 ? pc + 1 : static_cast<size_t>(in.jump);
    case Instruction::Kind::Else: return static_cast<size_t>(in.jump);
    case Instruction::Kind::Op: break;
  }
  return pc + 1;
}

}  // namespace

Evaluator::Evaluator(const Program& program, const std::map<std::string, int64_t>& params, int64_t rank, int64_t world)
    : rank_(rank), world_(world) {
  NameResolver names;
  std::vector<int64_t> integers{rank, world};
  auto defineInteger = [&](const std::string& name, int64_t value) {
    names.define(name, ValueKind::Int);
    integers.push_back(value);
  };
  for (const auto& [name, value] : params) defineInteger(name, value);
  auto lookup = [&](const std::string& name) -> std::optional<int64_t> {
    const NameSlot* slot = names.lookup(name);
    if (!slot) return std::nullopt;
    return integers[static_cast<size_t>(slot->slot)];
  };
  // The verifier checked the mesh with these params and this team.
  std::vector<std::pair<std::string, int64_t>> meshBuiltins;
  std::vector<int64_t> mesh;
  if (!program.mesh.empty()) {
    auto extents = hostir::meshExtents(program, lookup, world);
    if (!extents) throw std::logic_error("internal error: the mesh does not evaluate: " + extents.error().message);
    forEachMeshBuiltin(program, *extents, rank, [&](const std::string& name, int64_t value) {
      meshBuiltins.emplace_back(name, value);
      defineInteger(name, value);
    });
    mesh = *extents;
  }
  auto compiled = std::make_shared<CompiledProgram>();
  Compiler(program, *compiled).compile(params, meshBuiltins);
  compiled->meshExtents = std::move(mesh);
  std::sort(compiled->meshOvers.begin(), compiled->meshOvers.end());
  compiled->meshOvers.erase(std::unique(compiled->meshOvers.begin(), compiled->meshOvers.end()),
                            compiled->meshOvers.end());
  // Rank-local and global shapes of the inputs and outputs.
  for (const Decl& d : program.decls) {
    TensorSpec spec{d.name, d.type.dtype, {}, {}, d.shardAxis};
    spec.globalShape.size = d.type.dims.size();
    for (size_t i = 0; i < d.type.dims.size(); ++i) {
      auto v = evaluate(d.type.dims[i], lookup);
      if (!v) throw std::logic_error("internal error: declaration shape does not evaluate: " + v.error().message);
      spec.globalShape[i] = *v;
    }
    spec.localShape = spec.globalShape;
    if (d.shardAxis && !d.shardOver.empty()) {
      const size_t axis = meshAxisIndex(program, d.shardOver);
      spec.slices = compiled->meshExtents[axis];
      for (int64_t r = 0; r < world; ++r) spec.sliceOfRank.push_back(meshCoordinates(compiled->meshExtents, r)[axis]);
    }
    if (d.shardAxis) {
      int64_t& extent = spec.localShape[static_cast<size_t>(*d.shardAxis)];
      extent = shardExtent(extent, spec.sliceCount(world));
    }
    (d.kind == DeclKind::Input ? compiled->inputs : compiled->outputs).push_back(spec);
  }
  compiled_ = std::move(compiled);
}

Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;

const std::vector<TensorSpec>& Evaluator::inputs() const { return compiled_->inputs; }
const std::vector<TensorSpec>& Evaluator::outputs() const { return compiled_->outputs; }
const std::vector<int64_t>& Evaluator::meshExtents() const { return compiled_->meshExtents; }

std::map<std::string, TensorView> Evaluator::run(Backend& backend, const std::map<std::string, TensorView>& inputs) {
  const CompiledProgram& cp = *compiled_;
  RunFrame frame(cp, backend, rank_, world_);
  for (const auto& [slot, name] : cp.inputSlots) frame.value(slot).tensor = inputs.at(name);
  if (!cp.meshExtents.empty()) backend.useMesh(cp.meshExtents, cp.meshOvers);
  backend.beginRun();
  frame.current = backend.mainStream();
  issued_ = 0;
  const std::vector<OperationInfo> infos = operationInfos(frame);
  for (size_t pc = 0; pc < cp.code.size();) {
    const Instruction& in = cp.code[pc];
    if (in.kind != Instruction::Kind::Op) {
      pc = stepControl(frame, in, pc);
      continue;
    }
    backend.beginOperation(infos[pc]);
    ++pc;
    try {
      issueOperation(frame, in);
    } catch (const std::bad_alloc&) {
      // Host memory for issuing it (a staging buffer, a queue): an error at the statement.
      throw DiagnosticError{
          Diagnostic{cp.detail(in).loc, fmt::format("out of memory while issuing {}", signatureOf(in.op).name)}};
    }
    if (in.issuesWork) ++issued_;
  }

  std::map<std::string, TensorView> outputs;
  for (const auto& [slot, name] : cp.outputSlots) outputs[name] = frame.value(slot).tensor;
  frame.values.clear();  // drop the host's references before waiting, so finished work frees its buffers
  backend.synchronizeHost();
  return outputs;
}

}  // namespace hostir
