#include "ir/ir.h"

#include <fmt/format.h>

#include <array>

#include "ir/names.h"

namespace hostir {

std::string TensorType::dtypeText() const { return dtypeParam.empty() ? std::string(dtypeName(dtype)) : dtypeParam; }

std::string TensorType::toString() const {
  std::string out = dtypeText();
  out += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += dims[i].toString();
  }
  out += ']';
  return out;
}

Arg Arg::name(std::string name, SourceLoc loc) { return integer(Expr::name(std::move(name), loc)); }

Arg Arg::integer(Expr e) {
  Arg a;
  a.form = Form::Expr;
  a.loc = e.loc();
  a.expr = std::move(e);
  return a;
}

Arg Arg::ofType(TensorType t) {
  Arg a;
  a.form = Form::Type;
  a.loc = t.loc;
  a.type = std::move(t);
  return a;
}

Arg Arg::stream(Expr number, SourceLoc loc) {
  Arg a;
  a.form = Form::Stream;
  a.loc = loc;
  a.expr = std::move(number);
  return a;
}

Arg Arg::boolean(bool value, SourceLoc loc) {
  Arg a;
  a.form = Form::Bool;
  a.loc = loc;
  a.boolValue = value;
  return a;
}

Arg Arg::number(double value, SourceLoc loc) {
  Arg a;
  a.form = Form::Float;
  a.loc = loc;
  a.floatValue = value;
  return a;
}

Arg Arg::floatParam(std::string param, double value, SourceLoc loc) {
  Arg a = number(value, loc);
  a.expr = Expr::name(std::move(param), loc);
  return a;
}

Arg Arg::dtype(DType value, SourceLoc loc, std::string param) {
  Arg a;
  a.form = Form::DType;
  a.loc = loc;
  a.type.dtype = value;
  a.type.dtypeParam = std::move(param);
  a.type.loc = loc;
  return a;
}

Arg Arg::list(std::vector<Expr> items, SourceLoc loc) {
  Arg a;
  a.form = Form::List;
  a.loc = loc;
  a.items = std::move(items);
  return a;
}

Arg Arg::element(std::string array, Expr index, SourceLoc loc) {
  Arg a;
  a.form = Form::Element;
  a.loc = loc;
  a.expr = Expr::name(std::move(array), loc);
  a.index = std::move(index);
  return a;
}

std::string NameDef::toString() const { return isElement() ? name + "[" + index.toString() + "]" : name; }

std::string formatFloatAttribute(double value) {
  // The shortest text that reads back as the same double; a '.' or an
  // exponent keeps it a FLOAT token rather than an integer.
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string Arg::toString() const {
  switch (form) {
    case Form::Expr: return expr.toString();
    case Form::Type: return type.toString();
    case Form::Stream: return "stream(" + expr.toString() + ")";
    case Form::Bool: return boolValue ? "true" : "false";
    case Form::Float: return expr.empty() ? formatFloatAttribute(floatValue) : expr.toString();
    case Form::DType: return type.dtypeText();
    case Form::Element: return expr.toString() + "[" + index.toString() + "]";
    case Form::List: {
      std::string text = "(";
      for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i].toString();
      return text + (items.size() == 1 ? ",)" : ")");
    }
  }
  return "";
}

bool operator==(const Arg& a, const Arg& b) {
  if (a.form != b.form) return false;
  switch (a.form) {
    case Arg::Form::Expr:
    case Arg::Form::Stream: return a.expr == b.expr;
    case Arg::Form::Type: return a.type == b.type;
    case Arg::Form::Bool: return a.boolValue == b.boolValue;
    case Arg::Form::Float: return a.expr == b.expr && (!a.expr.empty() || a.floatValue == b.floatValue);
    case Arg::Form::DType: return a.type == b.type;
    case Arg::Form::Element: return a.expr == b.expr && a.index == b.index;
    case Arg::Form::List: return a.items == b.items;
  }
  return false;
}

Operation::Operation(OpKind k, SourceLoc l) : kind(k), loc(l), operands(signatureOf(k).operands.size()) {}

const std::optional<Arg>& Operation::operand(std::string_view name) const {
  static const std::optional<Arg> kNone;
  auto index = operandIndex(signature(), name);
  return index ? operands[*index] : kNone;
}

std::optional<Arg>& Operation::operand(std::string_view name) {
  auto index = operandIndex(signature(), name);
  return operands.at(index.value());
}

bool operator==(const Operation& a, const Operation& b) {
  return a.kind == b.kind && a.results == b.results && a.operands == b.operands;
}

bool operator==(const ForLoop& a, const ForLoop& b) {
  return a.index == b.index && a.start == b.start && a.end == b.end && a.body == b.body;
}

bool operator==(const WithBlock& a, const WithBlock& b) { return a.stream == b.stream && a.body == b.body; }

bool operator==(const IfBlock& a, const IfBlock& b) {
  return a.cond == b.cond && a.thenBody == b.thenBody && a.elseBody == b.elseBody;
}

NestedBodies<std::vector<Statement>> Statement::nestedBodies() {
  if (isFor()) return NestedBodies<std::vector<Statement>>(&loop().body);
  if (isWith()) return NestedBodies<std::vector<Statement>>(&with().body);
  if (isIf()) return {&ifBlock().thenBody, &ifBlock().elseBody};
  return {};
}

NestedBodies<const std::vector<Statement>> Statement::nestedBodies() const {
  if (isFor()) return NestedBodies<const std::vector<Statement>>(&loop().body);
  if (isWith()) return NestedBodies<const std::vector<Statement>>(&with().body);
  if (isIf()) return {&ifBlock().thenBody, &ifBlock().elseBody};
  return {};
}

SourceLoc Statement::loc() const {
  return std::visit([](const auto& n) { return n.loc; }, node);
}

void Statement::setLoc(SourceLoc loc) {
  std::visit([&](auto& n) { n.loc = loc; }, node);
}

std::optional<std::string> provedForAnotherTeam(const Program& program, int64_t world, int64_t streams) {
  if (!program.provedFor || (program.provedFor->world == world && program.provedFor->streams == streams))
    return std::nullopt;
  auto team = [](int64_t ranks, int64_t pool) {
    return fmt::format("{} rank{} and {} worker stream{}", ranks, ranks == 1 ? "" : "s", pool, pool == 1 ? "" : "s");
  };
  return fmt::format("proved for {}, not for {}", team(program.provedFor->world, program.provedFor->streams),
                     team(world, streams));
}

std::string formatValueParam(const ValueParam& value) {
  if (const double* number = std::get_if<double>(&value)) return formatFloatAttribute(*number);
  return std::string(dtypeName(std::get<DType>(value)));
}

std::string Param::defaultText() const {
  switch (kind) {
    case ParamKind::Int: return std::to_string(value);
    case ParamKind::Float: return formatValueParam(floatValue);
    case ParamKind::DType: return formatValueParam(dtypeValue);
  }
  return "";
}

void bindValueParams(Program& program, const std::map<std::string, ValueParam>& values) {
  std::map<std::string, ValueParam, std::less<>> bound;
  for (const Param& p : program.params) {
    if (p.kind == ParamKind::Float) bound[p.name] = p.floatValue;
    if (p.kind == ParamKind::DType) bound[p.name] = p.dtypeValue;
  }
  if (bound.empty()) return;
  for (const auto& [name, value] : values)
    if (auto it = bound.find(name); it != bound.end() && it->second.index() == value.index()) it->second = value;
  auto bindType = [&](TensorType& type) {
    if (auto it = bound.find(type.dtypeParam); !type.dtypeParam.empty() && it != bound.end())
      type.dtype = std::get<DType>(it->second);
  };
  for (Decl& d : program.decls) bindType(d.type);
  walkStatements(program.body, [&](Statement& stmt) {
    if (!stmt.isOp()) return;
    for (std::optional<Arg>& arg : stmt.op().operands) {
      if (!arg) continue;
      if (arg->form == Arg::Form::Type || arg->form == Arg::Form::DType) bindType(arg->type);
      if (arg->form != Arg::Form::Float || arg->expr.empty()) continue;
      if (auto it = bound.find(arg->expr.nameValue()); it != bound.end())
        arg->floatValue = std::get<double>(it->second);
    }
  });
}

const Param* Program::findParam(std::string_view name) const {
  for (const Param& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

const Decl* Program::findDecl(std::string_view name) const {
  for (const Decl& d : decls)
    if (d.name == name) return &d;
  return nullptr;
}

bool isReservedName(std::string_view name) {
  // Every dtype's name, i32's too: a name must never read as a dtype.
  static constexpr std::array<std::string_view, 24> kReserved = {
      "program", "input", "output", "shard", "for", "in",  "range", "with", "stream", "if",      "else", "and",
      "or",      "not",   "true",   "false", "f32", "f16", "bf16",  "f64",  "i32",    "ceildiv", "min",  "max"};
  for (std::string_view r : kReserved)
    if (r == name) return true;
  // The builtins (`rank`, `world`) are declared once, in ir/names.h.
  return isBuiltinName(name);
}

}  // namespace hostir
