// The bound check of the verifier (private to hostir/): ShapeChecker runs a
// program's host part for one rank with the params bound, the loops
// unrolled and, of each if, the branch the rank takes, and checks every
// shape, extent and integer (verifyProgram).
//
// verifier.cpp holds the walk and the bindings; checkByItsRule finds each
// operation's rule by its row of ir/op_list.h (a table by OpKind). Each
// rule is defined in the file of its category:
//
//   verify_compute.cpp        allocate, deallocate, shard_by_stream, copy,
//                             and every computation (linear, matmul, add,
//                             ...), whose rules (ComputeRules) are private
//                             to that file, with the table
//   verify_communication.cpp  every communication (allreduce, allgather,
//                             reduce_scatter, all_to_all, broadcast,
//                             sendrecv) through checkCommunication, one rule
//                             per shape rule of ir/collectives.h
//   verify_streams.cpp        set_current_stream, synchronize,
//                             get_current_stream, record_event,
//                             ceildiv/min/max
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "ir/names.h"
#include "ir/verifier.h"

namespace hostir::verification {

inline std::string shapeString(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Fails unless the tensor's byte size fits in int64, so that no element
// count, stride, offset or byte count derived from the shape downstream can
// wrap. Zero extents do not excuse the others: strides multiply them anyway.
// `what` names a tensor that has no type written out ("the result of 'matmul'").
void checkByteSize(SourceLoc loc, std::string_view what, DType dtype, const std::vector<int64_t>& shape);

struct BufferState {
  const std::string* name;  // the defining name, owned by the program (one record per allocation)
  SourceLoc deallocatedAt;
  bool deallocated = false;
};

struct BoundTensor {
  DType dtype;
  std::vector<int64_t> shape;
  // The allocation the tensor or view lives in; dropped with the last value
  // that refers to it, so a long loop of allocations needs no memory per iteration.
  std::shared_ptr<BufferState> buffer;
  // Row-major and dense in its buffer: what reshape needs. A chunk along an
  // axis that is not the first (with more than one row before it) is not.
  bool contiguous = true;
};

struct BoundValue {
  ValueKind kind;
  int64_t integer = 0;
  BoundTensor tensor{};
};

class ShapeChecker {
 public:
  ShapeChecker(const Program& p, const std::map<std::string, int64_t>& params, int64_t rank, int64_t world);

  void run();

  int64_t statementsWalked() const { return walked_; }
  int64_t exprNodesEvaluated() const { return evaluated_; }
  void setBudget(int64_t statements, int64_t exprNodes) {
    budget_ = statements;
    exprBudget_ = exprNodes;
  }
  // Polled per statement walked (ir/cancellation.h); null: never cancelled.
  void setCancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }

 private:
  // verifier.cpp: values, bindings and the walk.
  std::vector<int64_t> localShape(const Decl& d);
  [[noreturn]] void tooManyTerms(SourceLoc loc) const;
  int64_t eval(const Expr& e, SourceLoc fallback = {});
  std::vector<int64_t> extents(const TensorType& type);
  const BoundValue& lookup(const std::string& name) const;
  void bind(const std::string& name, BoundValue value);
  void bindTensor(const std::string& name, DType dtype, std::vector<int64_t> shape, const std::string& bufferName);
  // Operand `operand` of `op`, a tensor that must still be alive.
  const BoundTensor& tensor(const Operation& op, size_t operand);
  int64_t intOperand(const Operation& op, size_t operand, int64_t defaultValue = 0);
  [[noreturn]] void tooLarge(SourceLoc loc) const;
  void walk(const std::vector<Statement>& body);
  // Walks `body` in a scope of its own (a loop iteration, an if branch),
  // after `bindFirst` binds what the scope starts with (a loop's index).
  void walkScope(const std::vector<Statement>& body, const std::function<void()>& bindFirst);
  // An if's condition, charged to the expression budget like eval().
  bool evalCondition(const Condition& cond, SourceLoc fallback);
  // Expression nodes one iteration of `body` evaluates at least (its own
  // statements' operands and loop bounds, not nested bodies), saturating.
  static int64_t exprNodesPerIteration(const std::vector<Statement>& body);
  void checkOperation(const Operation& op);

  // verifier.cpp: what the rules of several categories share.
  void requireShape(const Operation& op, size_t operand, const std::vector<int64_t>& want, std::string_view why);
  // Binds the result of an operation that computes a new tensor, or checks
  // its out= operand: of `dtype`, the operation's, unless the out operand's
  // spec fixes another (ir/result_shape.h's writtenDType: indices are i32).
  void produce(const Operation& op, size_t out, DType dtype, const std::vector<int64_t>& shape);
  void checkAxis(const Operation& op, size_t axisOperand, int64_t axis, const BoundTensor& t);
  void checkStreamNumber(const Arg& s);

  // verify_compute.cpp
  void checkAllocate(const Operation& op);
  void checkDeallocate(const Operation& op);
  void checkShardByStream(const Operation& op);
  void checkReshape(const Operation& op);
  void checkTranspose(const Operation& op);
  void checkCopy(const Operation& op);
  // A computation's shape rule, a ComputeRules member (ir/op_list.h's
  // Check column): it reads operands and binds results through the helpers above.
  template <auto Rule>
  void checkComputation(const Operation& op);
  friend struct ComputeRules;
  // The operation's shape rule, by its row of ir/op_list.h.
  void checkByItsRule(const Operation& op);

  // verify_communication.cpp
  // Every operation of category Communication, by its collective's shape
  // rule (ir/collectives.h).
  void checkCommunication(const Operation& op);

  // verify_streams.cpp
  void checkStreamOperand(const Operation& op);
  void bindStreamResult(const Operation& op);
  // The handle or event an operation defines: a plain name, or an element
  // of an array this rank must not have issued before.
  void bindEventResult(const Operation& op);
  // wait(h[e]), wait_event(ev[e]): an element this rank has issued.
  void checkWaitOperand(const Operation& op);
  // The value of an element's index, which must not be negative.
  int64_t elementIndex(const std::string& array, const Expr& index, SourceLoc loc);
  void checkIntValue(const Operation& op);

  const Program& program_;
  int64_t world_;
  std::vector<int64_t> meshExtents_;  // the program's mesh on this team (empty without one)
  NameResolver names_;
  std::vector<BoundValue> values_;  // by slot
  // The elements of each handle and event array this rank has issued so
  // far, with where: arrays span every scope, so they live outside names_.
  std::unordered_map<std::string, std::unordered_map<int64_t, SourceLoc>> issuedElements_;
  int64_t walked_ = 0;
  int64_t budget_ = kMaxUnrolledStatements;
  int64_t evaluated_ = 0;
  int64_t exprBudget_ = kMaxEvaluatedExprNodes;
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace hostir::verification
