// The operations of the language and their signatures: which operands each
// takes (positional or keyword), of which kind, what it does to each tensor
// operand, what it defines, what kind of work it is and how its cost is
// counted. The parser, printer, verifier, builder, evaluator, passes, race
// checker and backends all read this one table.
//
// Adding a compute operation (docs/architecture.md, "Adding an operation"):
// its row of ir/op_list.h (kind, category, the names of its rules); its
// typed operand positions here; its operand specs and signature row (cost
// rule, result shape, flops per element) in ops.cpp; a result shape, shape
// rule or issue rule of its own only when none fits (ir/result_shape.h,
// ir/verify_compute.cpp, runtime/issue_compute.cpp); its kernels in executor/cpu/ and
// executor/cuda/, each with its entry in the backend's table (cpu_kernels.cpp,
// cuda_compute.cpp); and its entry in docs/hostir-language.md. Backends
// reach every kernel through Backend::compute, so no backend interface
// changes.
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

// How the backends compute a computation: each keys its kernels by family,
// and a family of several operations (Unary, Binary) keys its own by
// OpKind in the file of its concept. None: not a computation.
enum class KernelFamily : uint8_t {
  None,
  Linear,
  Matmul,
  Unary,   // y = f(x), elementwise (ir/op_list.h: HOSTIR_ELEMENTWISE_UNARY_RULES)
  Binary,  // y = f(a, b), b broadcast to a's shape
  Scale,
  RmsNorm,
  Softmax,
  Attention,
  MergeAttention,
  GatherRows,
  ScatterAddRows,
  Cast,
  Where,
  Reduce,  // sum, mean, max along an axis
  LayerNorm,
  Rope,
  Bucket,
  Fill,
  Iota,
  TopK,  // the last: kKernelFamilyCount
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
inline constexpr size_t kKernelFamilyCount = static_cast<size_t>(KernelFamily::TopK) + 1;
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

// Typed operand positions: `operands::Linear::bias` is the index of linear's
// `bias` slot in its signature (and in Operation::operands). ops.cpp checks
// at compile time that each matches the table, so code that reads an
// operand by position cannot drift from the signature.
namespace operands {
struct Allocate {
  enum : size_t { type, zero };
};
struct Deallocate {
  enum : size_t { t };
};
struct ShardByStream {
  enum : size_t { t, axis, index, chunks };
};
struct Linear {
  enum : size_t { x, w, bias, out };
};
struct Matmul {
  enum : size_t { a, b, out, transpose_a, transpose_b };
};
struct Copy {
  enum : size_t { src, out };
};
struct Add {
  enum : size_t { a, b, out };
};
struct Sub {
  enum : size_t { a, b, out };
};
struct Mul {
  enum : size_t { a, b, out };
};
// div, maximum, minimum and the comparisons: b broadcast to a's shape.
struct Binary {
  enum : size_t { a, b, out };
};
// relu, silu, gelu, softmax: one input, one result shaped like it.
struct Unary {
  enum : size_t { x, out };
};
struct Scale {
  enum : size_t { x, by, out };
};
struct RmsNorm {
  enum : size_t { x, w, eps, out };
};
struct Attention {
  enum : size_t { q, k, v, out, heads, kv_heads, causal, q_offset, k_offset, lse };
};
struct MergeAttention {
  enum : size_t { o, lse, part, part_lse };
};
struct GatherRows {
  enum : size_t { x, idx, out };
};
struct ScatterAddRows {
  enum : size_t { src, idx, out };
};
struct Cast {
  enum : size_t { x, dtype, out };
};
// where(c, a, b): c and b broadcast to a's shape.
struct Where {
  enum : size_t { c, a, b, out };
};
// sum, mean, max along `axis` (default the last), which the result drops.
struct Reduce {
  enum : size_t { x, axis, out };
};
struct LayerNorm {
  enum : size_t { x, w, b, eps, out };
};
struct Rope {
  enum : size_t { x, heads, offset, theta, out };
};
struct Bucket {
  enum : size_t { idx, buckets, capacity, out };
};
// top_k: the K largest along the last axis (out) and their i32 positions (indices).
struct TopK {
  enum : size_t { x, k, out, indices };
};
// fill and iota: the result is the tensor of the `type` slot.
struct Fill {
  enum : size_t { type, value };
};
struct Iota {
  enum : size_t { type, axis };
};
struct Reshape {
  enum : size_t { t, type };
};
struct Transpose {
  enum : size_t { x, axes, out };
};
struct Allreduce {
  enum : size_t { t, out, op };
};
struct Allgather {
  enum : size_t { t, out, axis };
};
struct ReduceScatter {
  enum : size_t { t, out, axis, op };
};
struct AllToAll {
  enum : size_t { t, out, axis };
};
struct Broadcast {
  enum : size_t { t, root };
};
struct SendRecv {
  enum : size_t { src, out, to, from };
};
struct Wait {
  enum : size_t { h };
};
struct SetCurrentStream {
  enum : size_t { s };
};
struct Synchronize {
  enum : size_t { s };
};
struct WaitEvent {
  enum : size_t { ev };
};
struct IntValue {
  enum : size_t { value };
};
}  // namespace operands

// Attention's causal mask, one rule for every kernel and the cost: query
// row `row` (global q_offset + row) sees the key rows [0, result) of `keys`
// (key j, global k_offset + j, is seen when it is not after the query);
// computed without overflow for any offsets.
int64_t causalKeysSeen(int64_t row, int64_t qOffset, int64_t kOffset, int64_t keys);

// rms_norm's eps when a statement gives none (Llama's).
inline constexpr double kDefaultRmsNormEps = 1e-6;
// layer_norm's eps and rope's theta when a statement gives none (PyTorch's
// LayerNorm, and Llama's and GPT-NeoX's RoPE base).
inline constexpr double kDefaultLayerNormEps = 1e-5;
inline constexpr double kDefaultRopeTheta = 10000.0;

enum class ReduceOp { Sum, Prod, Min, Max, Avg };
std::string_view reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(std::string_view name);

}  // namespace hostir
