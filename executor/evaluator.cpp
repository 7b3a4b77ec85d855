#include "executor/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <new>

#include "hostir/byte_size.h"
#include "hostir/names.h"
#include "hostir/shapes.h"

namespace hostir {

// ---------------------------------------------------------------------------
// Compiled form

namespace {

enum class IntOpcode : uint8_t { Const, Slot, Add, Sub, Mul, Div, Mod, CeilDiv, Min, Max };

struct IntInstr {
  IntOpcode op;
  int64_t operand;  // Const: the value; Slot: the slot
};

// An integer expression in postfix form.
struct IntCode {
  std::vector<IntInstr> code;
};

struct Instruction {
  enum class Kind : uint8_t { Op, LoopBegin, LoopEnd, WithBegin, WithEnd };
  Kind kind = Kind::Op;
  OpKind op = OpKind::Wait;
  SourceLoc loc;
  int32_t result = -1;
  // Per signature operand, read by the typed positions of hostir/ops.h
  // (operands::Linear::bias): a value slot (names), an IntCode index
  // (integers and stream numbers), or -1 when absent.
  std::array<int32_t, kMaxOperands> operand{-1, -1, -1, -1};
  std::array<SourceLoc, kMaxOperands> operandLoc{};  // for run-time errors about one operand
  // Per signature operand: the slot of the tensor it accesses (for `out`,
  // the result of `y = op(...)`) and the effect, for OperationInfo.
  std::array<int32_t, kMaxOperands> accessSlot{-1, -1, -1, -1};
  std::array<Effect, kMaxOperands> effect{};
  uint8_t streamNumberMask = 0;  // which operands are `stream(e)` numbers
  bool issuesWork = false;       // counted in issuedOperations (hostir::issuesWork)
  std::vector<int32_t> dims;     // allocate: IntCode per dim
  DType dtype = DType::F32;
  bool zero = false;
  ReduceOp reduceOp = ReduceOp::Sum;
  IntFunction function = IntFunction::Min;
  // Loops: operand[kLoopStart] start, operand[kLoopEnd] end (IntCode); result
  // is the index slot, endSlot holds the bound; jump is the matching instruction.
  int32_t endSlot = -1;
  int32_t jump = -1;
  std::string resultName;  // for observers (race checker, traces)
};

// The operands of LoopBegin and LoopEnd.
enum : size_t { kLoopStart, kLoopEnd };

// WithBegin: operand[kWithStream] is the block's stream (a slot, or an
// IntCode with streamNumberMask); result is the slot that keeps the stream
// current before the block, which WithEnd (result, the same slot) restores.
enum : size_t { kWithStream };

}  // namespace

struct RuntimeValue {
  int64_t integer = 0;
  TensorView tensor;
  Stream* stream = nullptr;
  Event event;
};

class CompiledProgram {
 public:
  std::vector<Instruction> code;
  std::vector<IntCode> ints;
  size_t slotCount = 0;
  std::vector<std::pair<int32_t, int64_t>> paramSlots;
  std::vector<std::pair<int32_t, std::string>> inputSlots;
  std::vector<std::pair<int32_t, std::string>> outputSlots;
  std::vector<TensorSpec> inputs, outputs;
};

namespace {

class Compiler {
 public:
  Compiler(const Program& p, CompiledProgram& out) : program_(p), out_(out) {}

  void compile(const std::map<std::string, int64_t>& params) {
    for (const Param& param : program_.params)
      out_.paramSlots.emplace_back(define(param.name, ValueKind::Int), params.at(param.name));
    for (const Decl& d : program_.decls)
      if (d.kind == DeclKind::Input) out_.inputSlots.emplace_back(define(d.name, ValueKind::Tensor), d.name);
    body(program_.body);
    for (const Decl& d : program_.decls)
      if (d.kind == DeclKind::Output) out_.outputSlots.emplace_back(lookup(d.name), d.name);
    out_.slotCount = names_.slotCount();
  }

 private:
  int32_t define(const std::string& name, ValueKind kind) { return names_.define(name, kind).slot; }

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
      const ForLoop& loop = s.loop();
      Instruction begin;
      begin.kind = Instruction::Kind::LoopBegin;
      begin.loc = loop.loc;
      begin.operand[kLoopStart] = loop.start.empty() ? intCode(Expr(0)) : intCode(loop.start);
      begin.operand[kLoopEnd] = intCode(loop.end);
      names_.openScope();
      begin.result = define(loop.index.name, ValueKind::Int);
      begin.endSlot = names_.anonymousSlot();
      size_t beginAt = out_.code.size();
      out_.code.push_back(begin);
      body(loop.body);
      names_.closeScope();
      Instruction end = begin;
      end.kind = Instruction::Kind::LoopEnd;
      end.jump = static_cast<int32_t>(beginAt);
      out_.code.push_back(end);
      out_.code[beginAt].jump = static_cast<int32_t>(out_.code.size());
    }
  }

  // set_current_stream(S), the body, then the saved stream current again;
  // no scope, so the body's names stay bound after it.
  void withBlock(const WithBlock& with) {
    Instruction begin;
    begin.kind = Instruction::Kind::WithBegin;
    begin.loc = with.loc;
    begin.operandLoc[kWithStream] = with.stream.loc.valid() ? with.stream.loc : with.loc;
    if (with.stream.form == Arg::Form::Stream) {
      begin.operand[kWithStream] = intCode(with.stream.expr);
      begin.streamNumberMask = 1u << kWithStream;
    } else {
      begin.operand[kWithStream] = lookup(with.stream.nameValue());
    }
    begin.result = names_.anonymousSlot();
    out_.code.push_back(begin);
    body(with.body);
    Instruction end = begin;
    end.kind = Instruction::Kind::WithEnd;
    out_.code.push_back(end);
  }

  void operation(const Operation& op) {
    Instruction in;
    in.op = op.kind;
    in.loc = op.loc;
    const OpSignature& sig = op.signature();
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (!op.operands[i]) continue;
      const Arg& arg = *op.operands[i];
      in.operandLoc[i] = arg.loc.valid() ? arg.loc : op.loc;
      switch (sig.operands[i].kind) {
        case OperandKind::Tensor:
        case OperandKind::Event:
        case OperandKind::Handle: in.operand[i] = lookup(arg.nameValue()); break;
        case OperandKind::Stream:
          if (arg.form == Arg::Form::Stream) {
            in.operand[i] = intCode(arg.expr);
            in.streamNumberMask |= static_cast<uint8_t>(1u << i);
          } else {
            in.operand[i] = lookup(arg.nameValue());
          }
          break;
        case OperandKind::Int: in.operand[i] = intCode(arg.expr); break;
        case OperandKind::Type:
          in.dtype = arg.type.dtype;
          for (const Expr& dim : arg.type.dims) in.dims.push_back(intCode(dim));
          break;
        case OperandKind::Bool: in.zero = arg.boolValue; break;
        case OperandKind::ReduceOp: in.reduceOp = *parseReduceOp(arg.nameValue()); break;
      }
    }
    in.function = op.intFunction;
    if (const NameDef* result = op.result()) {
      in.result = define(result->name, sig.resultKind);
      in.resultName = result->name;
    }
    in.issuesWork = issuesWork(sig.category);
    // What the statement does to each tensor, from the op table.
    auto out = operandIndex(sig, "out");
    bool hasOut = out && op.operands[*out];
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (sig.operands[i].kind != OperandKind::Tensor) continue;
      in.effect[i] = operandEffect(sig, i, hasOut);
      in.accessSlot[i] = in.operand[i];
      if (out && i == *out && !hasOut && sig.resultMode == ResultMode::OutOrResult) in.accessSlot[i] = in.result;
    }
    out_.code.push_back(std::move(in));
  }

  const Program& program_;
  CompiledProgram& out_;
  NameResolver names_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Running

namespace {

// Evaluates verified integer code: the verifier already ruled out overflow,
// division by zero and negative operands for these params and this rank.
int64_t evalInt(const IntCode& code, const std::vector<RuntimeValue>& values) {
  int64_t stack[64];
  std::vector<int64_t> deep;  // only for expressions nested deeper than the fixed stack
  int64_t* top = stack;
  if (code.code.size() > 64) {
    deep.resize(code.code.size());
    top = deep.data();
  }
  int64_t* sp = top;
  for (const IntInstr& i : code.code) {
    switch (i.op) {
      case IntOpcode::Const: *sp++ = i.operand; break;
      case IntOpcode::Slot: *sp++ = values[static_cast<size_t>(i.operand)].integer; break;
      default: {
        int64_t b = *--sp;
        int64_t a = *--sp;
        int64_t r = 0;
        switch (i.op) {
          case IntOpcode::Add: r = a + b; break;
          case IntOpcode::Sub: r = a - b; break;
          case IntOpcode::Mul: r = a * b; break;
          case IntOpcode::Div: r = a / b; break;
          case IntOpcode::Mod: r = a % b; break;
          case IntOpcode::CeilDiv: r = ceilDiv(a, b); break;
          case IntOpcode::Min: r = std::min(a, b); break;
          case IntOpcode::Max: r = std::max(a, b); break;
          default: break;
        }
        *sp++ = r;
      }
    }
  }
  return *(sp - 1);
}

// The backend's memory for `what` (the result of `in`, or a temporary of
// it); a request it cannot satisfy becomes an error at the statement,
// naming the size and the tensor.
TensorView allocateAt(Backend& backend, const Instruction& in, DType dtype, const Dims& shape, Stream* stream,
                      bool zero, std::string_view what) {
  try {
    return backend.allocate(dtype, shape, stream, zero);
  } catch (const std::bad_alloc&) {
    throw DiagnosticError{
        Diagnostic{in.loc, fmt::format("cannot allocate {} for {}",
                                       formatBytes(tensorBytes(dtypeSize(dtype), {shape.begin(), shape.size})), what)}};
  }
}

TensorView allocateResult(Backend& backend, const Instruction& in, DType dtype, const Dims& shape, Stream* stream,
                          bool zero) {
  return allocateAt(backend, in, dtype, shape, stream, zero, fmt::format("'{}'", in.resultName));
}

// Read-then-write (docs/hostir-language.md, §1): every operation behaves as
// if it read all its inputs before writing its output. A kernel honours
// that by itself when its output shares no element with an input, and an
// elementwise one also when the output is the very input view (each element
// is read before it is written); otherwise the result goes to a temporary
// first and is copied into place. GEMMs stage on any sharing.
bool needsStaging(const TensorView& out, std::initializer_list<const TensorView*> inputs, bool elementwise) {
  for (const TensorView* input : inputs) {
    if (!input) continue;
    ViewOverlap overlap = overlapOf(out, *input);
    if (overlap == ViewOverlap::Partial || (overlap == ViewOverlap::Identical && !elementwise)) return true;
  }
  return false;
}

// Issues `kernel` into `out`, through a temporary when needsStaging says so.
template <typename Kernel>
void issueReadThenWrite(Backend& backend, const Instruction& in, Stream* stream, const TensorView& out,
                        std::initializer_list<const TensorView*> inputs, bool elementwise, Kernel&& kernel) {
  if (!needsStaging(out, inputs, elementwise)) {
    kernel(out);
    return;
  }
  TensorView temporary =
      allocateAt(backend, in, out.dtype, out.shape, stream, false, "the temporary of an output that overlaps an input");
  kernel(temporary);
  backend.copy(stream, temporary, out);
  backend.deallocate(temporary, stream);
}

Dims evalDims(const CompiledProgram& cp, const std::vector<int32_t>& dims, const std::vector<RuntimeValue>& values) {
  Dims shape;
  shape.size = dims.size();
  for (size_t d = 0; d < dims.size(); ++d) shape[d] = evalInt(cp.ints[static_cast<size_t>(dims[d])], values);
  return shape;
}

}  // namespace

Evaluator::Evaluator(const Program& program, const std::map<std::string, int64_t>& params, int64_t rank, int64_t world)
    : rank_(rank), world_(world) {
  auto compiled = std::make_shared<CompiledProgram>();
  Compiler(program, *compiled).compile(params);
  // Rank-local and global shapes of the inputs and outputs.
  NameResolver names;
  std::vector<int64_t> integers{rank, world};
  for (const auto& [name, value] : params) {
    names.define(name, ValueKind::Int);
    integers.push_back(value);
  }
  auto lookup = [&](const std::string& name) -> std::optional<int64_t> {
    const NameSlot* slot = names.lookup(name);
    if (!slot) return std::nullopt;
    return integers[static_cast<size_t>(slot->slot)];
  };
  for (const Decl& d : program.decls) {
    TensorSpec spec{d.name, d.type.dtype, {}, {}, d.shardAxis};
    spec.globalShape.size = d.type.dims.size();
    for (size_t i = 0; i < d.type.dims.size(); ++i) {
      auto v = evaluate(d.type.dims[i], lookup);
      if (!v) throw std::logic_error("internal error: declaration shape does not evaluate: " + v.error().message);
      spec.globalShape[i] = *v;
    }
    spec.localShape = spec.globalShape;
    if (d.shardAxis) {
      int64_t& extent = spec.localShape[static_cast<size_t>(*d.shardAxis)];
      extent = shardExtent(extent, world);
    }
    (d.kind == DeclKind::Input ? compiled->inputs : compiled->outputs).push_back(spec);
  }
  compiled_ = std::move(compiled);
}

Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;

const std::vector<TensorSpec>& Evaluator::inputs() const { return compiled_->inputs; }
const std::vector<TensorSpec>& Evaluator::outputs() const { return compiled_->outputs; }

std::map<std::string, TensorView> Evaluator::run(Backend& backend, const std::map<std::string, TensorView>& inputs) {
  const CompiledProgram& cp = *compiled_;
  std::vector<RuntimeValue> values(cp.slotCount);
  for (auto [slot, value] : cp.paramSlots) values[static_cast<size_t>(slot)].integer = value;
  values[static_cast<size_t>(kRankSlot)].integer = rank_;
  values[static_cast<size_t>(kWorldSlot)].integer = world_;
  for (const auto& [slot, name] : cp.inputSlots) values[static_cast<size_t>(slot)].tensor = inputs.at(name);

  backend.beginRun();
  Stream* current = backend.mainStream();
  issued_ = 0;
  auto value = [&](int32_t slot) -> RuntimeValue& { return values[static_cast<size_t>(slot)]; };
  auto integer = [&](int32_t code) { return evalInt(cp.ints[static_cast<size_t>(code)], values); };
  auto tensor = [&](const Instruction& in, size_t operand) -> const TensorView& {
    return value(in.operand[operand]).tensor;
  };
  auto streamOperand = [&](const Instruction& in, size_t operand) -> Stream* {
    if (in.streamNumberMask & (1u << operand)) return backend.workerStream(integer(in.operand[operand]));
    return value(in.operand[operand]).stream;
  };
  // `y = op(...)` allocates its result on the current stream; `op(..., out=y)` writes into y.
  // A reference into the result's slot (never an operand's), so issuing copies no view.
  auto output = [&](const Instruction& in, size_t outOperand, DType dtype, const Dims& shape) -> const TensorView& {
    if (in.operand[outOperand] >= 0) return value(in.operand[outOperand]).tensor;
    TensorView& result = value(in.result).tensor;
    result = allocateResult(backend, in, dtype, shape, current, false);
    return result;
  };

  const size_t n = cp.code.size();
  // What each statement tells the backend before its work, built once per
  // run rather than per issued operation: the accesses point into this
  // run's values, which stay where they are until the run ends.
  std::vector<OperationInfo> infos(n);
  for (size_t pc = 0; pc < n; ++pc) {
    const Instruction& in = cp.code[pc];
    if (in.kind != Instruction::Kind::Op) continue;
    OperationInfo& info = infos[pc];
    info.kind = in.op;
    info.loc = in.loc;
    info.result = in.resultName;
    for (size_t i = 0; i < kMaxOperands; ++i)
      if (in.accessSlot[i] >= 0) info.tensors[i] = TensorAccess{&value(in.accessSlot[i]).tensor, in.effect[i]};
  }
  // Issues one operation's work on the current stream.
  auto issue = [&](const Instruction& in) {
    switch (in.op) {
      case OpKind::Allocate: {
        value(in.result).tensor =
            allocateResult(backend, in, in.dtype, evalDims(cp, in.dims, values), current, in.zero);
        break;
      }
      case OpKind::Deallocate: {
        using O = operands::Deallocate;
        backend.deallocate(tensor(in, O::t), current);
        value(in.operand[O::t]).tensor = TensorView{};
        break;
      }
      case OpKind::ShardByStream: {
        using O = operands::ShardByStream;
        value(in.result).tensor = tensor(in, O::t).chunk(static_cast<size_t>(integer(in.operand[O::axis])),
                                                         integer(in.operand[O::index]), integer(in.operand[O::chunks]));
        break;
      }
      case OpKind::Linear: {
        using O = operands::Linear;
        const TensorView& x = tensor(in, O::x);
        const TensorView& w = tensor(in, O::w);
        const TensorView* bias = in.operand[O::bias] >= 0 ? &tensor(in, O::bias) : nullptr;
        Dims shape = x.shape;
        shape[shape.size - 1] = w.shape[0];
        issueReadThenWrite(backend, in, current, output(in, O::out, x.dtype, shape), {&x, &w, bias}, false,
                           [&](const TensorView& out) { backend.linear(current, x, w, bias, out); });
        break;
      }
      case OpKind::Matmul: {
        using O = operands::Matmul;
        const TensorView& a = tensor(in, O::a);
        const TensorView& b = tensor(in, O::b);
        issueReadThenWrite(backend, in, current, output(in, O::out, a.dtype, Dims{a.shape[0], b.shape[1]}), {&a, &b},
                           false, [&](const TensorView& out) { backend.matmul(current, a, b, out); });
        break;
      }
      case OpKind::Copy: {
        using O = operands::Copy;
        const TensorView& src = tensor(in, O::src);
        issueReadThenWrite(backend, in, current, output(in, O::out, src.dtype, src.shape), {&src}, true,
                           [&](const TensorView& out) { backend.copy(current, src, out); });
        break;
      }
      case OpKind::Add: {
        using O = operands::Add;
        const TensorView& a = tensor(in, O::a);
        const TensorView& b = tensor(in, O::b);
        issueReadThenWrite(backend, in, current, output(in, O::out, a.dtype, a.shape), {&a, &b}, true,
                           [&](const TensorView& out) { backend.add(current, a, b, out); });
        break;
      }
      case OpKind::Allreduce:
      case OpKind::Allgather:
      case OpKind::ReduceScatter:
      case OpKind::Broadcast:
      case OpKind::SendRecv: {
        // Every communication's tensor is its first operand; all but
        // broadcast write `out` (allreduce in place without it).
        static_assert(operands::Allreduce::t == 0 && operands::Allgather::t == 0 && operands::ReduceScatter::t == 0 &&
                      operands::Broadcast::t == 0 && operands::SendRecv::src == 0);
        static_assert(size_t{operands::Allreduce::out} == size_t{operands::Allgather::out} &&
                      size_t{operands::Allgather::out} == size_t{operands::ReduceScatter::out} &&
                      size_t{operands::ReduceScatter::out} == size_t{operands::SendRecv::out});
        static_assert(size_t{operands::Allgather::axis} == size_t{operands::ReduceScatter::axis});
        CollectiveCall call;
        call.kind = in.op;
        call.input = tensor(in, operands::Allreduce::t);
        call.output = in.op != OpKind::Broadcast && in.operand[operands::Allreduce::out] >= 0
                          ? tensor(in, operands::Allreduce::out)
                          : call.input;
        call.op = in.reduceOp;
        call.loc = in.loc;
        if (in.op == OpKind::Allgather || in.op == OpKind::ReduceScatter) {
          int32_t axis = in.operand[operands::Allgather::axis];
          call.axis = axis >= 0 ? integer(axis) : 0;
        }
        if (in.op == OpKind::Broadcast) call.root = integer(in.operand[operands::Broadcast::root]);
        if (in.op == OpKind::SendRecv) {
          // A peer outside the team would leave the call unmatched: an error
          // at the operand on this rank, before anything is issued.
          auto peer = [&](size_t operand, std::string_view what) {
            int64_t r = integer(in.operand[operand]);
            if (r < 0 || r >= world_)
              throw DiagnosticError{
                  Diagnostic{in.operandLoc[operand],
                             fmt::format("'sendrecv' {} rank {}, which is not a rank of a team of {} (on rank {})",
                                         what, r, world_, rank_)}};
            return r;
          };
          call.to = peer(operands::SendRecv::to, "sends to");
          call.from = peer(operands::SendRecv::from, "receives from");
        }
        backend.collective(current, call);
        // The communication occupies its stream: its completion is the stream's next position.
        if (in.result >= 0) value(in.result).event = backend.recordEvent(current);
        break;
      }
      case OpKind::Wait: backend.waitEvent(current, value(in.operand[operands::Wait::h]).event); break;
      case OpKind::GetCurrentStream: value(in.result).stream = current; break;
      case OpKind::SetCurrentStream: current = streamOperand(in, operands::SetCurrentStream::s); break;
      case OpKind::Synchronize: {
        Stream* target = streamOperand(in, operands::Synchronize::s);
        if (target != current) backend.waitEvent(current, backend.recordEvent(target));
        break;
      }
      case OpKind::RecordEvent: value(in.result).event = backend.recordEvent(current); break;
      case OpKind::WaitEvent: backend.waitEvent(current, value(in.operand[operands::WaitEvent::ev]).event); break;
      case OpKind::IntValue: {
        int64_t a = integer(in.operand[operands::IntValue::a]), b = integer(in.operand[operands::IntValue::b]);
        value(in.result).integer = in.function == IntFunction::Min   ? std::min(a, b)
                                   : in.function == IntFunction::Max ? std::max(a, b)
                                                                     : ceilDiv(a, b);
        break;
      }
    }
  };

  for (size_t pc = 0; pc < n;) {
    const Instruction& in = cp.code[pc];
    switch (in.kind) {
      case Instruction::Kind::LoopBegin: {
        int64_t start = integer(in.operand[kLoopStart]);
        int64_t end = integer(in.operand[kLoopEnd]);
        if (start >= end) {
          pc = static_cast<size_t>(in.jump);
          continue;
        }
        value(in.result).integer = start;
        value(in.endSlot).integer = end;
        ++pc;
        continue;
      }
      case Instruction::Kind::LoopEnd: {
        int64_t next = ++value(in.result).integer;
        pc = next < value(in.endSlot).integer ? static_cast<size_t>(in.jump) + 1 : pc + 1;
        continue;
      }
      case Instruction::Kind::WithBegin: {
        value(in.result).stream = current;
        current = streamOperand(in, kWithStream);
        ++pc;
        continue;
      }
      case Instruction::Kind::WithEnd: {
        current = value(in.result).stream;
        ++pc;
        continue;
      }
      case Instruction::Kind::Op: break;
    }
    backend.beginOperation(infos[pc]);
    ++pc;
    try {
      issue(in);
    } catch (const std::bad_alloc&) {
      // Host memory for issuing it (a staging buffer, a queue): an error at the statement.
      throw DiagnosticError{Diagnostic{in.loc, fmt::format("out of memory while issuing {}", signatureOf(in.op).name)}};
    }
    if (in.issuesWork) ++issued_;
  }

  std::map<std::string, TensorView> outputs;
  for (const auto& [slot, name] : cp.outputSlots) outputs[name] = value(slot).tensor;
  values.clear();  // drop the host's references before waiting, so finished work frees its buffers
  backend.synchronizeHost();
  return outputs;
}

}  // namespace hostir
