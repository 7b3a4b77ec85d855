#include "ir/printer.h"

#include <fmt/format.h>

namespace hostir {
namespace {

void printOperation(const Operation& op, std::string& out) {
  const OpSignature& sig = op.signature();
  if (!op.results.empty()) {
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i) out += ", ";
      out += op.results[i].toString();
    }
    out += " = ";
  }
  if (op.kind == OpKind::IntValue) {  // `n = expr`
    out += op.operands[operands::IntValue::value]->toString();
    return;
  }
  out += sig.name;
  out += '(';
  bool first = true;
  auto separator = [&] {
    if (!first) out += ", ";
    first = false;
  };
  // Positional operands first, in signature order, then keyword operands.
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    if (!op.operands[i] || !sig.operands[i].positional) continue;
    separator();
    out += op.operands[i]->toString();
  }
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    if (!op.operands[i] || sig.operands[i].positional) continue;
    separator();
    out += sig.operands[i].name;
    out += '=';
    out += op.operands[i]->toString();
  }
  out += ')';
}

void printBody(const std::vector<Statement>& body, int indent, std::string& out);

void printStatementTo(const Statement& stmt, int indent, std::string& out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  if (stmt.isOp()) {
    printOperation(stmt.op(), out);
    out += '\n';
    return;
  }
  if (stmt.isFor()) {
    const ForLoop& loop = stmt.loop();
    out += fmt::format("for {} in range(", loop.index.name);
    if (!loop.start.empty()) out += loop.start.toString() + ", ";
    out += loop.end.toString() + ") {\n";
  } else if (stmt.isWith()) {
    out += fmt::format("with {} {{\n", stmt.with().stream.toString());
  } else {
    const IfBlock& block = stmt.ifBlock();
    out += fmt::format("if {} {{\n", block.cond.toString());
    printBody(block.thenBody, indent + 1, out);
    if (!block.elseBody.empty()) {
      out.append(static_cast<size_t>(indent) * 2, ' ');
      out += "} else {\n";
      printBody(block.elseBody, indent + 1, out);
    }
    out.append(static_cast<size_t>(indent) * 2, ' ');
    out += "}\n";
    return;
  }
  printBody(stmt.nestedBodies()[0], indent + 1, out);
  out.append(static_cast<size_t>(indent) * 2, ' ');
  out += "}\n";
}

void printBody(const std::vector<Statement>& body, int indent, std::string& out) {
  for (const Statement& s : body) printStatementTo(s, indent, out);
}

}  // namespace

std::string printStatement(const Statement& stmt, int indent) {
  std::string out;
  printStatementTo(stmt, indent, out);
  return out;
}

std::string printProgram(const Program& program) {
  std::string out = fmt::format("program {}(", program.name);
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (i) out += ", ";
    out += fmt::format("{} = {}", program.params[i].name, program.params[i].defaultText());
  }
  out += ")";
  if (!program.mesh.empty()) {
    out += " mesh(";
    for (size_t i = 0; i < program.mesh.size(); ++i)
      out += fmt::format("{}{} = {}", i ? ", " : "", program.mesh[i].name, program.mesh[i].extent.toString());
    out += ")";
  }
  if (program.provedFor)
    out += fmt::format(" proved_for(world = {}, streams = {})", program.provedFor->world, program.provedFor->streams);
  out += " {\n";
  for (const Decl& d : program.decls) {
    // "input " is padded to the width of "output" so names line up.
    out += d.kind == DeclKind::Input ? "  input  " : "  output ";
    out += fmt::format("{} : {}", d.name, d.type.toString());
    if (d.shardAxis)
      out += d.shardOver.empty() ? fmt::format(" shard({})", *d.shardAxis)
                                 : fmt::format(" shard({}, over={})", *d.shardAxis, d.shardOver);
    out += '\n';
  }
  if (!program.decls.empty() && !program.body.empty()) out += '\n';
  for (const Statement& s : program.body) printStatementTo(s, 1, out);
  out += "}\n";
  return out;
}

}  // namespace hostir
