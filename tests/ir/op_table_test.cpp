// The op table (ir/ops.h) answers everything about an operation: its
// name, category, what it does to each tensor operand and how its cost is
// counted. These tests hold the table to that and check that the consumers
// derived from it (the strip passes) agree with it.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"
#include "passes/strip_communication.h"
#include "passes/strip_compute.h"

namespace hostir {
namespace {

TEST(OpTable, EveryOpHasANameACategoryAndTensorEffects) {
  std::set<std::string_view> names;
  ASSERT_EQ(allSignatures().size(), static_cast<size_t>(OpKind::IntValue) + 1);
  for (size_t i = 0; i < allSignatures().size(); ++i) {
    const OpSignature& sig = allSignatures()[i];
    SCOPED_TRACE(std::string(sig.name));
    EXPECT_EQ(static_cast<size_t>(sig.kind), i);
    EXPECT_EQ(&signatureOf(sig.kind), &sig);
    EXPECT_FALSE(sig.name.empty());
    EXPECT_TRUE(names.insert(sig.name).second) << "duplicate name";
    EXPECT_NE(categoryName(sig.category), "?");
    EXPECT_LE(sig.operands.size(), kMaxOperands);
    for (const OperandSpec& spec : sig.operands) {
      SCOPED_TRACE(std::string(spec.name));
      EXPECT_FALSE(spec.name.empty());
      EXPECT_NE(effectName(spec.effect), "?");
      if (spec.kind != OperandKind::Tensor) {
        EXPECT_EQ(spec.effect, Effect::None) << "only tensors have effects";
      } else if (sig.category != OpCategory::View) {
        EXPECT_NE(spec.effect, Effect::None) << "a tensor operand must say what the operation does to it";
      }
    }
    // The parser finds every op by its name (IntValue is spelled `n = expr`).
    if (sig.kind != OpKind::IntValue) {
      EXPECT_EQ(opKindByName(sig.name), sig.kind);
    }
  }
}

TEST(OpTable, EffectsOfTensorOperands) {
  using L = operands::Linear;
  const OpSignature& linear = signatureOf(OpKind::Linear);
  EXPECT_EQ(linear.operands[L::x].effect, Effect::Read);
  EXPECT_EQ(linear.operands[L::w].effect, Effect::Read);
  EXPECT_EQ(linear.operands[L::bias].effect, Effect::Read);
  EXPECT_EQ(linear.operands[L::out].effect, Effect::Write);

  // allreduce reads t, and writes it too when it has no `out` (in place).
  const OpSignature& allreduce = signatureOf(OpKind::Allreduce);
  EXPECT_EQ(operandEffect(allreduce, operands::Allreduce::t, /*hasOut=*/false), Effect::ReadWrite);
  EXPECT_EQ(operandEffect(allreduce, operands::Allreduce::t, /*hasOut=*/true), Effect::Read);
  EXPECT_EQ(operandEffect(allreduce, operands::Allreduce::out, /*hasOut=*/true), Effect::Write);

  const OpSignature& broadcast = signatureOf(OpKind::Broadcast);
  EXPECT_TRUE(readsTensor(broadcast.operands[operands::Broadcast::t].effect));
  EXPECT_TRUE(writesTensor(broadcast.operands[operands::Broadcast::t].effect));

  // sendrecv reads src and writes all of out, wherever they overlap.
  const OpSignature& sendrecv = signatureOf(OpKind::SendRecv);
  EXPECT_EQ(sendrecv.operands[operands::SendRecv::src].effect, Effect::Read);
  EXPECT_EQ(operandEffect(sendrecv, operands::SendRecv::out, /*hasOut=*/true), Effect::Write);
  EXPECT_TRUE(sendrecv.operands[operands::SendRecv::out].required);
  EXPECT_EQ(sendrecv.operands[operands::SendRecv::to].kind, OperandKind::Int);
  EXPECT_EQ(sendrecv.operands[operands::SendRecv::from].kind, OperandKind::Int);
  EXPECT_EQ(sendrecv.resultMode, ResultMode::Optional);
  EXPECT_EQ(sendrecv.resultKind, ValueKind::Handle);
  EXPECT_EQ(sendrecv.cost, CostRule::Collective);
  EXPECT_EQ(signatureOf(OpKind::Deallocate).operands[operands::Deallocate::t].effect, Effect::Free);
  EXPECT_TRUE(writesTensor(Effect::Free));
  EXPECT_FALSE(readsTensor(Effect::Free));
  // A view names part of a tensor and touches none of it.
  EXPECT_EQ(signatureOf(OpKind::ShardByStream).operands[operands::ShardByStream::t].effect, Effect::None);
}

// The computations of section 3: what each does to its tensors, the kinds
// of its attributes, how it defines its result, and how it is priced.
TEST(OpTable, TheComputationsRows) {
  for (OpKind kind : {OpKind::Sub, OpKind::Mul}) {
    const OpSignature& sig = signatureOf(kind);
    EXPECT_EQ(sig.operands[operands::Sub::a].effect, Effect::Read);
    EXPECT_EQ(sig.operands[operands::Sub::b].effect, Effect::Read);
    EXPECT_EQ(sig.operands[operands::Sub::out].effect, Effect::Write);
    EXPECT_EQ(sig.cost, CostRule::Elementwise);
    EXPECT_EQ(sig.resultMode, ResultMode::OutOrResult);
  }
  for (OpKind kind : {OpKind::Relu, OpKind::Silu, OpKind::Gelu, OpKind::Softmax}) {
    const OpSignature& sig = signatureOf(kind);
    ASSERT_EQ(sig.operands.size(), 2u) << sig.name;
    EXPECT_EQ(sig.operands[operands::Unary::x].effect, Effect::Read);
    EXPECT_EQ(sig.operands[operands::Unary::out].effect, Effect::Write);
    EXPECT_EQ(sig.cost, kind == OpKind::Softmax ? CostRule::RowReduction : CostRule::Elementwise) << sig.name;
  }
  const OpSignature& scale = signatureOf(OpKind::Scale);
  EXPECT_EQ(scale.operands[operands::Scale::by].kind, OperandKind::Float);
  EXPECT_TRUE(scale.operands[operands::Scale::by].required);
  const OpSignature& rms = signatureOf(OpKind::RmsNorm);
  EXPECT_EQ(rms.operands[operands::RmsNorm::eps].kind, OperandKind::Float);
  EXPECT_FALSE(rms.operands[operands::RmsNorm::eps].required);
  EXPECT_EQ(rms.operands[operands::RmsNorm::w].effect, Effect::Read);
  EXPECT_EQ(rms.cost, CostRule::RowReduction);

  using At = operands::Attention;
  const OpSignature& attention = signatureOf(OpKind::Attention);
  for (size_t tensor : {At::q, At::k, At::v}) EXPECT_EQ(attention.operands[tensor].effect, Effect::Read);
  EXPECT_EQ(attention.operands[At::out].effect, Effect::Write);
  EXPECT_EQ(attention.operands[At::lse].effect, Effect::Write);
  EXPECT_FALSE(attention.operands[At::lse].required);
  EXPECT_TRUE(attention.operands[At::heads].required);
  for (size_t attribute : {At::heads, At::kv_heads, At::q_offset, At::k_offset})
    EXPECT_EQ(attention.operands[attribute].kind, OperandKind::Int);
  EXPECT_EQ(attention.operands[At::causal].kind, OperandKind::Bool);
  EXPECT_EQ(attention.cost, CostRule::Attention);

  // merge_attention and scatter_add_rows update tensors in place and define nothing.
  using Me = operands::MergeAttention;
  const OpSignature& merge = signatureOf(OpKind::MergeAttention);
  EXPECT_EQ(merge.operands[Me::o].effect, Effect::ReadWrite);
  EXPECT_EQ(merge.operands[Me::lse].effect, Effect::ReadWrite);
  EXPECT_EQ(merge.operands[Me::part].effect, Effect::Read);
  EXPECT_EQ(merge.operands[Me::part_lse].effect, Effect::Read);
  EXPECT_EQ(merge.resultMode, ResultMode::None);
  using Sc = operands::ScatterAddRows;
  const OpSignature& scatter = signatureOf(OpKind::ScatterAddRows);
  EXPECT_EQ(scatter.operands[Sc::out].effect, Effect::ReadWrite);
  EXPECT_TRUE(scatter.operands[Sc::out].required);
  EXPECT_EQ(scatter.operands[Sc::idx].effect, Effect::Read);
  EXPECT_EQ(scatter.resultMode, ResultMode::None);
  EXPECT_EQ(scatter.cost, CostRule::Gather);
  const OpSignature& gather = signatureOf(OpKind::GatherRows);
  EXPECT_EQ(gather.operands[operands::GatherRows::idx].effect, Effect::Read);
  EXPECT_EQ(gather.operands[operands::GatherRows::out].effect, Effect::Write);
  EXPECT_EQ(gather.cost, CostRule::Gather);

  const OpSignature& cast = signatureOf(OpKind::Cast);
  EXPECT_EQ(cast.operands[operands::Cast::dtype].kind, OperandKind::DType);
  EXPECT_TRUE(cast.operands[operands::Cast::dtype].required);
  EXPECT_EQ(cast.cost, CostRule::Copy);

  const OpSignature& matmul = signatureOf(OpKind::Matmul);
  for (size_t flag : {operands::Matmul::transpose_a, operands::Matmul::transpose_b}) {
    EXPECT_EQ(matmul.operands[flag].kind, OperandKind::Bool);
    EXPECT_FALSE(matmul.operands[flag].required);
  }
  for (OpKind kind : {OpKind::Sub, OpKind::Mul, OpKind::Relu, OpKind::Silu, OpKind::Gelu, OpKind::Scale,
                      OpKind::RmsNorm, OpKind::Softmax, OpKind::Attention, OpKind::MergeAttention, OpKind::GatherRows,
                      OpKind::ScatterAddRows, OpKind::Cast})
    EXPECT_EQ(signatureOf(kind).category, OpCategory::Compute) << signatureOf(kind).name;
}

TEST(OpTable, Categories) {
  EXPECT_EQ(signatureOf(OpKind::Linear).category, OpCategory::Compute);
  EXPECT_EQ(signatureOf(OpKind::Matmul).category, OpCategory::Compute);
  EXPECT_EQ(signatureOf(OpKind::Add).category, OpCategory::Compute);
  EXPECT_EQ(signatureOf(OpKind::Copy).category, OpCategory::Copy);
  for (OpKind kind : {OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter, OpKind::AllToAll, OpKind::Broadcast,
                      OpKind::SendRecv})
    EXPECT_EQ(signatureOf(kind).category, OpCategory::Communication);
  EXPECT_EQ(signatureOf(OpKind::Allocate).category, OpCategory::Allocation);
  EXPECT_EQ(signatureOf(OpKind::Deallocate).category, OpCategory::Deallocation);
  EXPECT_EQ(signatureOf(OpKind::ShardByStream).category, OpCategory::View);
  EXPECT_EQ(signatureOf(OpKind::Reshape).category, OpCategory::View);
  for (OpKind kind : {OpKind::Wait, OpKind::Synchronize, OpKind::RecordEvent, OpKind::WaitEvent})
    EXPECT_EQ(signatureOf(kind).category, OpCategory::Synchronization);
  // What assign-streams overlaps: the operations that issue work on a stream.
  std::set<OpKind> working;
  for (const OpSignature& sig : allSignatures())
    if (issuesWork(sig.category)) working.insert(sig.kind);
  EXPECT_EQ(working, (std::set<OpKind>{OpKind::Allocate,   OpKind::Linear,
                                       OpKind::Matmul,     OpKind::Copy,
                                       OpKind::Add,        OpKind::Sub,
                                       OpKind::Mul,        OpKind::Div,
                                       OpKind::Maximum,    OpKind::Minimum,
                                       OpKind::Gt,         OpKind::Ge,
                                       OpKind::Lt,         OpKind::Le,
                                       OpKind::Eq,         OpKind::Ne,
                                       OpKind::Relu,       OpKind::Silu,
                                       OpKind::Gelu,       OpKind::Exp,
                                       OpKind::Log,        OpKind::Sqrt,
                                       OpKind::Rsqrt,      OpKind::Sigmoid,
                                       OpKind::Tanh,       OpKind::Sin,
                                       OpKind::Cos,        OpKind::Abs,
                                       OpKind::Neg,        OpKind::Scale,
                                       OpKind::RmsNorm,    OpKind::Softmax,
                                       OpKind::Attention,  OpKind::MergeAttention,
                                       OpKind::GatherRows, OpKind::ScatterAddRows,
                                       OpKind::Cast,       OpKind::Where,
                                       OpKind::Sum,        OpKind::Mean,
                                       OpKind::Max,        OpKind::Cumsum,
                                       OpKind::LayerNorm,  OpKind::Rope,
                                       OpKind::Bucket,     OpKind::Fill,
                                       OpKind::Iota,       OpKind::TopK,
                                       OpKind::Transpose,  OpKind::Allreduce,
                                       OpKind::Allgather,  OpKind::ReduceScatter,
                                       OpKind::AllToAll,   OpKind::Broadcast,
                                       OpKind::SendRecv}));
}

// One statement of `kind`: every required operand filled with something of
// its kind, `out=` given when the signature has one (so the op defines no name).
Operation sample(OpKind kind) {
  Operation op(kind);
  const OpSignature& sig = op.signature();
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    const OperandSpec& spec = sig.operands[i];
    if (!spec.required && spec.name != "out") continue;
    switch (spec.kind) {
      case OperandKind::Tensor: op.operands[i] = Arg::name("t" + std::to_string(i)); break;
      case OperandKind::Int: op.operands[i] = Arg::integer(Expr(1)); break;
      case OperandKind::Type: op.operands[i] = Arg::ofType(TensorType{DType::F32, {Expr(2)}, {}}); break;
      case OperandKind::Stream: op.operands[i] = Arg::stream(Expr(0)); break;
      case OperandKind::Event: op.operands[i] = Arg::name("ev"); break;
      case OperandKind::Handle: op.operands[i] = Arg::name("h"); break;
      case OperandKind::Bool: op.operands[i] = Arg::boolean(true); break;
      case OperandKind::ReduceOp: op.operands[i] = Arg::name("sum"); break;
      case OperandKind::Float: op.operands[i] = Arg::number(0.5); break;
      case OperandKind::DType: op.operands[i] = Arg::name("f32"); break;
      case OperandKind::IntList: op.operands[i] = Arg::list({Expr(0)}); break;
      case OperandKind::MeshAxes: op.operands[i] = Arg::name("tp"); break;
    }
  }
  if (sig.resultMode == ResultMode::Required) op.results.push_back(NameDef{"r", {}});
  return op;
}

std::set<OpKind> survivors(Pass& pass) {
  Program program;
  program.name = "all";
  // emplace_back, not push_back: GCC 12 falsely warned -Wmaybe-uninitialized
  // when a temporary Statement was moved in.
  for (const OpSignature& sig : allSignatures()) program.body.emplace_back(sample(sig.kind));
  Status status = pass.run(program, PassContext{});
  EXPECT_FALSE(status.has_value());
  std::set<OpKind> kinds;
  for (const Statement& s : program.body) kinds.insert(s.op().kind);
  return kinds;
}

TEST(OpTable, StripPassesAgreeWithCategories) {
  StripComputePass compute;
  std::set<OpKind> afterCompute = survivors(compute);
  StripCommunicationPass communication;
  std::set<OpKind> afterCommunication = survivors(communication);
  for (const OpSignature& sig : allSignatures()) {
    SCOPED_TRACE(std::string(sig.name));
    bool local = sig.category == OpCategory::Compute || sig.category == OpCategory::Copy;
    EXPECT_EQ(afterCompute.count(sig.kind) == 0, local);
    bool takesHandle = false;
    for (const OperandSpec& spec : sig.operands) takesHandle |= spec.kind == OperandKind::Handle;
    EXPECT_EQ(afterCommunication.count(sig.kind) == 0, sig.category == OpCategory::Communication || takesHandle);
  }
  // A computation that defines a name stays: later statements use it.
  Program program;
  Operation defining(OpKind::Matmul);
  defining.operand("a") = Arg::name("a");
  defining.operand("b") = Arg::name("b");
  defining.results.push_back(NameDef{"y", {}});
  program.body.push_back(defining);
  EXPECT_FALSE(compute.run(program, PassContext{}).has_value());
  EXPECT_EQ(program.body.size(), 1u);
}

struct Shape {
  std::vector<int64_t> dims;
  size_t elementBytes;
  TensorExtent extent() const { return TensorExtent{dims, elementBytes}; }
};

OpCost cost(OpKind kind, std::vector<std::pair<size_t, const Shape*>> tensors) {
  std::array<TensorExtent, kMaxOperands> extents{};
  for (auto [index, shape] : tensors) extents[index] = shape->extent();
  return costOf(kind, extents);
}

TEST(OpTable, CostsOfSmallShapes) {
  // linear: x [3, 5] (K = 5), w [4, 5], out [3, 4]: 2·3·4·5 flops, plus 3·4 with a bias.
  Shape x{{3, 5}, 4}, w{{4, 5}, 4}, bias{{4}, 4}, y{{3, 4}, 4};
  using L = operands::Linear;
  OpCost plain = cost(OpKind::Linear, {{L::x, &x}, {L::w, &w}, {L::out, &y}});
  EXPECT_EQ(plain.flops, 120.0);
  EXPECT_EQ(plain.bytes, (15 + 20 + 12) * 4);
  OpCost biased = cost(OpKind::Linear, {{L::x, &x}, {L::w, &w}, {L::bias, &bias}, {L::out, &y}});
  EXPECT_EQ(biased.flops, 132.0);
  EXPECT_EQ(biased.bytes, (15 + 20 + 4 + 12) * 4);

  // matmul: a [2, 3] · b [3, 7] = out [2, 7]: 2·2·7·3 flops, in f16.
  Shape a{{2, 3}, 2}, b{{3, 7}, 2}, ab{{2, 7}, 2};
  using M = operands::Matmul;
  OpCost mm = cost(OpKind::Matmul, {{M::a, &a}, {M::b, &b}, {M::out, &ab}});
  EXPECT_EQ(mm.flops, 84.0);
  EXPECT_EQ(mm.bytes, (6 + 21 + 14) * 2);

  // add: one flop per element; bytes of both inputs and the result.
  Shape e{{6, 2}, 8};
  using A = operands::Add;
  OpCost sum = cost(OpKind::Add, {{A::a, &e}, {A::b, &e}, {A::out, &e}});
  EXPECT_EQ(sum.flops, 12.0);
  EXPECT_EQ(sum.bytes, 3 * 12 * 8);

  // copy: no flops; bytes read plus bytes written.
  OpCost copied = cost(OpKind::Copy, {{operands::Copy::src, &e}, {operands::Copy::out, &e}});
  EXPECT_EQ(copied.flops, 0.0);
  EXPECT_EQ(copied.bytes, 2 * 12 * 8);

  // Collectives move the larger side: an allgather of [2, 3] into [8, 3] over 4 ranks.
  Shape part{{2, 3}, 4}, whole{{8, 3}, 4};
  OpCost gather = cost(OpKind::Allgather, {{operands::Allgather::t, &part}, {operands::Allgather::out, &whole}});
  EXPECT_EQ(gather.flops, 0.0);
  EXPECT_EQ(gather.bytes, 8 * 3 * 4);
  OpCost scatter =
      cost(OpKind::ReduceScatter, {{operands::ReduceScatter::t, &whole}, {operands::ReduceScatter::out, &part}});
  EXPECT_EQ(scatter.bytes, 8 * 3 * 4);
  OpCost inPlace = cost(OpKind::Allreduce, {{operands::Allreduce::t, &whole}});
  EXPECT_EQ(inPlace.bytes, 8 * 3 * 4);
  OpCost broadcast = cost(OpKind::Broadcast, {{operands::Broadcast::t, &part}});
  EXPECT_EQ(broadcast.bytes, 2 * 3 * 4);

  // allocate: the bytes a zero fill writes.
  Shape block{{5, 5}, 2};
  EXPECT_EQ(cost(OpKind::Allocate, {{operands::Allocate::type, &block}}).bytes, 50);

  // Everything else costs nothing.
  for (OpKind kind : {OpKind::Deallocate, OpKind::ShardByStream, OpKind::Wait, OpKind::Synchronize, OpKind::RecordEvent,
                      OpKind::WaitEvent, OpKind::GetCurrentStream, OpKind::SetCurrentStream, OpKind::IntValue}) {
    OpCost none = cost(kind, {});
    EXPECT_EQ(none.flops, 0.0);
    EXPECT_EQ(none.bytes, 0);
  }
}

}  // namespace
}  // namespace hostir
