#include "passes/strip_compute.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/symbolic_types.h"

namespace hostir {
namespace {

// Walks the body in order, keeping each tensor's type, so that a value-form
// statement can become the allocation of its result.
class ComputeStripper {
 public:
  ComputeStripper(const Program& program, const PassContext& context) : types_(program), context_(context) {}

  void strip(std::vector<Statement>& body) {
    std::vector<Statement> kept;
    kept.reserve(body.size());
    for (Statement& s : body) {
      context_.checkCancelled();
      if (s.isWith()) {
        strip(s.with().body);  // a with block opens no scope
      } else if (s.bodiesAreScopes()) {
        // A loop body and each if branch: names defined there stay there.
        for (std::vector<Statement>& nested : s.nestedBodies()) {
          types_.openScope();
          strip(nested);
          types_.closeScope();
        }
      } else if (isLocalTensorWork(s.op().signature().category)) {
        if (s.op().results.empty()) continue;  // `op(..., out=y)`: gone
        std::vector<std::optional<TensorType>> types = types_.resultTypes(s.op());
        if (std::all_of(types.begin(), types.end(), [](const auto& t) { return t.has_value(); })) {
          // One allocation per name (`v, i = top_k(...)` defines two).
          for (size_t k = 0; k + 1 < types.size(); ++k) {
            Statement extra = allocation(s.op(), k, std::move(*types[k]));
            types_.define(extra.op());
            kept.push_back(std::move(extra));
          }
          s = allocation(s.op(), types.size() - 1, std::move(*types.back()));
        } else {
          context_.remark(StripComputePass::kName, s.op().loc,
                          fmt::format("kept: the shape of '{}' is not an expression here (a shard_by_stream "
                                      "axis that is not a constant), so nothing can stand for its result",
                                      s.op().result()->name));
        }
      }
      if (s.isOp()) types_.define(s.op());
      kept.push_back(std::move(s));
    }
    body = std::move(kept);
  }

 private:
  // `y = allocate(type)` in place of name `k` of `y = op(...)`, at the statement's position.
  static Operation allocation(const Operation& op, size_t k, TensorType type) {
    Operation alloc(OpKind::Allocate, op.loc);
    alloc.results = {op.results[k]};
    alloc.operands.resize(signatureOf(OpKind::Allocate).operands.size());
    alloc.operands[operands::Allocate::type] = Arg::ofType(std::move(type));
    return alloc;
  }

  SymbolicTypes types_;
  const PassContext& context_;
};

}  // namespace

Status StripComputePass::run(Program& program, const PassContext& context) {
  ComputeStripper(program, context).strip(program.body);
  return std::nullopt;
}

}  // namespace hostir
