#include "passes/assign_streams.h"

#include <unordered_set>

#include "passes/fresh_names.h"

namespace hostir {
namespace {

bool bodyDoesWork(const std::vector<Statement>& body) {
  bool issues = false;
  walkStatements(body, [&](const Statement& s) {
    if (s.isOp() && s.op().signature().doesWork) issues = true;
  });
  return issues;
}

bool bodySetsStream(const std::vector<Statement>& body) {
  bool sets = false;
  walkStatements(body, [&](const Statement& s) {
    if (s.isOp() && s.op().kind == OpKind::SetCurrentStream) sets = true;
  });
  return sets;
}

Statement streamOp(OpKind kind, Arg stream) {
  Operation op(kind);
  op.operand("s") = std::move(stream);
  return op;
}

}  // namespace

bool assignStreamsApplies(const ForLoop& loop) { return bodyDoesWork(loop.body) && !bodySetsStream(loop.body); }

Status AssignStreamsPass::run(Program& program) {
  FreshNames names(program);
  // Join loops are siblings, so they can all share one index name.
  const std::string joinIndex = names.takeForLoopIndex("j");
  // The captured main stream is reused by later loops while nothing at the
  // top level switches the current stream.
  std::optional<std::string> main;
  std::vector<Statement> body;
  body.reserve(program.body.size());
  for (Statement& stmt : program.body) {
    if (!stmt.isFor() || !assignStreamsApplies(stmt.loop())) {
      bool switchesStream = stmt.isOp() ? stmt.op().kind == OpKind::SetCurrentStream : bodySetsStream(stmt.loop().body);
      if (switchesStream) main.reset();
      body.push_back(std::move(stmt));
      continue;
    }
    ForLoop loop = std::move(stmt.loop());
    if (!main) {
      main = names.take("main");
      Operation capture(OpKind::GetCurrentStream);
      capture.results.push_back(NameDef{*main, {}});
      body.push_back(std::move(capture));
    }

    std::vector<Statement> loopBody;
    loopBody.reserve(loop.body.size() + 2);
    loopBody.push_back(streamOp(OpKind::SetCurrentStream, Arg::stream(Expr::name(loop.index.name))));
    loopBody.push_back(streamOp(OpKind::Synchronize, Arg::name(*main)));
    for (Statement& s : loop.body) loopBody.push_back(std::move(s));
    loop.body = std::move(loopBody);

    ForLoop join;
    join.index = NameDef{joinIndex, {}};
    join.start = loop.start;
    join.end = loop.end;
    join.body.push_back(streamOp(OpKind::Synchronize, Arg::stream(Expr::name(join.index.name))));

    body.push_back(std::move(loop));
    body.push_back(streamOp(OpKind::SetCurrentStream, Arg::name(*main)));
    body.push_back(std::move(join));
  }
  program.body = std::move(body);
  return std::nullopt;
}

}  // namespace hostir
