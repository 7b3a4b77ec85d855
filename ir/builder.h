// Builds programs in C++, the way nvFuser's tests build host IR by hand:
//
//   ProgramBuilder b("row_parallel_linear");
//   Expr S = b.param("S", 4);
//   Value x = b.input("x", DType::F32, {b.param("M", 256), b.param("K", 512)}, /*shardAxis=*/1);
//   b.forLoop("i", S, [&](Expr i) { ... b.shardByStream(x, 0, i, S, "xi") ... });
//   Program p = b.build();
//
// Names left empty are generated fresh (t0, t1, ...).
//
// The builder checks nothing: what the parser refuses in text (expressions
// or conditions deeper than kMaxExprLevels, blocks nested deeper than kMaxLoopNesting,
// operands that do not fit the operation's signature) verifyStructure()
// refuses in a built program, so verify before printing or running one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace hostir {

// A name bound to a value of the program.
struct Value {
  std::string name;
  ValueKind kind = ValueKind::Tensor;
  Arg arg() const { return Arg::name(name); }
};

// A stream operand: a worker stream `stream(e)` or a captured stream value.
struct StreamRef {
  Arg arg;
  static StreamRef worker(Expr number) { return {Arg::stream(std::move(number))}; }
  static StreamRef captured(const Value& stream) { return {stream.arg()}; }
};

// attention's attributes; those left unset are absent from the statement
// (kv_heads = heads, causal = false, offsets 0, no lse).
struct AttentionOptions {
  std::optional<Expr> kvHeads;
  bool causal = false;
  std::optional<Expr> qOffset, kOffset;
  std::optional<Value> lse;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string programName);

  Expr param(std::string name, int64_t defaultValue);
  Value input(std::string name, DType dtype, std::vector<Expr> dims, std::optional<int64_t> shardAxis = {});
  // Declares an output; the body must define it (e.g. allocate(..., name)).
  void output(std::string name, DType dtype, std::vector<Expr> dims, std::optional<int64_t> shardAxis = {});

  Value allocate(DType dtype, std::vector<Expr> dims, std::string name = {}, bool zero = false);
  void deallocate(const Value& t);
  Value shardByStream(const Value& t, Expr axis, Expr index, Expr chunks, std::string name = {});
  Value linear(const Value& x, const Value& w, std::optional<Value> bias = {}, std::string name = {});
  void linearInto(const Value& x, const Value& w, const Value& out, std::optional<Value> bias = {});
  Value matmul(const Value& a, const Value& b, std::string name = {});
  void matmulInto(const Value& a, const Value& b, const Value& out);
  Value copy(const Value& src, std::string name = {});
  void copyInto(const Value& src, const Value& out);
  Value add(const Value& a, const Value& b, std::string name = {});
  void addInto(const Value& a, const Value& b, const Value& out);
  Value sub(const Value& a, const Value& b, std::string name = {});
  Value mul(const Value& a, const Value& b, std::string name = {});
  Value relu(const Value& x, std::string name = {});
  Value silu(const Value& x, std::string name = {});
  Value gelu(const Value& x, std::string name = {});
  Value scale(const Value& x, double by, std::string name = {});
  // eps: the statement's eps=, or none (kDefaultRmsNormEps).
  Value rmsNorm(const Value& x, const Value& w, std::optional<double> eps = {}, std::string name = {});
  Value softmax(const Value& x, std::string name = {});
  // matmul with its transposes (a given as [K, M], b as [N, K]).
  Value matmulTransposed(const Value& a, const Value& b, bool transposeA, bool transposeB, std::string name = {});
  Value attention(const Value& q, const Value& k, const Value& v, Expr heads, const AttentionOptions& options = {},
                  std::string name = {});
  void attentionInto(const Value& q, const Value& k, const Value& v, const Value& out, Expr heads,
                     const AttentionOptions& options = {});
  void mergeAttention(const Value& o, const Value& lse, const Value& part, const Value& partLse);
  Value gatherRows(const Value& x, const Value& idx, std::string name = {});
  void scatterAddRows(const Value& src, const Value& idx, const Value& out);
  Value cast(const Value& x, DType dtype, std::string name = {});

  // Collectives return their communication handle.
  Value allreduce(const Value& t, ReduceOp op = ReduceOp::Sum, std::optional<Value> out = {}, std::string name = {});
  Value allgather(const Value& t, const Value& out, Expr axis = 0, std::string name = {});
  Value reduceScatter(const Value& t, const Value& out, Expr axis = 0, ReduceOp op = ReduceOp::Sum,
                      std::string name = {});
  Value broadcast(const Value& t, Expr root, std::string name = {});
  // Sends src to rank `to` and receives out from rank `from`.
  Value sendrecv(const Value& src, const Value& out, Expr to, Expr from, std::string name = {});
  void wait(const Value& handle);

  Value getCurrentStream(std::string name = {});
  void setCurrentStream(const StreamRef& stream);
  void synchronize(const StreamRef& stream);
  Value recordEvent(std::string name = {});
  void waitEvent(const Value& event);
  Expr intValue(IntFunction fn, Expr a, Expr b, std::string name = {});
  // `name = value`: binds a host integer.
  Expr intValue(Expr value, std::string name = {});

  // for index in range(start, end) { body(index) }
  void forLoop(std::string index, Expr start, Expr end, const std::function<void(Expr)>& body);
  void forLoop(std::string index, Expr end, const std::function<void(Expr)>& body);
  // with stream { body() }
  void withStream(const StreamRef& stream, const std::function<void()>& body);
  // if cond { thenBody() } else { elseBody() }; an empty elseBody, or one
  // that appends nothing, gives an if without an else branch.
  void ifElse(Condition cond, const std::function<void()>& thenBody, const std::function<void()>& elseBody = {});

  // Appends an operation built by hand.
  void append(Operation op);

  Program build() const;

 private:
  std::string fresh(std::string name);
  Operation makeOp(OpKind kind, std::vector<std::pair<std::string_view, Arg>> operands, std::string result = {});
  Value emit(OpKind kind, std::vector<std::pair<std::string_view, Arg>> operands, std::string name);

  Program program_;
  std::vector<std::vector<Statement>> bodies_;  // innermost open body last
  int nextName_ = 0;
};

}  // namespace hostir
