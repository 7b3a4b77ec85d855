#include "passes/operation_names.h"

namespace hostir {

std::vector<std::string> namesUsedBy(const Operation& op) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name, SourceLoc) { names.push_back(name); };
  for (const std::optional<Arg>& arg : op.operands) {
    if (!arg) continue;
    if (arg->form == Arg::Form::Type) {
      for (const Expr& dim : arg->type.dims) forEachName(dim, add);
    } else if (arg->form == Arg::Form::List) {
      for (const Expr& item : arg->items) forEachName(item, add);
    } else {
      forEachName(arg->expr, add);
      if (arg->isElement()) forEachName(arg->index, add);
    }
  }
  return names;
}

bool namesArrayElement(const Operation& op) {
  for (const NameDef& result : op.results)
    if (result.isElement()) return true;
  for (const std::optional<Arg>& arg : op.operands)
    if (arg && arg->isElement()) return true;
  return false;
}

std::string rootOf(const Roots& roots, const std::string& name) {
  auto it = roots.find(name);
  return it == roots.end() ? name : it->second;
}

void recordView(Roots& roots, const Operation& op) {
  if (op.kind != OpKind::ShardByStream || !op.result()) return;
  const std::optional<Arg>& base = op.operand("t");
  if (base && base->isName()) roots[op.result()->name] = rootOf(roots, base->nameValue());
}

void accessesOf(const Operation& op, const Roots& roots, std::set<std::string>& reads, std::set<std::string>& writes) {
  const OpSignature& sig = op.signature();
  bool hasOut = false;
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (sig.operands[i].name == "out" && op.operands[i]) hasOut = true;
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    const std::optional<Arg>& arg = op.operands[i];
    if (!arg || sig.operands[i].kind != OperandKind::Tensor || !arg->isName()) continue;
    Effect effect = operandEffect(sig, i, hasOut);
    std::string root = rootOf(roots, arg->nameValue());
    if (readsTensor(effect)) reads.insert(root);
    if (writesTensor(effect)) writes.insert(root);
  }
  if (sig.resultKind == ValueKind::Tensor)
    for (const NameDef& result : op.results) writes.insert(result.name);
}

std::set<std::string> buffersWrittenBy(const std::vector<Statement>& body) {
  Roots roots;
  std::set<std::string> reads, writes;
  walkStatements(body, [&](const Statement& stmt) {
    if (!stmt.isOp()) return;
    const Operation& op = std::get<Operation>(stmt.node);
    recordView(roots, op);
    accessesOf(op, roots, reads, writes);
  });
  return writes;
}

}  // namespace hostir
