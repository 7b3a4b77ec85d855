// The operations of the language and their signatures: which operands each
// takes (positional or keyword), of which kind, what it does to each tensor
// operand, what it defines, what kind of work it is and how its cost is
// counted. The parser, printer, verifier, builder, evaluator, passes, race
// checker and backends all read this one table.
//
// Adding a compute operation (docs/architecture.md, "Adding an operation"):
// its row of ir/op_list.h (kind, category, cost rule, result shape, flops
// per element, kernel family, the names of its rules) and its family in
// the list there when it needs a new one; its operands struct here (typed
// positions and operand specs); a result shape, shape rule or issue rule
// of its own only when none fits (an operation shaped like x needs none);
// its kernels in executor/cpu/ and executor/cuda/ (a new family's
// familyKernel and familyComputation); and its entry in
// docs/hostir-language.md. Backends reach every kernel through
// Backend::compute, so no backend interface changes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "ir/op_list.h"

namespace hostir {

// Every operation, in the order of ir/op_list.h.
enum class OpKind {
#define HOSTIR_OP_KIND(kind, ...) kind,
  HOSTIR_OP_LIST(HOSTIR_OP_KIND)
#undef HOSTIR_OP_KIND
};

inline constexpr size_t kOpKindCount = 0
#define HOSTIR_OP_COUNT(...) +1
    HOSTIR_OP_LIST(HOSTIR_OP_COUNT)
#undef HOSTIR_OP_COUNT
    ;
constexpr size_t opIndex(OpKind kind) { return static_cast<size_t>(kind); }

// The kinds of values names are bound to.
// Float and DType are only the parameters of those kinds (`lr = 0.01`, `DT = bf16`).
enum class ValueKind { Int, Tensor, Stream, Event, Handle, Float, DType };
std::string_view valueKindName(ValueKind kind);

// What an operand slot accepts.
enum class OperandKind {
  Tensor,    // a name bound to a tensor
  Int,       // an integer expression
  Type,      // DTYPE[dims]
  Stream,    // stream(e) or a name bound to a stream
  Event,     // a name bound to an event
  Handle,    // a name bound to a communication handle
  Bool,      // true | false
  ReduceOp,  // sum | prod | min | max | avg
  Float,     // a floating-point attribute: 1e-6, 0.125 (never an integer expression)
  DType,     // f32 | f16 | bf16 | f64 | i32
  IntList,   // (e0, e1, ...): integer expressions (transpose's axes)
  MeshAxes,  // a mesh axis or a list of them: over=tp, over=(dp, tp)
};
std::string_view operandKindName(OperandKind kind);

// What an operation does to the elements of a tensor operand. The race
// checker records its accesses from these; other operands have None.
enum class Effect : uint8_t {
  None,         // not a tensor, or a tensor whose elements are not touched (a view's source)
  Read,         // read
  Write,        // written (an `out=` operand, or the result that stands in its place)
  ReadWrite,    // read and written in place (what ReadInPlace is without `out`)
  ReadInPlace,  // read; also written when the operation has no `out` (in-place allreduce)
  ReadOnRoot,   // read on the root rank, written on every rank (broadcast's tensor)
  Free,         // deallocated: the end of the whole buffer's life, ordered like a write
};
std::string_view effectName(Effect effect);

// The dtype a tensor operand must have.
enum class DTypeRule : uint8_t {
  Shared,  // the operation's one dtype, that of its first Shared operand
  I32,     // indices (gather_rows' idx, bucket's idx and result)
  F32,     // log-sum-exps (attention's lse)
  Any,     // any dtype, i32 included (where's condition)
};

struct OperandSpec {
  std::string_view name;
  OperandKind kind;
  bool required;
  bool positional;                      // printed positionally; keyword operands are printed `name=value`
  Effect effect = Effect::None;         // tensors only
  DTypeRule dtype = DTypeRule::Shared;  // tensors only
  // An optional Int or Float operand: the value it stands for when a
  // statement gives none (rms_norm's eps, rope's theta). The rules read it
  // from here, so it is written once.
  double byDefault = 0;
  // An Int operand that names an axis of the operation's first operand:
  // counted from the end when negative (NumPy's -1 is the last), the last
  // when absent (byDefault unused).
  bool axis = false;
};

// Operations have at most this many operands (Operation::operands, the
// evaluator's compiled instructions); ops.cpp checks the table against it.
inline constexpr size_t kMaxOperands = 10;
// ... of which at most this many are tensors (attention: q, k, v, out, lse),
// what a backend holding a call's views by value needs room for.
inline constexpr size_t kMaxTensorOperands = 5;

// What kind of work an operation is. Passes select operations by category
// (strip-compute, strip-communication), assign-streams overlaps the ones
// that issue work, and traces name their slices after it.
enum class OpCategory : uint8_t {
  Compute,          // linear, matmul, add, softmax, attention, ...: kernels on the current stream
  Copy,             // copy: moves elements on the current stream
  Communication,    // allreduce, allgather, reduce_scatter, all_to_all, broadcast, sendrecv
  Allocation,       // allocate: stream-ordered memory, zero-filled on request
  Deallocation,     // deallocate: gives stream-ordered memory back
  Synchronization,  // wait, synchronize, record_event, wait_event: ordering between streams only
  View,             // shard_by_stream: names part of a tensor; touches no element
  Host,             // get_current_stream, set_current_stream, ceildiv/min/max: host state only
};
std::string_view categoryName(OpCategory category);

// An operation's category, from its row of ir/op_list.h.
constexpr OpCategory categoryOf(OpKind kind) {
  constexpr OpCategory kCategories[] = {
#define HOSTIR_OP_CATEGORY(kind, spelling, specs, mode, value, category, ...) OpCategory::category,
      HOSTIR_OP_LIST(HOSTIR_OP_CATEGORY)
#undef HOSTIR_OP_CATEGORY
  };
  return kCategories[opIndex(kind)];
}

// Issues work on a stream: computes, copies, communicates or allocates (as
// opposed to views, host values and pure ordering steps such as
// synchronize). What assign-streams overlaps.
constexpr bool issuesWork(OpCategory category) {
  return category == OpCategory::Compute || category == OpCategory::Copy || category == OpCategory::Communication ||
         category == OpCategory::Allocation;
}

// Computes or moves elements on the rank itself (strip-compute removes these).
constexpr bool isLocalTensorWork(OpCategory category) {
  return category == OpCategory::Compute || category == OpCategory::Copy;
}

// How the cost of an operation is counted (costOf).
enum class CostRule : uint8_t {
  None,          // no elements touched
  Linear,        // 2·M·N·K flops (+ M·N with a bias); bytes of every operand and the result
  Matmul,        // 2·M·N·K flops per batch entry; bytes of a, b and the result
  Elementwise,   // flops per result element; bytes of every operand and the result
  RowReduction,  // rms_norm, softmax: a few flops per element over rows; bytes of every operand and the result
  Attention,     // 4·Tq·Tk·D flops per head (about half when causal); bytes of q, k, v, out (and lse)
  Gather,        // gather_rows, scatter_add_rows: no flops (one add per element scattered); bytes moved
  Copy,          // no flops; bytes read plus bytes written
  Collective,    // no flops; the larger of the bytes sent and received (as nccl-tests counts; sendrecv too)
  Fill,          // allocate: the bytes a zero fill writes
};

// Whether work under `rule` is a GEMM (priced by GEMM rates, run by BLAS)
// rather than elementwise (priced by memory bandwidth). Attention is priced
// in a class of its own, never as a GEMM.
constexpr bool isGemm(CostRule rule) { return rule == CostRule::Linear || rule == CostRule::Matmul; }

// How the backends compute a computation: each keys its kernels by family
// (ir/op_list.h's HOSTIR_KERNEL_FAMILY_LIST). None: not a computation.
enum class KernelFamily : uint8_t {
  None,
#define HOSTIR_KERNEL_FAMILY(family) family,
  HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_KERNEL_FAMILY)
#undef HOSTIR_KERNEL_FAMILY
};

// An operation's kernel family, from its row of ir/op_list.h.
constexpr KernelFamily kernelFamilyOf(OpKind kind) {
  constexpr KernelFamily kFamilies[] = {
#define HOSTIR_OP_FAMILY(kind, spelling, specs, mode, value, category, cost, shape, flops, family, ...) \
  KernelFamily::family,
      HOSTIR_OP_LIST(HOSTIR_OP_FAMILY)
#undef HOSTIR_OP_FAMILY
  };
  return kFamilies[opIndex(kind)];
}

// A table of `Size` entries keyed by an enum (OpKind, KernelFamily); the
// keys `entries` do not name hold Entry{} (null). A key named twice does
// not compile where the table is constexpr.
template <size_t Size, typename Key, typename Entry, size_t N>
constexpr std::array<Entry, Size> keyedTable(const std::pair<Key, Entry> (&entries)[N]) {
  std::array<Entry, Size> table{};
  for (const auto& [key, entry] : entries) {
    if (table[static_cast<size_t>(key)] != Entry{}) throw "a key named twice in one table";
    table[static_cast<size_t>(key)] = entry;
  }
  return table;
}

// A table of one entry per operation, keyed by OpKind: a backend's kernels,
// a layer's rules.
template <typename Entry>
using OpTable = std::array<Entry, kOpKindCount>;
template <typename Entry, size_t N>
constexpr OpTable<Entry> opTable(const std::pair<OpKind, Entry> (&entries)[N]) {
  return keyedTable<kOpKindCount>(entries);
}

// True when exactly the operations of kernel family `family` have an entry
// (a non-null one): a table checked at compile time cannot miss a row of
// ir/op_list.h or hold one of another family.
template <typename Entry>
constexpr bool coversExactly(const OpTable<Entry>& table, KernelFamily family) {
  for (size_t i = 0; i < table.size(); ++i)
    if ((table[i] != Entry{}) != (kernelFamilyOf(static_cast<OpKind>(i)) == family)) return false;
  return true;
}

// A table of one entry per kernel family, as a backend keys its kernels.
inline constexpr size_t kKernelFamilyCount = 1  // None
#define HOSTIR_KERNEL_FAMILY_COUNT(family) +1
    HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_KERNEL_FAMILY_COUNT)
#undef HOSTIR_KERNEL_FAMILY_COUNT
    ;
template <typename Entry>
using FamilyTable = std::array<Entry, kKernelFamilyCount>;

template <typename Entry, size_t N>
constexpr FamilyTable<Entry> familyTable(const std::pair<KernelFamily, Entry> (&entries)[N]) {
  return keyedTable<kKernelFamilyCount>(entries);
}

// True when every family of a computation has an entry, and None has none.
template <typename Entry>
constexpr bool coversEveryFamily(const FamilyTable<Entry>& table) {
  if (table[static_cast<size_t>(KernelFamily::None)] != Entry{}) return false;
  for (size_t i = 0; i < kOpKindCount; ++i) {
    const KernelFamily family = kernelFamilyOf(static_cast<OpKind>(i));
    if (family != KernelFamily::None && table[static_cast<size_t>(family)] == Entry{}) return false;
  }
  return true;
}

// The result of `y = op(...)` (symbolic types, ir/symbolic_types.h): the
// type of operand `like`. The verifier's shape rule checks the operands;
// this only says what a valid operation's result is. Results shaped
// otherwise (linear, matmul, gather_rows, the reductions, top_k, transpose,
// bucket: ir/result_shape.h; cast's dtype) have a rule of their own in
// ir/symbolic_types.cpp, named by the Result column of ir/op_list.h, and
// `like` names the operand the result follows.
struct ResultShape {
  static constexpr int8_t kNone = -1;
  int8_t like = kNone;  // kNone: no tensor computed from operands (allocate and views have rules of their own)
};

// How an operation defines names.
enum class ResultMode {
  None,         // defines nothing
  Required,     // exactly one name
  Optional,     // zero or one name (a communication's handle)
  OutOrResult,  // `y = op(...)` allocates y; `op(..., out=y)` writes into y
  // `v, i = op(...)` allocates one result per written operand, in order
  // (top_k's out and indices); `op(..., out=v, indices=i)` writes into them.
  OutsOrResults,
};

struct OpSignature {
  OpKind kind;
  std::string_view name;
  std::span<const OperandSpec> operands;
  ResultMode resultMode;
  ValueKind resultKind;  // meaningful unless resultMode is None
  OpCategory category;
  CostRule cost;
  ResultShape resultShape = {};  // the default: no result computed from operands
  // Elementwise and row rules (CostRule): flops per result element; an
  // exponential or erf counts as one.
  double flopsPerElement = 0;
};

const OpSignature& signatureOf(OpKind kind);

// Every operation, in OpKind order.
std::span<const OpSignature> allSignatures();

// What operand `index` of `sig` does to its tensor, with ReadInPlace
// resolved: written too when the operation has no `out` operand.
Effect operandEffect(const OpSignature& sig, size_t index, bool hasOut);
constexpr bool readsTensor(Effect e) {
  return e == Effect::Read || e == Effect::ReadWrite || e == Effect::ReadInPlace || e == Effect::ReadOnRoot;
}
constexpr bool writesTensor(Effect e) {
  return e == Effect::Write || e == Effect::ReadWrite || e == Effect::ReadOnRoot || e == Effect::Free;
}

// The shape of one tensor operand, for costOf; elementBytes 0: absent.
struct TensorExtent {
  std::span<const int64_t> shape;
  size_t elementBytes = 0;
  bool present() const { return elementBytes != 0; }
  int64_t numel() const;
  int64_t bytes() const { return numel() * static_cast<int64_t>(elementBytes); }
};

struct OpCost {
  double flops = 0;
  int64_t bytes = 0;
};

// The floating-point operations and bytes of one operation, by its
// signature's cost rule. `tensors` holds one entry per signature operand
// (absent ones and non-tensors empty); the result of `y = linear(...)` goes
// in the `out` slot it stands for, and allocate's tensor in the `type` slot.
// `scalars` holds the values of the non-tensor operands by the same
// positions (integers, booleans as 0 or 1, floats), as KernelCall carries
// them; empty: every attribute at its default.
OpCost costOf(OpKind kind, std::span<const TensorExtent> tensors, std::span<const double> scalars = {});

// The GEMM an operation whose cost rule isGemm computes: out [m, n] from a
// [m, k] (leading dims of a batched operand folded into m); nullopt for
// other rules. `tensors` as for costOf.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};
std::optional<GemmShape> gemmShapeOf(OpKind kind, std::span<const TensorExtent> tensors,
                                     std::span<const double> scalars = {});
std::optional<OpKind> opKindByName(std::string_view name);

// Index of the operand called `name` in the signature, or nullopt.
std::optional<size_t> operandIndex(const OpSignature& sig, std::string_view name);

// Index of the `out=` operand (the tensor an operation writes its result
// into instead of defining a name), or nullopt when it has none.
std::optional<size_t> outOperand(const OpSignature& sig);

// The operand that name `k` of `y = op(...)` (or `v, i = op(...)`) stands
// for: `out` for OutOrResult, the k-th written operand for OutsOrResults;
// nullopt past them and for the other modes.
std::optional<size_t> resultOperand(const OpSignature& sig, size_t k);
// How many names `v, i = op(...)` defines in place of its written operands.
size_t resultOperandCount(const OpSignature& sig);

// rms_norm's eps when a statement gives none (Llama's).
inline constexpr double kDefaultRmsNormEps = 1e-6;
// layer_norm's eps and rope's theta when a statement gives none (PyTorch's
// LayerNorm, and Llama's and GPT-NeoX's RoPE base).
inline constexpr double kDefaultLayerNormEps = 1e-5;
inline constexpr double kDefaultRopeTheta = 10000.0;

// Each operation's operands: `operands::Linear::specs` is linear's operand
// specs (names, kinds, effects, defaults), the Operands column of its row
// of ir/op_list.h, and `operands::Linear::bias` the index of its `bias`
// slot there (and in Operation::operands). A static_assert beside each
// checks that the positions name the same slots as the specs, so code that
// reads an operand by position cannot drift from the signature.
namespace operands {

using K = OperandKind;
using E = Effect;
using D = DTypeRule;
inline constexpr bool kReq = true, kOpt = false, kPos = true, kKw = false;
// An Int operand that is an axis (OperandSpec::axis).
inline constexpr bool kAxis = true;

// Whether `specs[index]` is the operand called `name`.
constexpr bool at(std::span<const OperandSpec> specs, size_t index, std::string_view name) {
  return index < specs.size() && specs[index].name == name;
}

// get_current_stream, record_event: no operands.
struct None {
  static constexpr std::array<OperandSpec, 0> specs{};
};
struct Allocate {
  enum : size_t { type, zero };
  static constexpr OperandSpec specs[] = {{"type", K::Type, kReq, kPos}, {"zero", K::Bool, kOpt, kKw}};
};
static_assert(at(Allocate::specs, Allocate::type, "type") && at(Allocate::specs, Allocate::zero, "zero"));
struct Deallocate {
  enum : size_t { t };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::Free}};
};
static_assert(at(Deallocate::specs, Deallocate::t, "t"));
struct ShardByStream {
  enum : size_t { t, axis, index, chunks };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::None},
                                          {"axis", K::Int, kReq, kKw},
                                          {"index", K::Int, kReq, kKw},
                                          {"chunks", K::Int, kReq, kKw}};
};
static_assert(at(ShardByStream::specs, ShardByStream::t, "t") &&
              at(ShardByStream::specs, ShardByStream::axis, "axis") &&
              at(ShardByStream::specs, ShardByStream::index, "index") &&
              at(ShardByStream::specs, ShardByStream::chunks, "chunks"));
struct Linear {
  enum : size_t { x, w, bias, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"w", K::Tensor, kReq, kPos, E::Read},
                                          {"bias", K::Tensor, kOpt, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Linear::specs, Linear::x, "x") && at(Linear::specs, Linear::w, "w") &&
              at(Linear::specs, Linear::bias, "bias") && at(Linear::specs, Linear::out, "out"));
struct Matmul {
  enum : size_t { a, b, out, transpose_a, transpose_b };
  static constexpr OperandSpec specs[] = {{"a", K::Tensor, kReq, kPos, E::Read},
                                          {"b", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write},
                                          {"transpose_a", K::Bool, kOpt, kKw},
                                          {"transpose_b", K::Bool, kOpt, kKw}};
};
static_assert(at(Matmul::specs, Matmul::a, "a") && at(Matmul::specs, Matmul::b, "b") &&
              at(Matmul::specs, Matmul::out, "out") && at(Matmul::specs, Matmul::transpose_a, "transpose_a") &&
              at(Matmul::specs, Matmul::transpose_b, "transpose_b"));
struct Copy {
  enum : size_t { src, out };
  static constexpr OperandSpec specs[] = {{"src", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Copy::specs, Copy::src, "src") && at(Copy::specs, Copy::out, "out"));
// add, sub, mul, div, maximum, minimum and the comparisons: b broadcast to a's shape.
struct Binary {
  enum : size_t { a, b, out };
  static constexpr OperandSpec specs[] = {{"a", K::Tensor, kReq, kPos, E::Read},
                                          {"b", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Binary::specs, Binary::a, "a") && at(Binary::specs, Binary::b, "b") &&
              at(Binary::specs, Binary::out, "out"));
struct Add : Binary {};
struct Sub : Binary {};
struct Mul : Binary {};
// relu, silu, gelu, softmax, ...: one input, one result shaped like it.
struct Unary {
  enum : size_t { x, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Unary::specs, Unary::x, "x") && at(Unary::specs, Unary::out, "out"));
struct Scale {
  enum : size_t { x, by, out };
  static constexpr OperandSpec specs[] = {
      {"x", K::Tensor, kReq, kPos, E::Read}, {"by", K::Float, kReq, kKw}, {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Scale::specs, Scale::x, "x") && at(Scale::specs, Scale::by, "by") &&
              at(Scale::specs, Scale::out, "out"));
struct RmsNorm {
  enum : size_t { x, w, eps, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"w", K::Tensor, kReq, kPos, E::Read},
                                          {"eps", K::Float, kOpt, kKw, E::None, D::Shared, kDefaultRmsNormEps},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(RmsNorm::specs, RmsNorm::x, "x") && at(RmsNorm::specs, RmsNorm::w, "w") &&
              at(RmsNorm::specs, RmsNorm::eps, "eps") && at(RmsNorm::specs, RmsNorm::out, "out"));
// kv_heads: heads when absent (the attention rules compute it).
struct Attention {
  enum : size_t { q, k, v, out, heads, kv_heads, causal, q_offset, k_offset, lse };
  static constexpr OperandSpec specs[] = {
      {"q", K::Tensor, kReq, kPos, E::Read}, {"k", K::Tensor, kReq, kPos, E::Read},
      {"v", K::Tensor, kReq, kPos, E::Read}, {"out", K::Tensor, kOpt, kKw, E::Write},
      {"heads", K::Int, kReq, kKw},          {"kv_heads", K::Int, kOpt, kKw},
      {"causal", K::Bool, kOpt, kKw},        {"q_offset", K::Int, kOpt, kKw},
      {"k_offset", K::Int, kOpt, kKw},       {"lse", K::Tensor, kOpt, kKw, E::Write, D::F32}};
};
static_assert(at(Attention::specs, Attention::q, "q") && at(Attention::specs, Attention::k, "k") &&
              at(Attention::specs, Attention::v, "v") && at(Attention::specs, Attention::out, "out") &&
              at(Attention::specs, Attention::heads, "heads") &&
              at(Attention::specs, Attention::kv_heads, "kv_heads") &&
              at(Attention::specs, Attention::causal, "causal") &&
              at(Attention::specs, Attention::q_offset, "q_offset") &&
              at(Attention::specs, Attention::k_offset, "k_offset") && at(Attention::specs, Attention::lse, "lse"));
struct MergeAttention {
  enum : size_t { o, lse, part, part_lse };
  static constexpr OperandSpec specs[] = {{"o", K::Tensor, kReq, kPos, E::ReadWrite},
                                          {"lse", K::Tensor, kReq, kPos, E::ReadWrite, D::F32},
                                          {"part", K::Tensor, kReq, kPos, E::Read},
                                          {"part_lse", K::Tensor, kReq, kPos, E::Read, D::F32}};
};
static_assert(at(MergeAttention::specs, MergeAttention::o, "o") &&
              at(MergeAttention::specs, MergeAttention::lse, "lse") &&
              at(MergeAttention::specs, MergeAttention::part, "part") &&
              at(MergeAttention::specs, MergeAttention::part_lse, "part_lse"));
// gather_rows and scatter_add_rows access data-dependently: the race and
// initialization analyses count them as touching the whole of the tensor
// they index.
struct GatherRows {
  enum : size_t { x, idx, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"idx", K::Tensor, kReq, kPos, E::Read, D::I32},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(GatherRows::specs, GatherRows::x, "x") && at(GatherRows::specs, GatherRows::idx, "idx") &&
              at(GatherRows::specs, GatherRows::out, "out"));
struct ScatterAddRows {
  enum : size_t { src, idx, out };
  static constexpr OperandSpec specs[] = {{"src", K::Tensor, kReq, kPos, E::Read},
                                          {"idx", K::Tensor, kReq, kPos, E::Read, D::I32},
                                          {"out", K::Tensor, kReq, kKw, E::ReadWrite}};
};
static_assert(at(ScatterAddRows::specs, ScatterAddRows::src, "src") &&
              at(ScatterAddRows::specs, ScatterAddRows::idx, "idx") &&
              at(ScatterAddRows::specs, ScatterAddRows::out, "out"));
struct Cast {
  enum : size_t { x, dtype, out };
  static constexpr OperandSpec specs[] = {
      {"x", K::Tensor, kReq, kPos, E::Read}, {"dtype", K::DType, kReq, kKw}, {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Cast::specs, Cast::x, "x") && at(Cast::specs, Cast::dtype, "dtype") &&
              at(Cast::specs, Cast::out, "out"));
// where(c, a, b): c (any dtype: a comparison's result, or i32) and b
// broadcast to a's shape; a, b and the result share their dtype.
struct Where {
  enum : size_t { c, a, b, out };
  static constexpr OperandSpec specs[] = {{"c", K::Tensor, kReq, kPos, E::Read, D::Any},
                                          {"a", K::Tensor, kReq, kPos, E::Read},
                                          {"b", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Where::specs, Where::c, "c") && at(Where::specs, Where::a, "a") && at(Where::specs, Where::b, "b") &&
              at(Where::specs, Where::out, "out"));
// sum, mean, max along `axis` (default the last), which the result drops.
struct Reduce {
  enum : size_t { x, axis, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"axis", K::Int, kOpt, kKw, E::None, D::Shared, 0, kAxis},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Reduce::specs, Reduce::x, "x") && at(Reduce::specs, Reduce::axis, "axis") &&
              at(Reduce::specs, Reduce::out, "out"));
// cumsum: the inclusive running sum along `axis` (default the last), like x.
struct Cumsum {
  enum : size_t { x, axis, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"axis", K::Int, kOpt, kKw, E::None, D::Shared, 0, kAxis},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Cumsum::specs, Cumsum::x, "x") && at(Cumsum::specs, Cumsum::axis, "axis") &&
              at(Cumsum::specs, Cumsum::out, "out"));
struct LayerNorm {
  enum : size_t { x, w, b, eps, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"w", K::Tensor, kReq, kPos, E::Read},
                                          {"b", K::Tensor, kReq, kPos, E::Read},
                                          {"eps", K::Float, kOpt, kKw, E::None, D::Shared, kDefaultLayerNormEps},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(LayerNorm::specs, LayerNorm::x, "x") && at(LayerNorm::specs, LayerNorm::w, "w") &&
              at(LayerNorm::specs, LayerNorm::b, "b") && at(LayerNorm::specs, LayerNorm::eps, "eps") &&
              at(LayerNorm::specs, LayerNorm::out, "out"));
struct Rope {
  enum : size_t { x, heads, offset, theta, out };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"heads", K::Int, kReq, kKw},
                                          {"offset", K::Int, kOpt, kKw},
                                          {"theta", K::Float, kOpt, kKw, E::None, D::Shared, kDefaultRopeTheta},
                                          {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Rope::specs, Rope::x, "x") && at(Rope::specs, Rope::heads, "heads") &&
              at(Rope::specs, Rope::offset, "offset") && at(Rope::specs, Rope::theta, "theta") &&
              at(Rope::specs, Rope::out, "out"));
struct Bucket {
  enum : size_t { idx, buckets, capacity, out };
  static constexpr OperandSpec specs[] = {{"idx", K::Tensor, kReq, kPos, E::Read, D::I32},
                                          {"buckets", K::Int, kReq, kKw},
                                          {"capacity", K::Int, kReq, kKw},
                                          {"out", K::Tensor, kOpt, kKw, E::Write, D::I32}};
};
static_assert(at(Bucket::specs, Bucket::idx, "idx") && at(Bucket::specs, Bucket::buckets, "buckets") &&
              at(Bucket::specs, Bucket::capacity, "capacity") && at(Bucket::specs, Bucket::out, "out"));
// top_k: the K largest along the last axis (out) and their i32 positions (indices).
struct TopK {
  enum : size_t { x, k, out, indices };
  static constexpr OperandSpec specs[] = {{"x", K::Tensor, kReq, kPos, E::Read},
                                          {"k", K::Int, kReq, kKw},
                                          {"out", K::Tensor, kOpt, kKw, E::Write},
                                          {"indices", K::Tensor, kOpt, kKw, E::Write, D::I32}};
};
static_assert(at(TopK::specs, TopK::x, "x") && at(TopK::specs, TopK::k, "k") && at(TopK::specs, TopK::out, "out") &&
              at(TopK::specs, TopK::indices, "indices"));
// fill and iota: the result is the tensor of the `type` slot (as allocate's).
struct Fill {
  enum : size_t { type, value };
  static constexpr OperandSpec specs[] = {{"type", K::Type, kReq, kPos}, {"value", K::Float, kReq, kKw}};
};
static_assert(at(Fill::specs, Fill::type, "type") && at(Fill::specs, Fill::value, "value") &&
              size_t{Fill::type} == size_t{Allocate::type});
struct Iota {
  enum : size_t { type, axis };
  static constexpr OperandSpec specs[] = {{"type", K::Type, kReq, kPos},
                                          {"axis", K::Int, kOpt, kKw, E::None, D::Shared, 0, kAxis}};
};
static_assert(at(Iota::specs, Iota::type, "type") && at(Iota::specs, Iota::axis, "axis"));
struct Reshape {
  enum : size_t { t, type };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::None}, {"type", K::Type, kReq, kPos}};
};
static_assert(at(Reshape::specs, Reshape::t, "t") && at(Reshape::specs, Reshape::type, "type"));
struct Transpose {
  enum : size_t { x, axes, out };
  static constexpr OperandSpec specs[] = {
      {"x", K::Tensor, kReq, kPos, E::Read}, {"axes", K::IntList, kReq, kKw}, {"out", K::Tensor, kOpt, kKw, E::Write}};
};
static_assert(at(Transpose::specs, Transpose::x, "x") && at(Transpose::specs, Transpose::axes, "axes") &&
              at(Transpose::specs, Transpose::out, "out"));
struct Allreduce {
  enum : size_t { t, out, op, over };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::ReadInPlace},
                                          {"out", K::Tensor, kOpt, kKw, E::Write},
                                          {"op", K::ReduceOp, kOpt, kKw},
                                          {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(Allreduce::specs, Allreduce::t, "t") && at(Allreduce::specs, Allreduce::out, "out") &&
              at(Allreduce::specs, Allreduce::op, "op") && at(Allreduce::specs, Allreduce::over, "over"));
struct Allgather {
  enum : size_t { t, out, axis, over };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kReq, kKw, E::Write},
                                          {"axis", K::Int, kOpt, kKw},
                                          {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(Allgather::specs, Allgather::t, "t") && at(Allgather::specs, Allgather::out, "out") &&
              at(Allgather::specs, Allgather::axis, "axis") && at(Allgather::specs, Allgather::over, "over"));
struct ReduceScatter {
  enum : size_t { t, out, axis, op, over };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kReq, kKw, E::Write},
                                          {"axis", K::Int, kOpt, kKw},
                                          {"op", K::ReduceOp, kOpt, kKw},
                                          {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(ReduceScatter::specs, ReduceScatter::t, "t") && at(ReduceScatter::specs, ReduceScatter::out, "out") &&
              at(ReduceScatter::specs, ReduceScatter::axis, "axis") &&
              at(ReduceScatter::specs, ReduceScatter::op, "op") &&
              at(ReduceScatter::specs, ReduceScatter::over, "over"));
struct AllToAll {
  enum : size_t { t, out, axis, over };
  static constexpr OperandSpec specs[] = {{"t", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kReq, kKw, E::Write},
                                          {"axis", K::Int, kOpt, kKw},
                                          {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(AllToAll::specs, AllToAll::t, "t") && at(AllToAll::specs, AllToAll::out, "out") &&
              at(AllToAll::specs, AllToAll::axis, "axis") && at(AllToAll::specs, AllToAll::over, "over"));
struct Broadcast {
  enum : size_t { t, root, over };
  static constexpr OperandSpec specs[] = {
      {"t", K::Tensor, kReq, kPos, E::ReadOnRoot}, {"root", K::Int, kReq, kKw}, {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(Broadcast::specs, Broadcast::t, "t") && at(Broadcast::specs, Broadcast::root, "root") &&
              at(Broadcast::specs, Broadcast::over, "over"));
// `from` is a keyword of the operation, not of the language.
struct SendRecv {
  enum : size_t { src, out, to, from, over };
  static constexpr OperandSpec specs[] = {{"src", K::Tensor, kReq, kPos, E::Read},
                                          {"out", K::Tensor, kReq, kKw, E::Write},
                                          {"to", K::Int, kReq, kKw},
                                          {"from", K::Int, kReq, kKw},
                                          {"over", K::MeshAxes, kOpt, kKw}};
};
static_assert(at(SendRecv::specs, SendRecv::src, "src") && at(SendRecv::specs, SendRecv::out, "out") &&
              at(SendRecv::specs, SendRecv::to, "to") && at(SendRecv::specs, SendRecv::from, "from") &&
              at(SendRecv::specs, SendRecv::over, "over"));
struct Wait {
  enum : size_t { h };
  static constexpr OperandSpec specs[] = {{"h", K::Handle, kReq, kPos}};
};
static_assert(at(Wait::specs, Wait::h, "h"));
// set_current_stream, synchronize.
struct StreamOperand {
  enum : size_t { s };
  static constexpr OperandSpec specs[] = {{"s", K::Stream, kReq, kPos}};
};
static_assert(at(StreamOperand::specs, StreamOperand::s, "s"));
struct SetCurrentStream : StreamOperand {};
struct Synchronize : StreamOperand {};
struct WaitEvent {
  enum : size_t { ev };
  static constexpr OperandSpec specs[] = {{"ev", K::Event, kReq, kPos}};
};
static_assert(at(WaitEvent::specs, WaitEvent::ev, "ev"));
struct IntValue {
  enum : size_t { value };
  static constexpr OperandSpec specs[] = {{"value", K::Int, kReq, kPos}};
};
static_assert(at(IntValue::specs, IntValue::value, "value"));
}  // namespace operands

// Attention's causal mask, one rule for every kernel and the cost: query
// row `row` (global q_offset + row) sees the key rows [0, result) of `keys`
// (key j, global k_offset + j, is seen when it is not after the query);
// computed without overflow for any offsets.
int64_t causalKeysSeen(int64_t row, int64_t qOffset, int64_t kOffset, int64_t keys);

enum class ReduceOp { Sum, Prod, Min, Max, Avg };
std::string_view reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(std::string_view name);

}  // namespace hostir
