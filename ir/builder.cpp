#include "ir/builder.h"

#include <fmt/format.h>

namespace hostir {

ProgramBuilder::ProgramBuilder(std::string programName) {
  program_.name = std::move(programName);
  bodies_.emplace_back();
}

std::string ProgramBuilder::fresh(std::string name) { return name.empty() ? fmt::format("t{}", nextName_++) : name; }

Expr ProgramBuilder::param(std::string name, int64_t defaultValue) {
  program_.params.push_back(Param{name, defaultValue, {}});
  return Expr::name(std::move(name));
}

Value ProgramBuilder::input(std::string name, DType dtype, std::vector<Expr> dims, std::optional<int64_t> shardAxis) {
  program_.decls.push_back(Decl{DeclKind::Input, name, {}, TensorType{dtype, std::move(dims), {}, {}}, shardAxis, {}});
  return Value{std::move(name), ValueKind::Tensor};
}

void ProgramBuilder::output(std::string name, DType dtype, std::vector<Expr> dims, std::optional<int64_t> shardAxis) {
  program_.decls.push_back(
      Decl{DeclKind::Output, std::move(name), {}, TensorType{dtype, std::move(dims), {}, {}}, shardAxis, {}});
}

Operation ProgramBuilder::makeOp(OpKind kind, std::vector<std::pair<std::string_view, Arg>> operands,
                                 std::string result) {
  Operation op(kind);
  for (auto& [name, arg] : operands) op.operand(name) = std::move(arg);
  if (!result.empty()) op.results.push_back(NameDef{std::move(result), {}});
  return op;
}

Value ProgramBuilder::emit(OpKind kind, std::vector<std::pair<std::string_view, Arg>> operands, std::string name) {
  name = fresh(std::move(name));
  append(makeOp(kind, std::move(operands), name));
  return Value{std::move(name), signatureOf(kind).resultKind};
}

// Built in place: GCC 12 warned -Wmaybe-uninitialized (falsely) about the
// variant's other alternatives when moving a temporary Statement in.
void ProgramBuilder::append(Operation op) { bodies_.back().emplace_back(std::move(op)); }

Value ProgramBuilder::allocate(DType dtype, std::vector<Expr> dims, std::string name, bool zero) {
  std::vector<std::pair<std::string_view, Arg>> operands = {
      {"type", Arg::ofType(TensorType{dtype, std::move(dims), {}, {}})}};
  if (zero) operands.emplace_back("zero", Arg::boolean(true));
  return emit(OpKind::Allocate, std::move(operands), std::move(name));
}

void ProgramBuilder::deallocate(const Value& t) { append(makeOp(OpKind::Deallocate, {{"t", t.arg()}})); }

Value ProgramBuilder::shardByStream(const Value& t, Expr axis, Expr index, Expr chunks, std::string name) {
  return emit(
      OpKind::ShardByStream,
      {{"t", t.arg()}, {"axis", Arg::integer(axis)}, {"index", Arg::integer(index)}, {"chunks", Arg::integer(chunks)}},
      std::move(name));
}

Value ProgramBuilder::linear(const Value& x, const Value& w, std::optional<Value> bias, std::string name) {
  std::vector<std::pair<std::string_view, Arg>> operands = {{"x", x.arg()}, {"w", w.arg()}};
  if (bias) operands.emplace_back("bias", bias->arg());
  return emit(OpKind::Linear, std::move(operands), std::move(name));
}

void ProgramBuilder::linearInto(const Value& x, const Value& w, const Value& out, std::optional<Value> bias) {
  std::vector<std::pair<std::string_view, Arg>> operands = {{"x", x.arg()}, {"w", w.arg()}, {"out", out.arg()}};
  if (bias) operands.emplace_back("bias", bias->arg());
  append(makeOp(OpKind::Linear, std::move(operands)));
}

Value ProgramBuilder::matmul(const Value& a, const Value& b, std::string name) {
  return emit(OpKind::Matmul, {{"a", a.arg()}, {"b", b.arg()}}, std::move(name));
}

void ProgramBuilder::matmulInto(const Value& a, const Value& b, const Value& out) {
  append(makeOp(OpKind::Matmul, {{"a", a.arg()}, {"b", b.arg()}, {"out", out.arg()}}));
}

Value ProgramBuilder::copy(const Value& src, std::string name) {
  return emit(OpKind::Copy, {{"src", src.arg()}}, std::move(name));
}

void ProgramBuilder::copyInto(const Value& src, const Value& out) {
  append(makeOp(OpKind::Copy, {{"src", src.arg()}, {"out", out.arg()}}));
}

Value ProgramBuilder::add(const Value& a, const Value& b, std::string name) {
  return emit(OpKind::Add, {{"a", a.arg()}, {"b", b.arg()}}, std::move(name));
}

void ProgramBuilder::addInto(const Value& a, const Value& b, const Value& out) {
  append(makeOp(OpKind::Add, {{"a", a.arg()}, {"b", b.arg()}, {"out", out.arg()}}));
}

Value ProgramBuilder::sub(const Value& a, const Value& b, std::string name) {
  return emit(OpKind::Sub, {{"a", a.arg()}, {"b", b.arg()}}, std::move(name));
}

Value ProgramBuilder::mul(const Value& a, const Value& b, std::string name) {
  return emit(OpKind::Mul, {{"a", a.arg()}, {"b", b.arg()}}, std::move(name));
}

Value ProgramBuilder::relu(const Value& x, std::string name) {
  return emit(OpKind::Relu, {{"x", x.arg()}}, std::move(name));
}

Value ProgramBuilder::silu(const Value& x, std::string name) {
  return emit(OpKind::Silu, {{"x", x.arg()}}, std::move(name));
}

Value ProgramBuilder::gelu(const Value& x, std::string name) {
  return emit(OpKind::Gelu, {{"x", x.arg()}}, std::move(name));
}

Value ProgramBuilder::scale(const Value& x, double by, std::string name) {
  return emit(OpKind::Scale, {{"x", x.arg()}, {"by", Arg::number(by)}}, std::move(name));
}

Value ProgramBuilder::rmsNorm(const Value& x, const Value& w, std::optional<double> eps, std::string name) {
  std::vector<std::pair<std::string_view, Arg>> operands = {{"x", x.arg()}, {"w", w.arg()}};
  if (eps) operands.emplace_back("eps", Arg::number(*eps));
  return emit(OpKind::RmsNorm, std::move(operands), std::move(name));
}

Value ProgramBuilder::softmax(const Value& x, std::string name) {
  return emit(OpKind::Softmax, {{"x", x.arg()}}, std::move(name));
}

Value ProgramBuilder::matmulTransposed(const Value& a, const Value& b, bool transposeA, bool transposeB,
                                       std::string name) {
  return emit(OpKind::Matmul,
              {{"a", a.arg()},
               {"b", b.arg()},
               {"transpose_a", Arg::boolean(transposeA)},
               {"transpose_b", Arg::boolean(transposeB)}},
              std::move(name));
}

namespace {

// attention's operands: q, k, v, heads and the options that are set.
std::vector<std::pair<std::string_view, Arg>> attentionOperands(const Value& q, const Value& k, const Value& v,
                                                                Expr heads, const AttentionOptions& options) {
  std::vector<std::pair<std::string_view, Arg>> operands = {
      {"q", q.arg()}, {"k", k.arg()}, {"v", v.arg()}, {"heads", Arg::integer(std::move(heads))}};
  if (options.kvHeads) operands.emplace_back("kv_heads", Arg::integer(*options.kvHeads));
  if (options.causal) operands.emplace_back("causal", Arg::boolean(true));
  if (options.qOffset) operands.emplace_back("q_offset", Arg::integer(*options.qOffset));
  if (options.kOffset) operands.emplace_back("k_offset", Arg::integer(*options.kOffset));
  if (options.lse) operands.emplace_back("lse", options.lse->arg());
  return operands;
}

}  // namespace

Value ProgramBuilder::attention(const Value& q, const Value& k, const Value& v, Expr heads,
                                const AttentionOptions& options, std::string name) {
  return emit(OpKind::Attention, attentionOperands(q, k, v, std::move(heads), options), std::move(name));
}

void ProgramBuilder::attentionInto(const Value& q, const Value& k, const Value& v, const Value& out, Expr heads,
                                   const AttentionOptions& options) {
  auto operands = attentionOperands(q, k, v, std::move(heads), options);
  operands.emplace_back("out", out.arg());
  append(makeOp(OpKind::Attention, std::move(operands)));
}

void ProgramBuilder::mergeAttention(const Value& o, const Value& lse, const Value& part, const Value& partLse) {
  append(makeOp(OpKind::MergeAttention,
                {{"o", o.arg()}, {"lse", lse.arg()}, {"part", part.arg()}, {"part_lse", partLse.arg()}}));
}

Value ProgramBuilder::gatherRows(const Value& x, const Value& idx, std::string name) {
  return emit(OpKind::GatherRows, {{"x", x.arg()}, {"idx", idx.arg()}}, std::move(name));
}

void ProgramBuilder::scatterAddRows(const Value& src, const Value& idx, const Value& out) {
  append(makeOp(OpKind::ScatterAddRows, {{"src", src.arg()}, {"idx", idx.arg()}, {"out", out.arg()}}));
}

Value ProgramBuilder::cast(const Value& x, DType dtype, std::string name) {
  return emit(OpKind::Cast, {{"x", x.arg()}, {"dtype", Arg::dtype(dtype)}}, std::move(name));
}

Value ProgramBuilder::allreduce(const Value& t, ReduceOp op, std::optional<Value> out, std::string name) {
  std::vector<std::pair<std::string_view, Arg>> operands = {{"t", t.arg()}};
  if (out) operands.emplace_back("out", out->arg());
  operands.emplace_back("op", Arg::name(std::string(reduceOpName(op))));
  return emit(OpKind::Allreduce, std::move(operands), std::move(name));
}

Value ProgramBuilder::allgather(const Value& t, const Value& out, Expr axis, std::string name) {
  return emit(OpKind::Allgather, {{"t", t.arg()}, {"out", out.arg()}, {"axis", Arg::integer(axis)}}, std::move(name));
}

Value ProgramBuilder::reduceScatter(const Value& t, const Value& out, Expr axis, ReduceOp op, std::string name) {
  return emit(OpKind::ReduceScatter,
              {{"t", t.arg()},
               {"out", out.arg()},
               {"axis", Arg::integer(axis)},
               {"op", Arg::name(std::string(reduceOpName(op)))}},
              std::move(name));
}

Value ProgramBuilder::broadcast(const Value& t, Expr root, std::string name) {
  return emit(OpKind::Broadcast, {{"t", t.arg()}, {"root", Arg::integer(root)}}, std::move(name));
}

Value ProgramBuilder::sendrecv(const Value& src, const Value& out, Expr to, Expr from, std::string name) {
  return emit(OpKind::SendRecv,
              {{"src", src.arg()}, {"out", out.arg()}, {"to", Arg::integer(to)}, {"from", Arg::integer(from)}},
              std::move(name));
}

void ProgramBuilder::wait(const Value& handle) { append(makeOp(OpKind::Wait, {{"h", handle.arg()}})); }

Value ProgramBuilder::getCurrentStream(std::string name) { return emit(OpKind::GetCurrentStream, {}, std::move(name)); }

void ProgramBuilder::setCurrentStream(const StreamRef& stream) {
  append(makeOp(OpKind::SetCurrentStream, {{"s", stream.arg}}));
}

void ProgramBuilder::synchronize(const StreamRef& stream) { append(makeOp(OpKind::Synchronize, {{"s", stream.arg}})); }

Value ProgramBuilder::recordEvent(std::string name) { return emit(OpKind::RecordEvent, {}, std::move(name)); }

void ProgramBuilder::waitEvent(const Value& event) { append(makeOp(OpKind::WaitEvent, {{"ev", event.arg()}})); }

Expr ProgramBuilder::intValue(IntFunction fn, Expr a, Expr b, std::string name) {
  return intValue(Expr::call(fn, {std::move(a), std::move(b)}), std::move(name));
}

Expr ProgramBuilder::intValue(Expr value, std::string name) {
  Operation op(OpKind::IntValue);
  op.operands[operands::IntValue::value] = Arg::integer(std::move(value));
  name = fresh(std::move(name));
  op.results.push_back(NameDef{name, {}});
  append(std::move(op));
  return Expr::name(std::move(name));
}

void ProgramBuilder::forLoop(std::string index, Expr start, Expr end, const std::function<void(Expr)>& body) {
  bodies_.emplace_back();
  body(Expr::name(index));
  ForLoop loop;
  loop.index = NameDef{std::move(index), {}};
  loop.start = std::move(start);
  loop.end = std::move(end);
  loop.body = std::move(bodies_.back());
  bodies_.pop_back();
  bodies_.back().push_back(std::move(loop));
}

void ProgramBuilder::forLoop(std::string index, Expr end, const std::function<void(Expr)>& body) {
  forLoop(std::move(index), Expr(), std::move(end), body);
}

void ProgramBuilder::withStream(const StreamRef& stream, const std::function<void()>& body) {
  bodies_.emplace_back();
  body();
  WithBlock with;
  with.stream = stream.arg;
  with.body = std::move(bodies_.back());
  bodies_.pop_back();
  bodies_.back().push_back(std::move(with));
}

void ProgramBuilder::ifElse(Condition cond, const std::function<void()>& thenBody,
                            const std::function<void()>& elseBody) {
  IfBlock block;
  block.cond = std::move(cond);
  bodies_.emplace_back();
  thenBody();
  block.thenBody = std::move(bodies_.back());
  bodies_.pop_back();
  if (elseBody) {
    bodies_.emplace_back();
    elseBody();
    block.elseBody = std::move(bodies_.back());
    bodies_.pop_back();
  }
  bodies_.back().push_back(std::move(block));
}

Program ProgramBuilder::build() const {
  Program p = program_;
  p.body = bodies_.front();
  return p;
}

}  // namespace hostir
