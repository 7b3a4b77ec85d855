// The host IR: a Program of params, input/output declarations and a body of
// statements (operations, `for` loops, `with` blocks and `if` blocks). Names are text-SSA: each is
// defined once where it is visible. Equality is structural and ignores
// source positions, so parse(print(p)) == p can be checked directly.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hostir/defaults.h"
#include "hostir/limits.h"
#include "ir/condition.h"
#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/ops.h"

namespace hostir {

// DTYPE[dim, ...]. A dtype parameter's name may stand for DTYPE (`DT[M, K]`):
// dtypeParam holds it and dtype its bound value (bindValueParams).
struct TensorType {
  DType dtype = DType::F32;
  std::vector<Expr> dims;
  SourceLoc loc;
  std::string dtypeParam;  // empty: a literal dtype
  // `f32` or the parameter's name, as the program writes it.
  std::string dtypeText() const;
  std::string toString() const;
  // A parameter's use compares by name: its value is a binding, not the program.
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtypeParam == b.dtypeParam && (!a.dtypeParam.empty() || a.dtype == b.dtype) && a.dims == b.dims;
  }
};

// One operand as written. Names (tensors, streams, events, handles, words
// such as `sum`) are kept as name expressions; the signature says which.
struct Arg {
  // Element: `h[e]`, an element of a handle or event array; expr holds the
  // array's name and index the integer expression e.
  // List: `(e0, e1, ...)`, integer expressions in `items` (transpose's axes).
  // DType: a dtype operand (cast's `dtype=bf16`), in type.dtype (and
  // type.dtypeParam when a dtype parameter names it).
  // Float: floatValue; expr holds the float parameter's name when one names it.
  enum class Form { Expr, Type, Stream, Bool, Float, Element, List, DType };
  Form form = Form::Expr;
  Expr expr;                // Form::Expr, the stream number for Form::Stream, the array name for Form::Element
  Expr index;               // Form::Element
  TensorType type;          // Form::Type, Form::DType (no dims)
  std::vector<Expr> items;  // Form::List
  bool boolValue = false;
  double floatValue = 0;  // Form::Float: finite, printed so that it parses back to the same double
  SourceLoc loc;

  static Arg name(std::string name, SourceLoc loc = {});
  static Arg integer(Expr e);
  static Arg ofType(TensorType t);
  static Arg stream(Expr number, SourceLoc loc = {});
  static Arg boolean(bool value, SourceLoc loc = {});
  static Arg number(double value, SourceLoc loc = {});
  // A float parameter's use, holding its bound value.
  static Arg floatParam(std::string param, double value, SourceLoc loc = {});
  static Arg dtype(DType value, SourceLoc loc = {}, std::string param = {});
  static Arg element(std::string array, Expr index, SourceLoc loc = {});
  static Arg list(std::vector<Expr> items, SourceLoc loc = {});

  bool isName() const { return form == Form::Expr && expr.isName(); }
  bool isElement() const { return form == Form::Element; }
  // The name of a name operand, or the array's name of an element.
  const std::string& nameValue() const { return expr.nameValue(); }
  std::string toString() const;
  friend bool operator==(const Arg& a, const Arg& b);
};

// A name a statement defines, with where it was written: a plain name, or
// element `index` of the handle or event array `name` (`h[i + 1] = ...`).
struct NameDef {
  NameDef() = default;
  NameDef(std::string n, SourceLoc l = {}, Expr i = {}) : name(std::move(n)), loc(l), index(std::move(i)) {}  // NOLINT
  std::string name;
  SourceLoc loc;
  Expr index;  // empty: a plain name
  bool isElement() const { return !index.empty(); }
  // `h` or `h[i + 1]`, as the program writes it.
  std::string toString() const;
  friend bool operator==(const NameDef& a, const NameDef& b) { return a.name == b.name && a.index == b.index; }
};

struct Operation {
  OpKind kind;
  SourceLoc loc;                             // the operation's name
  std::vector<NameDef> results;              // zero or one name
  std::vector<std::optional<Arg>> operands;  // one slot per signature operand

  explicit Operation(OpKind k = OpKind::Wait, SourceLoc l = {});
  const OpSignature& signature() const { return signatureOf(kind); }
  const std::optional<Arg>& operand(std::string_view name) const;
  std::optional<Arg>& operand(std::string_view name);
  const NameDef* result() const { return results.empty() ? nullptr : &results[0]; }
  friend bool operator==(const Operation& a, const Operation& b);
};

struct Statement;

struct ForLoop {
  NameDef index;
  Expr start;  // empty: range(end)
  Expr end;
  std::vector<Statement> body;
  SourceLoc loc;  // the `for` keyword
  friend bool operator==(const ForLoop& a, const ForLoop& b);
};

// `with S { ... }`: S is the current stream for the body, and the stream
// current before the block is current again after it. It opens no scope:
// names the body defines stay visible after the block.
struct WithBlock {
  Arg stream;  // a captured stream's name or stream(e)
  std::vector<Statement> body;
  SourceLoc loc;  // the `with` keyword
  friend bool operator==(const WithBlock& a, const WithBlock& b);
};

// `if cond { ... } else { ... }`: the host evaluates the condition and runs
// one branch, as it runs a loop. Each branch is a scope of its own, like a
// loop body: names it defines are visible only inside it.
struct IfBlock {
  Condition cond;
  std::vector<Statement> thenBody;
  std::vector<Statement> elseBody;  // empty: no else branch, and none is printed
  SourceLoc loc;                    // the `if` keyword
  friend bool operator==(const IfBlock& a, const IfBlock& b);
};

// The statement lists one statement holds, in program order: none for an
// operation, one for a loop or a with block (its body), two for an if (its
// then and else branches). Walks go through this, so none skips a branch.
// Iterating yields the lists; a temporary lives through a range-for.
template <typename List>
class NestedBodies {
 public:
  NestedBodies() = default;
  explicit NestedBodies(List* only) : lists_{only, nullptr}, size_(1) {}
  NestedBodies(List* first, List* second) : lists_{first, second}, size_(2) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  List& operator[](size_t i) const { return *lists_[i]; }

  class Iterator {
   public:
    explicit Iterator(List* const* at) : at_(at) {}
    List& operator*() const { return **at_; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.at_ == b.at_; }

   private:
    List* const* at_;
  };
  Iterator begin() const { return Iterator(lists_.data()); }
  Iterator end() const { return Iterator(lists_.data() + size_); }

 private:
  std::array<List*, 2> lists_{};
  size_t size_ = 0;
};

struct Statement {
  std::variant<Operation, ForLoop, WithBlock, IfBlock> node;

  Statement(Operation op) : node(std::move(op)) {}      // NOLINT
  Statement(ForLoop loop) : node(std::move(loop)) {}    // NOLINT
  Statement(WithBlock with) : node(std::move(with)) {}  // NOLINT
  Statement(IfBlock block) : node(std::move(block)) {}  // NOLINT
  bool isOp() const { return node.index() == 0; }
  bool isFor() const { return node.index() == 1; }
  bool isWith() const { return node.index() == 2; }
  bool isIf() const { return node.index() == 3; }
  Operation& op() { return std::get<0>(node); }
  const Operation& op() const { return std::get<0>(node); }
  ForLoop& loop() { return std::get<1>(node); }
  const ForLoop& loop() const { return std::get<1>(node); }
  WithBlock& with() { return std::get<2>(node); }
  const WithBlock& with() const { return std::get<2>(node); }
  IfBlock& ifBlock() { return std::get<3>(node); }
  const IfBlock& ifBlock() const { return std::get<3>(node); }
  // Every statement list the statement holds (none for an operation).
  NestedBodies<std::vector<Statement>> nestedBodies();
  NestedBodies<const std::vector<Statement>> nestedBodies() const;
  // Whether the lists it holds are scopes: a loop's body and an if's
  // branches are; a with block's body is not (its names stay visible after it).
  bool bodiesAreScopes() const { return isFor() || isIf(); }
  SourceLoc loc() const;
  void setLoc(SourceLoc loc);
  friend bool operator==(const Statement& a, const Statement& b) { return a.node == b.node; }
};

// A parameter and its default: an integer (`M = 1024`), a float
// (`lr = 0.01`) or a dtype (`DT = bf16`).
enum class ParamKind { Int, Float, DType };

struct Param {
  std::string name;
  int64_t value = 0;  // Int
  SourceLoc loc;
  ParamKind kind = ParamKind::Int;
  double floatValue = 0;          // Float: finite
  DType dtypeValue = DType::F32;  // DType
  // The default as the program writes it: `1024`, `0.01`, `bf16`.
  std::string defaultText() const;
  friend bool operator==(const Param& a, const Param& b) {
    return a.name == b.name && a.kind == b.kind && a.value == b.value && a.floatValue == b.floatValue &&
           a.dtypeValue == b.dtypeValue;
  }
};

// A float or dtype parameter's value.
using ValueParam = std::variant<double, DType>;
// "0.01" (as formatFloatAttribute writes it) or "bf16".
std::string formatValueParam(const ValueParam& value);

enum class DeclKind { Input, Output };

struct Decl {
  DeclKind kind = DeclKind::Input;
  std::string name;
  SourceLoc loc;    // the name
  TensorType type;  // global shape
  std::optional<int64_t> shardAxis;
  SourceLoc shardLoc;
  // `shard(k, over=tp)`: split over the mesh axis `tp` (coord(tp) holds
  // slice coord(tp) of size(tp)) and replicated across the other axes;
  // empty: split over the whole team.
  std::string shardOver;
  SourceLoc shardOverLoc;
  friend bool operator==(const Decl& a, const Decl& b) {
    return a.kind == b.kind && a.name == b.name && a.type == b.type && a.shardAxis == b.shardAxis &&
           a.shardOver == b.shardOver;
  }
};

// The team a program's passes rewrote it for and proved it race-free on:
// `program p(...) proved_for(world = 2, streams = 4) {`. A rewrite may be
// correct for one team only (canonicalize drops a ring's waits on one
// rank), so running the program on another team proves it again, and
// `--unchecked` refuses it.
struct ProvedFor {
  int64_t world = 1;                  // ranks
  int64_t streams = kDefaultStreams;  // the worker stream pool
  SourceLoc loc;
  friend bool operator==(const ProvedFor& a, const ProvedFor& b) {
    return a.world == b.world && a.streams == b.streams;
  }
};

// One axis of the program's mesh (ir/mesh.h): `tp = TP`, its extent an
// integer expression over the parameters and `world`.
struct MeshAxis {
  std::string name;
  Expr extent;
  SourceLoc loc;  // the name
  friend bool operator==(const MeshAxis& a, const MeshAxis& b) { return a.name == b.name && a.extent == b.extent; }
};

struct Program {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<MeshAxis> mesh;  // empty: no mesh
  SourceLoc meshLoc;           // the `mesh` keyword
  std::optional<ProvedFor> provedFor;
  std::vector<Decl> decls;
  std::vector<Statement> body;

  const Param* findParam(std::string_view name) const;
  const Decl* findDecl(std::string_view name) const;
  friend bool operator==(const Program& a, const Program& b) {
    return a.name == b.name && a.params == b.params && a.mesh == b.mesh && a.provedFor == b.provedFor &&
           a.decls == b.decls && a.body == b.body;
  }
};

// Binds every use of the program's float and dtype parameters (attribute
// operands, tensor types, dtype operands) to `values`, their defaults where
// `values` names none. Names in `values` that are no such parameter are
// the caller's to refuse.
void bindValueParams(Program& program, const std::map<std::string, ValueParam>& values);

// When `program` carries a proved_for clause for another team than `world`
// ranks with `streams` worker streams: what it was proved for and what it
// is given, as a phrase ("proved for 1 rank and 4 worker streams, not for
// 2 ranks and 4 worker streams"); nullopt otherwise.
std::optional<std::string> provedForAnotherTeam(const Program& program, int64_t world, int64_t streams);

// A FLOAT attribute as the printer writes it: the shortest text that parses
// back to `value`, with a '.' or an exponent ("0.125", "1e-06", "2.0").
std::string formatFloatAttribute(double value);

// Names that can never be defined: keywords, builtins, dtypes, int functions.
bool isReservedName(std::string_view name);

// Calls `visit` on every statement in pre-order, loops, with blocks and ifs
// before their bodies (an if's then branch before its else branch).
template <typename Body, typename Visit>
void walkStatements(Body& body, Visit&& visit) {
  for (auto& stmt : body) {
    visit(stmt);
    for (auto& nested : stmt.nestedBodies()) walkStatements(nested, visit);
  }
}

}  // namespace hostir
