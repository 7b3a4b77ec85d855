// Independent references for the executor tests: dense f64 tensors and
// naive loops, written without the executor's kernels, views or
// communicators, so a bug there cannot hide in the expected values too.
//
// RefTensor is a plain C-order array of doubles. Host tensors of any dtype
// are decoded into it with this file's own f16/bf16 decoding; expected
// values are computed in f64 and compared with a tolerance per dtype
// relative to |expected| + rms(expected).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "executor/host_tensor.h"
#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir::reftest {

struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;  // C order

  RefTensor() = default;
  explicit RefTensor(std::vector<int64_t> s, double fill = 0.0);
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  // Element at a multi-index (checked).
  double& at(const std::vector<int64_t>& index);
  double at(const std::vector<int64_t>& index) const;
};

std::string shapeString(const std::vector<int64_t>& shape);
// The multi-index of element `flat` of a C-order tensor of `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape);

// ---- conversions ----------------------------------------------------------

// Decodes every element of `t` (f32, f64, f16 and bf16 decoded here).
RefTensor toRef(const HostTensor& t);
// Encodes `t` as `dtype` (round to nearest even for the narrow types).
HostTensor toHost(const RefTensor& t, DType dtype);
// The value `v` takes once stored as `dtype` and read back.
double roundTo(double v, DType dtype);
RefTensor roundTo(const RefTensor& t, DType dtype);

// ---- computation ------------------------------------------------------------

// c = a · b; a [M, K], b [K, N].
RefTensor matmul(const RefTensor& a, const RefTensor& b);
// y = x · wᵀ (+ bias); x [..., K], w [N, K], bias [N].
RefTensor linear(const RefTensor& x, const RefTensor& w, const RefTensor* bias = nullptr);
RefTensor add(const RefTensor& a, const RefTensor& b);
RefTensor map(const RefTensor& a, const std::function<double(double)>& f);
RefTensor zip(const RefTensor& a, const RefTensor& b, const std::function<double(double, double)>& f);

// ---- the computations of section 3, as straightforward f64 loops -------------

// f(a, b) elementwise, b broadcast to a's shape by NumPy's rule.
RefTensor broadcast(const RefTensor& a, const RefTensor& b, const std::function<double(double, double)>& f);
double silu(double x);
double gelu(double x);  // x·Φ(x)
// Over the last axis: x / sqrt(mean(x²) + eps) · w.
RefTensor rmsNorm(const RefTensor& x, const RefTensor& w, double eps);
RefTensor softmax(const RefTensor& x);
// op(a) · op(b), per batch entry when a and b have three axes.
RefTensor matmul(const RefTensor& a, const RefTensor& b, bool transA, bool transB);

struct AttentionSpec {
  int64_t heads = 1, kvHeads = 1;
  bool causal = false;
  int64_t qOffset = 0, kOffset = 0;
};
struct AttentionResult {
  RefTensor out;  // [Tq, H·D]
  RefTensor lse;  // [Tq, H], -inf for a row that sees no key
};
AttentionResult attention(const RefTensor& q, const RefTensor& k, const RefTensor& v, const AttentionSpec& spec);
// o and lse updated in place with the part folded in.
void mergeAttention(RefTensor& o, RefTensor& lse, const RefTensor& part, const RefTensor& partLse);
// x[idx] on rows, zero rows for -1 (idx holds whole numbers).
RefTensor gatherRows(const RefTensor& x, const RefTensor& idx);
// out[idx[p]] += src[p] in row-major order of idx, skipping -1.
void scatterAddRows(RefTensor& out, const RefTensor& src, const RefTensor& idx);
// `v` rounded once to nearest even in `dtype` (f64 to f16 and bf16 directly, never through f32).
double castTo(double v, DType dtype);

// Chunk `index` of `chunks` along `axis` (size ceildiv(extent, chunks), the
// last one smaller or empty), as a copy.
RefTensor chunk(const RefTensor& t, int64_t axis, int64_t index, int64_t chunks);
// Writes `src` into chunk `index` of `chunks` of `dst` along `axis`.
void assignChunk(RefTensor& dst, int64_t axis, int64_t index, int64_t chunks, const RefTensor& src);
// Rank `rank`'s equal slice of `global` along `axis` (the extent must divide).
RefTensor shard(const RefTensor& global, int64_t axis, int64_t rank, int64_t world);
// Concatenation along `axis`.
RefTensor concat(const std::vector<RefTensor>& parts, int64_t axis);

// Elementwise reduction over ranks: sum, prod, min, max, avg.
RefTensor reduce(const std::vector<RefTensor>& perRank, ReduceOp op);
// allgather: every rank gets the concatenation of every rank's tensor along axis.
RefTensor allgather(const std::vector<RefTensor>& perRank, int64_t axis);
// reduce_scatter: rank r gets slice r along axis of the reduction.
std::vector<RefTensor> reduceScatter(const std::vector<RefTensor>& perRank, int64_t axis, ReduceOp op);
// sendrecv: rank r's tensor goes to rank to[r] (a permutation of the ranks);
// entry q of the result is what rank q receives. Only `to` is used, so a
// program's `from` is checked, not mirrored.
std::vector<RefTensor> sendRecv(const std::vector<RefTensor>& perRank, const std::vector<int64_t>& to);

// ---- examples ---------------------------------------------------------------

// The formula each program of examples/ computes on the global inputs
// (read from each file's header comment), by program name:
//   row_parallel_linear, all_gather, broadcast:  y = x · wᵀ
//   reduce_scatter:                               y = x · w
//   events, sequence_parallel_mlp:                y = (x · w1ᵀ) · w2ᵀ
//   parallel_block:                               y = (x · waᵀ) · woᵀ + (x · w1ᵀ) · w2ᵀ
std::map<std::string, RefTensor> exampleReference(const std::string& program,
                                                  const std::map<std::string, RefTensor>& inputs);
// The names exampleReference knows.
const std::vector<std::string>& knownExamples();

// ---- comparison ---------------------------------------------------------------

// |actual - expected| <= tolerance(dtype) * (|expected| + rms(expected)).
double tolerance(DType dtype);

struct Match {
  bool ok = true;
  double worstRatio = 0;  // worst |error| / allowed error
  std::string message;    // names the worst element on failure
};

// Compares a host tensor with the expected values: dtype, shape, then every
// element; the message names the tensor and the worst element.
Match compare(const std::string& name, const HostTensor& actual, DType dtype, const RefTensor& expected);
// Exact (bit-for-bit) equality of two host tensors; the message names the first difference.
Match identical(const std::string& name, const HostTensor& a, const HostTensor& b);

}  // namespace hostir::reftest
