#include "ir/verifier.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/cancellation.h"
#include "ir/mesh.h"
#include "ir/names.h"
#include "ir/rank_dependence.h"
#include "ir/result_shape.h"
#include "ir/shape_checker.h"
#include "ir/shapes.h"

namespace hostir {
namespace {

std::string at(SourceLoc loc) { return loc.valid() ? fmt::format(" at {}:{}", loc.line, loc.col) : ""; }

ValueKind paramValueKind(ParamKind kind) {
  return kind == ParamKind::Float ? ValueKind::Float : kind == ParamKind::DType ? ValueKind::DType : ValueKind::Int;
}

std::string withArticle(ValueKind kind) {
  return fmt::format("{} {}", kind == ValueKind::Int || kind == ValueKind::Event ? "an" : "a", valueKindName(kind));
}

SourceLoc firstValid(SourceLoc a, SourceLoc b) { return a.valid() ? a : b; }

// ---------------------------------------------------------------------------
// Structure: names, scopes, kinds, dtypes.

enum class TensorOrigin { Input, Output, Allocated, View };

struct NameInfo {
  ValueKind kind;
  SourceLoc loc;
  DType dtype = DType::F32;  // tensors
  TensorOrigin origin = TensorOrigin::Allocated;
};

// What the structure check knows of a tensor beyond its slot.
struct TensorFacts {
  DType dtype = DType::F32;
  TensorOrigin origin = TensorOrigin::Allocated;
};

class StructureChecker {
 public:
  explicit StructureChecker(const Program& p) : program_(p) {}

  void run() {
    walkStatements(program_.body, [&](const Statement& s) {
      if (s.isOp())
        for (const NameDef& result : s.op().results)
          if (result.isElement()) firstElementAt_.emplace(result.name, result.loc);
    });
    for (const Param& param : program_.params) define(param.name, param.loc, {paramValueKind(param.kind), param.loc});
    for (const MeshAxis& axis : program_.mesh) {
      checkIntExpr(axis.extent, axis.loc);
      forEachName(axis.extent, [&](const std::string& name, SourceLoc loc) {
        if (name == kBuiltinNames[kRankSlot])
          fail(loc, fmt::format("mesh axis '{}' depends on 'rank'; a mesh is the same on every rank", axis.name));
      });
    }
    for (const MeshAxis& axis : program_.mesh) {
      define(meshCoordName(axis.name), axis.loc, {ValueKind::Int, axis.loc});
      define(meshSizeName(axis.name), axis.loc, {ValueKind::Int, axis.loc});
    }
    for (const Decl& d : program_.decls) {
      checkType(d.type, d.loc);
      if (d.shardAxis && (*d.shardAxis < 0 || *d.shardAxis >= static_cast<int64_t>(d.type.dims.size())))
        fail(firstValid(d.shardLoc, d.loc),
             fmt::format("shard axis {} is out of range for a tensor of rank {}", *d.shardAxis, d.type.dims.size()));
      if (d.kind == DeclKind::Input) {
        define(d.name, d.loc, {ValueKind::Tensor, d.loc, d.type.dtype, TensorOrigin::Input});
      } else {
        if (lookup(d.name) || outputs_.count(d.name)) fail(d.loc, fmt::format("'{}' is declared twice", d.name));
        outputs_.emplace(d.name, &d);
      }
    }
    walk(program_.body, /*depth=*/0, /*scope=*/nullptr);
    for (const Decl& d : program_.decls)
      if (d.kind == DeclKind::Output && !lookup(d.name))
        fail(d.loc, fmt::format("output '{}' is declared but the program never defines it", d.name));
  }

 private:
  std::optional<NameInfo> lookup(const std::string& name) const {
    const NameSlot* slot = names_.lookup(name);
    if (!slot) return std::nullopt;
    NameInfo info{slot->kind, slot->loc};
    if (slot->kind == ValueKind::Tensor) {
      const TensorFacts& facts = tensors_[static_cast<size_t>(slot->slot)];
      info.dtype = facts.dtype;
      info.origin = facts.origin;
    }
    return info;
  }

  [[noreturn]] void unknownName(const std::string& name, SourceLoc loc) const {
    if (auto array = arrays_.find(name); array != arrays_.end())
      fail(loc, fmt::format("'{}' is an array of {}s; name one element, as {}[i]", name,
                            valueKindName(array->second.kind), name));
    if (auto later = firstElementAt_.find(name); later != firstElementAt_.end())
      fail(loc, fmt::format("array '{}' is used before its first definition{}; an array is visible only after it", name,
                            at(later->second)));
    if (auto out = outputs_.find(name); out != outputs_.end())
      fail(loc, fmt::format("output '{}' is used before the program defines it", name));
    if (auto seen = everDefined_.find(name); seen != everDefined_.end())
      fail(loc, fmt::format("'{}' is defined inside {}{} and is not visible here", name,
                            seen->second.scope ? seen->second.scope : "a scope", at(seen->second.loc)));
    if (opKindByName(name)) fail(loc, fmt::format("unknown name '{0}' ('{0}' is an operation: {0}(...))", name));
    fail(loc, fmt::format("unknown name '{}'", name));
  }

  void define(const std::string& name, SourceLoc loc, NameInfo info) {
    if (auto array = arrays_.find(name); array != arrays_.end())
      fail(loc, fmt::format("'{}' is an array{}; one name cannot be both an array and a plain name", name,
                            at(array->second.loc)));
    if (const NameSlot* prior = names_.lookup(name)) {
      if (names_.isBuiltin(*prior)) fail(loc, fmt::format("'{}' is a builtin name and cannot be defined", name));
      fail(loc, fmt::format("'{}' is already defined{}", name, at(prior->loc)));
    }
    const NameSlot& slot = names_.define(name, info.kind, loc);
    if (tensors_.size() < names_.slotCount()) tensors_.resize(names_.slotCount());
    tensors_[static_cast<size_t>(slot.slot)] = TensorFacts{info.dtype, info.origin};
    everDefined_.emplace(name, Definition{loc, scope_});
  }

  // The limits that bound every recursive walk (ir/expr.h), then the names.
  void checkIntExpr(const Expr& e, SourceLoc where) const {
    if (e.empty()) fail(where, "missing integer expression");
    if (auto error = checkExprLimits(e, where)) throw DiagnosticError{*error};
    forEachName(e, [&](const std::string& name, SourceLoc loc) {
      std::optional<NameInfo> info = lookup(name);
      if (!info) unknownName(name, loc);
      if (info->kind != ValueKind::Int)
        fail(loc, fmt::format("'{}' is {}, not an integer", name, withArticle(info->kind)));
    });
  }

  NameInfo namedValue(const Operation& op, const OperandSpec& spec, const Arg& arg, ValueKind want) const {
    if (arg.isElement()) return elementValue(op, spec, arg, want);
    const std::string& name = arg.nameValue();
    std::optional<NameInfo> info = lookup(name);
    if (!info) unknownName(name, arg.loc);
    if (info->kind != want)
      fail(arg.loc, fmt::format("'{}' is {}, but operand '{}' of '{}' must be {}", name, withArticle(info->kind),
                                spec.name, op.signature().name, operandKindName(spec.kind)));
    return *info;
  }

  // `h[e]` as an operand: an element of an array defined earlier in the
  // program text, whose elements are of the kind the operand takes.
  NameInfo elementValue(const Operation& op, const OperandSpec& spec, const Arg& arg, ValueKind want) const {
    const std::string& name = arg.nameValue();
    checkIntExpr(arg.index, arg.loc);
    auto array = arrays_.find(name);
    if (array == arrays_.end()) {
      if (const NameSlot* plain = names_.lookup(name))
        fail(arg.loc, fmt::format("'{}' is {}, not an array; write '{}' without an index", name,
                                  withArticle(plain->kind), name));
      unknownName(name, arg.loc);
    }
    if (array->second.kind != want)
      fail(arg.loc,
           fmt::format("'{}' is an array of {}s, but operand '{}' of '{}' must be {}", name,
                       valueKindName(array->second.kind), spec.name, op.signature().name, operandKindName(spec.kind)));
    return NameInfo{want, array->second.loc};
  }

  // `h[e] = op(...)`: only handles and events form arrays; an array's name
  // is no plain name, and its elements share one kind.
  void defineElement(const Operation& op, const NameDef& result) {
    const OpSignature& sig = op.signature();
    const std::string& name = result.name;
    if (sig.resultKind != ValueKind::Handle && sig.resultKind != ValueKind::Event)
      fail(result.loc, fmt::format("'{}' defines {}, which cannot be an array element; arrays hold communication "
                                   "handles and events",
                                   sig.name, withArticle(sig.resultKind)));
    checkIntExpr(result.index, result.loc);
    SourceLoc plainAt;
    if (const NameSlot* prior = names_.lookup(name)) {
      if (names_.isBuiltin(*prior)) fail(result.loc, fmt::format("'{}' is a builtin name and cannot be defined", name));
      plainAt = prior->loc;
    } else if (auto seen = everDefined_.find(name); seen != everDefined_.end()) {
      plainAt = seen->second.loc;
    } else if (auto out = outputs_.find(name); out != outputs_.end()) {
      plainAt = out->second->loc;
    } else if (auto array = arrays_.find(name); array != arrays_.end()) {
      if (array->second.kind != sig.resultKind)
        fail(result.loc, fmt::format("'{}' is an array of {}s{}; its elements share one kind, but '{}' defines {}",
                                     name, valueKindName(array->second.kind), at(array->second.loc), sig.name,
                                     withArticle(sig.resultKind)));
      return;
    } else {
      arrays_.emplace(name, ArrayInfo{sig.resultKind, result.loc});
      return;
    }
    fail(result.loc,
         fmt::format("'{}' is a plain name{}; one name cannot be both an array and a plain name", name, at(plainAt)));
  }

  void checkType(const TensorType& type, SourceLoc fallback) const {
    SourceLoc loc = firstValid(type.loc, fallback);
    if (!type.dtypeParam.empty()) checkParamUse(type.dtypeParam, ValueKind::DType, loc);
    if (type.dims.size() > kMaxTensorDims)
      fail(loc, fmt::format("this tensor type has {} dimensions; tensors have at most {}", type.dims.size(),
                            kMaxTensorDims));
    for (const Expr& dim : type.dims) checkIntExpr(dim, loc);
  }

  // A float or dtype parameter's name where a number or a dtype belongs.
  void checkParamUse(const std::string& name, ValueKind kind, SourceLoc loc) const {
    std::optional<NameInfo> info = lookup(name);
    if (!info) unknownName(name, loc);
    if (info->kind != kind)
      fail(loc, fmt::format("'{}' is {}, but a {} belongs here", name, withArticle(info->kind),
                            kind == ValueKind::Float ? "number" : "dtype"));
  }

  // `depth`: how many loops, with blocks and if blocks enclose `body`;
  // `scope`: the innermost loop or if branch around it ("a loop", "an 'if'
  // branch"), null at the top level (with blocks open no scope). Recurses
  // once per level, and the nesting limit is checked before each step down.
  void walk(const std::vector<Statement>& body, int depth, const char* scope) {
    for (const Statement& stmt : body) {
      if (stmt.isOp()) {
        checkOperation(stmt.op(), scope);
        continue;
      }
      if (depth + 1 > kMaxLoopNesting)
        fail(stmt.loc(),
             fmt::format("blocks nested too deeply: more than {} levels of 'for', 'with' and 'if'", kMaxLoopNesting));
      if (stmt.isWith()) {
        // No scope: what the body defines stays visible after the block.
        checkWithStream(stmt.with());
        walk(stmt.with().body, depth + 1, scope);
        continue;
      }
      if (stmt.isIf()) {
        const IfBlock& block = stmt.ifBlock();
        checkCondition(block.cond, block.loc);
        for (const std::vector<Statement>& branch : stmt.nestedBodies())
          inScope("an 'if' branch", [&] { walk(branch, depth + 1, "an 'if' branch"); });
        continue;
      }
      const ForLoop& loop = stmt.loop();
      if (!loop.start.empty()) checkIntExpr(loop.start, loop.loc);
      checkIntExpr(loop.end, loop.loc);
      inScope("a loop", [&] {
        define(loop.index.name, loop.index.loc, {ValueKind::Int, loop.index.loc});
        walk(loop.body, depth + 1, "a loop");
      });
    }
  }

  // Runs `body` in a new scope of names, `scope` naming it for messages.
  template <typename Body>
  void inScope(const char* scope, Body&& body) {
    const char* outer = scope_;
    scope_ = scope;
    names_.openScope();
    body();
    names_.closeScope();
    scope_ = outer;
  }

  // The limits that bound every walk of a condition (ir/condition.h), then
  // its expressions as integer expressions.
  void checkCondition(const Condition& cond, SourceLoc where) const {
    if (auto error = checkConditionLimits(cond, where)) throw DiagnosticError{*error};
    forEachExpr(cond, [&](const Expr& e) { checkIntExpr(e, firstValid(cond.loc(), where)); });
  }

  // The stream of `with`: a captured stream's name or stream(e), as the
  // operand of set_current_stream.
  void checkWithStream(const WithBlock& with) const {
    const Arg& s = with.stream;
    SourceLoc loc = firstValid(s.loc, with.loc);
    if (s.form == Arg::Form::Stream && !s.expr.empty()) {
      checkIntExpr(s.expr, loc);
      return;
    }
    if (!s.isName()) fail(loc, "the stream of 'with' must be a captured stream or stream(e)");
    std::optional<NameInfo> info = lookup(s.nameValue());
    if (!info) unknownName(s.nameValue(), loc);
    if (info->kind != ValueKind::Stream)
      fail(loc, fmt::format("'{}' is {}, but the stream of 'with' must be a stream", s.nameValue(),
                            withArticle(info->kind)));
  }

  // What the parser checks against the signature, for operations built in C++.
  void checkSignature(const Operation& op) const {
    const OpSignature& sig = op.signature();
    if (op.operands.size() != sig.operands.size())
      fail(op.loc, fmt::format("malformed '{}': {} operand slots for a signature of {}", sig.name, op.operands.size(),
                               sig.operands.size()));
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      const OperandSpec& spec = sig.operands[i];
      if (!op.operands[i]) {
        if (spec.required) fail(op.loc, fmt::format("'{}' is missing its operand '{}'", sig.name, spec.name));
        continue;
      }
      const Arg& arg = *op.operands[i];
      bool fits = false;
      switch (spec.kind) {
        case OperandKind::Type: fits = arg.form == Arg::Form::Type; break;
        case OperandKind::Bool: fits = arg.form == Arg::Form::Bool; break;
        case OperandKind::Int: fits = arg.form == Arg::Form::Expr && !arg.expr.empty(); break;
        case OperandKind::Stream: fits = (arg.form == Arg::Form::Stream && !arg.expr.empty()) || arg.isName(); break;
        case OperandKind::Tensor:
        case OperandKind::Event:
        case OperandKind::Handle: fits = arg.isName() || arg.isElement(); break;
        case OperandKind::ReduceOp: fits = arg.isName() && parseReduceOp(arg.nameValue()).has_value(); break;
        case OperandKind::Float: fits = arg.form == Arg::Form::Float && std::isfinite(arg.floatValue); break;
        case OperandKind::DType: fits = arg.form == Arg::Form::DType; break;
        case OperandKind::IntList: fits = arg.form == Arg::Form::List; break;
        case OperandKind::MeshAxes: fits = arg.isName() || arg.form == Arg::Form::List; break;
      }
      if (!fits)
        fail(firstValid(arg.loc, op.loc),
             fmt::format("operand '{}' of '{}' must be {}", spec.name, sig.name, operandKindName(spec.kind)));
      if (arg.form == Arg::Form::Float && !arg.expr.empty())
        checkParamUse(arg.expr.nameValue(), ValueKind::Float, firstValid(arg.loc, op.loc));
      if (arg.form == Arg::Form::DType && !arg.type.dtypeParam.empty())
        checkParamUse(arg.type.dtypeParam, ValueKind::DType, firstValid(arg.loc, op.loc));
    }
    size_t results = op.results.size();
    auto outSlot = outOperand(sig);
    bool hasOut = outSlot && op.operands[*outSlot].has_value();
    const size_t outs = resultOperandCount(sig);
    bool resultsFit = sig.resultMode == ResultMode::None            ? results == 0
                      : sig.resultMode == ResultMode::Required      ? results == 1
                      : sig.resultMode == ResultMode::Optional      ? results <= 1
                      : sig.resultMode == ResultMode::OutsOrResults ? results == (hasOut ? 0u : outs)
                                                                    : results == (hasOut ? 0u : 1u);
    if (!resultsFit)
      fail(op.loc, fmt::format("'{}' defines {} name{} here, which its signature does not allow", sig.name, results,
                               results == 1 ? "" : "s"));
  }

  // `scope`: the innermost loop or if branch around the operation, or null.
  void checkOperation(const Operation& op, const char* scope) {
    checkSignature(op);
    const OpSignature& sig = op.signature();
    std::optional<NameInfo> firstTensor;
    const Arg* firstTensorArg = nullptr;
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (!op.operands[i]) continue;
      const OperandSpec& spec = sig.operands[i];
      const Arg& arg = *op.operands[i];
      switch (spec.kind) {
        case OperandKind::Int: checkIntExpr(arg.expr, firstValid(arg.loc, op.loc)); break;
        case OperandKind::IntList:
          for (const Expr& item : arg.items) checkIntExpr(item, firstValid(arg.loc, op.loc));
          break;
        case OperandKind::MeshAxes:
          if (auto axes = meshAxesOf(program_, arg); !axes)
            fail(firstValid(axes.error().loc, op.loc), axes.error().message);
          break;
        case OperandKind::Type: checkType(arg.type, op.loc); break;
        case OperandKind::Stream:
          if (arg.form == Arg::Form::Stream)
            checkIntExpr(arg.expr, firstValid(arg.loc, op.loc));
          else
            namedValue(op, spec, arg, ValueKind::Stream);
          break;
        case OperandKind::Event: namedValue(op, spec, arg, ValueKind::Event); break;
        case OperandKind::Handle: namedValue(op, spec, arg, ValueKind::Handle); break;
        case OperandKind::Bool:
        case OperandKind::ReduceOp:
        case OperandKind::Float:
        case OperandKind::DType: break;
        case OperandKind::Tensor: {
          NameInfo info = checkTensorOperand(op, spec, arg, firstTensor ? &*firstTensor : nullptr, firstTensorArg);
          if (!firstTensor && spec.dtype == DTypeRule::Shared) {
            firstTensor = info;
            firstTensorArg = &arg;
          }
          break;
        }
      }
    }
    for (size_t k = 0; k < op.results.size(); ++k) defineResult(op, k, firstTensor, scope);
  }

  // The dtype tensor operand `operand` must have when it is not the
  // operation's one dtype, and why: its spec's DTypeRule (indices are i32,
  // log-sum-exps f32), and cast writes the dtype it names. nullopt: the
  // operation's one dtype (DTypeRule::Shared), or any (DTypeRule::Any).
  static std::optional<std::pair<DType, const char*>> fixedDType(const Operation& op, size_t operand) {
    using Pair = std::pair<DType, const char*>;
    switch (op.signature().operands[operand].dtype) {
      case DTypeRule::I32:
        return Pair{DType::I32, writesTensor(op.signature().operands[operand].effect)
                                    ? "writes its indices as an i32 tensor"
                                    : "reads its indices from an i32 tensor"};
      case DTypeRule::F32: return Pair{DType::F32, "keeps log-sum-exps in f32"};
      case DTypeRule::Any: return std::nullopt;
      case DTypeRule::Shared: break;
    }
    if (op.kind == OpKind::Cast && operand == operands::Cast::out)
      return Pair{op.operands[operands::Cast::dtype]->type.dtype, "writes the dtype it names"};
    return std::nullopt;
  }

  // A tensor operand: every tensor operation reads and writes one dtype (that
  // of `first`, the operation's first tensor operand, if this is not it),
  // but for the operands of fixedDType; computations compute on no i32
  // tensor (indices) but their indices; and only what the program
  // allocates can be deallocated.
  NameInfo checkTensorOperand(const Operation& op, const OperandSpec& spec, const Arg& arg, const NameInfo* first,
                              const Arg* firstArg) const {
    const OpSignature& sig = op.signature();
    NameInfo info = namedValue(op, spec, arg, ValueKind::Tensor);
    const auto operand = static_cast<size_t>(&spec - sig.operands.data());
    if (auto fixed = fixedDType(op, operand)) {
      if (info.dtype != fixed->first)
        fail(arg.loc,
             fmt::format("'{}' {}, but '{}' is {}", sig.name, fixed->second, arg.nameValue(), dtypeName(info.dtype)));
    } else if (spec.dtype == DTypeRule::Any) {
      // a condition: any dtype
    } else if (sig.category == OpCategory::Compute && !isFloating(info.dtype)) {
      fail(arg.loc, fmt::format("'{}' does not compute on {} tensors (indices)", sig.name, dtypeName(info.dtype)));
    } else if (first && info.dtype != first->dtype && sig.category != OpCategory::View) {
      fail(arg.loc, fmt::format("dtype mismatch in '{}': '{}' is {} but '{}' is {}", sig.name, firstArg->nameValue(),
                                dtypeName(first->dtype), arg.nameValue(), dtypeName(info.dtype)));
    }
    if (op.kind == OpKind::Cast && operand == operands::Cast::x) {
      const Arg& dtype = *op.operands[operands::Cast::dtype];
      if (!isFloating(dtype.type.dtype))
        fail(
            firstValid(dtype.loc, op.loc),
            fmt::format("'cast' converts between f32, f16, bf16 and f64, not to {}{} (indices)", dtype.type.dtypeText(),
                        dtype.type.dtypeParam.empty() ? "" : fmt::format(" ({})", dtypeName(dtype.type.dtype))));
    }
    if (spec.effect == Effect::Free && info.origin != TensorOrigin::Allocated) {
      std::string_view what = info.origin == TensorOrigin::Input    ? "the program input"
                              : info.origin == TensorOrigin::Output ? "the program output"
                                                                    : "a view";
      fail(arg.loc,
           fmt::format("'{}' is {}; only tensors the program allocates can be deallocated", arg.nameValue(), what));
    }
    return info;
  }

  // The dtype of the tensor an operation defines: that of the type it names
  // (allocate, fill, iota, reshape), of its `out` slot's fixed dtype
  // (bucket's i32, cast's named one), or else of its first Shared operand.
  static DType resultDType(const Operation& op, size_t k, const std::optional<NameInfo>& firstTensor) {
    const OpSignature& sig = op.signature();
    for (size_t i = 0; i < sig.operands.size(); ++i)
      if (sig.operands[i].kind == OperandKind::Type && op.operands[i]) return op.operands[i]->type.dtype;
    if (auto out = resultOperand(sig, k))
      if (auto fixed = fixedDType(op, *out)) return fixed->first;
    return firstTensor->dtype;
  }

  // The name an operation defines; a tensor takes the dtype of its first
  // tensor operand (allocate's, of its type; cast's, the one it names). A declared output must be a
  // tensor of its declared dtype, defined at the top level (`scope` null).
  void defineResult(const Operation& op, size_t k, const std::optional<NameInfo>& firstTensor, const char* scope) {
    const NameDef& result = op.results[k];
    if (result.isElement()) return defineElement(op, result);
    const OpSignature& sig = op.signature();
    NameInfo info{sig.resultKind, result.loc};
    if (sig.resultKind == ValueKind::Tensor) {
      info.dtype = resultDType(op, k, firstTensor);
      info.origin = sig.category == OpCategory::View ? TensorOrigin::View : TensorOrigin::Allocated;
    }
    if (auto out = outputs_.find(result.name); out != outputs_.end()) {
      const Decl& decl = *out->second;
      if (scope)
        fail(result.loc,
             fmt::format("output '{}' must be defined at the top level of the program, not in {}", result.name, scope));
      if (info.kind != ValueKind::Tensor)
        fail(result.loc,
             op.kind == OpKind::IntValue
                 ? fmt::format("output '{}' must be a tensor, but it is bound to an integer expression", result.name)
                 : fmt::format("output '{}' must be a tensor, but '{}' defines {}", result.name, sig.name,
                               withArticle(info.kind)));
      if (info.dtype != decl.type.dtype)
        fail(result.loc, fmt::format("output '{}' is declared {} but defined as {}", result.name,
                                     dtypeName(decl.type.dtype), dtypeName(info.dtype)));
      info.origin = TensorOrigin::Output;
    }
    define(result.name, result.loc, info);
  }

  const Program& program_;
  NameResolver names_;
  std::vector<TensorFacts> tensors_;  // by slot
  std::unordered_map<std::string, const Decl*> outputs_;
  // Where each name was first defined, and the scope around it: for the
  // message about a name used outside its loop or if branch.
  struct Definition {
    SourceLoc loc;
    const char* scope;
  };
  std::unordered_map<std::string, Definition> everDefined_;
  // Handle and event arrays by name: visible from their first definition
  // to the end of the program, whatever scope defined them.
  struct ArrayInfo {
    ValueKind kind;
    SourceLoc loc;  // the first definition
  };
  std::unordered_map<std::string, ArrayInfo> arrays_;
  std::unordered_map<std::string, SourceLoc> firstElementAt_;  // every array's first definition in the text
  const char* scope_ = nullptr;                                // the innermost loop or if branch being walked
};

}  // namespace

// ---------------------------------------------------------------------------
// Shapes and integers, with the params bound and the loops unrolled
// (ir/shape_checker.h; the rules of each category in verify_*.cpp).

namespace verification {
namespace {

std::string typeString(DType dtype, const std::vector<int64_t>& shape) {
  return fmt::format("{}{}", dtypeName(dtype), shapeString(shape));
}

}  // namespace

void checkByteSize(SourceLoc loc, std::string_view what, DType dtype, const std::vector<int64_t>& shape) {
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  bool empty = false;
  bool overflows = false;
  for (int64_t extent : shape) {
    empty |= extent == 0;
    if (extent != 0 && __builtin_mul_overflow(bytes, extent, &bytes)) overflows = true;
  }
  if (!overflows) return;
  std::string tensor = what.empty() ? typeString(dtype, shape) : fmt::format("{}, {},", what, typeString(dtype, shape));
  std::string limit = "more than 8 EiB; a tensor's byte size must fit in 63 bits";
  if (empty) fail(loc, fmt::format("{} is empty, but its non-zero extents span {}", tensor, limit));
  fail(loc, fmt::format("{} needs {}", tensor, limit));
}

ShapeChecker::ShapeChecker(const Program& p, const std::map<std::string, int64_t>& params, int64_t rank, int64_t world)
    : program_(p), world_(world) {
  values_.resize(names_.slotCount());
  values_[kRankSlot] = BoundValue{ValueKind::Int, rank};
  values_[kWorldSlot] = BoundValue{ValueKind::Int, world};
  for (const auto& [name, value] : params) bind(name, BoundValue{ValueKind::Int, value});
  if (p.mesh.empty()) return;
  auto extents = meshExtents(
      p, [&](const std::string& name) -> std::optional<int64_t> { return lookup(name).integer; }, world);
  if (!extents) throw DiagnosticError{extents.error()};
  forEachMeshBuiltin(p, *extents, rank, [&](const std::string& name, int64_t value) {
    bind(name, BoundValue{ValueKind::Int, value});
  });
  meshExtents_ = *extents;
}

void ShapeChecker::run() {
  for (const Decl& d : program_.decls) {
    // extents() checked the global shape's byte size; the rank-local one is no larger.
    std::vector<int64_t> shape = localShape(d);
    if (d.kind == DeclKind::Input) bindTensor(d.name, d.type.dtype, shape, d.name);
  }
  walk(program_.body);
  for (const Decl& d : program_.decls) {
    if (d.kind != DeclKind::Output) continue;
    const BoundTensor& t = lookup(d.name).tensor;
    std::vector<int64_t> want = localShape(d);
    if (t.shape != want)
      fail(d.loc, fmt::format("output '{}' is declared with rank-local shape {} but the program defines it as {}",
                              d.name, shapeString(want), shapeString(t.shape)));
  }
}

std::vector<int64_t> ShapeChecker::localShape(const Decl& d) {
  std::vector<int64_t> shape = extents(d.type);
  if (d.shardAxis) {
    int64_t& extent = shape[static_cast<size_t>(*d.shardAxis)];
    const int64_t parts = d.shardOver.empty() ? world_ : lookup(meshSizeName(d.shardOver)).integer;
    if (extent % parts != 0)
      fail(d.shardOver.empty() ? d.shardLoc : firstValid(d.shardOverLoc, d.shardLoc),
           d.shardOver.empty()
               ? fmt::format("extent {} of axis {} of '{}' does not divide evenly over {} ranks", extent, *d.shardAxis,
                             d.name, world_)
               : fmt::format("extent {} of axis {} of '{}' does not divide evenly over the {} ranks of mesh axis '{}'",
                             extent, *d.shardAxis, d.name, parts, d.shardOver));
    extent = shardExtent(extent, parts);
  }
  return shape;
}

void ShapeChecker::tooManyTerms(SourceLoc loc) const {
  fail(loc,
       fmt::format("the program evaluates more than {} expression terms with these parameters; too large to verify",
                   kMaxEvaluatedExprNodes));
}

int64_t ShapeChecker::eval(const Expr& e, SourceLoc fallback) {
  // Charged before the walk: a huge expression in a long loop is refused, not a hang.
  if (__builtin_add_overflow(evaluated_, e.nodeCount(), &evaluated_) || evaluated_ > exprBudget_)
    tooManyTerms(firstValid(e.loc(), fallback));
  auto v = evaluate(
      e, [&](const std::string& name) -> std::optional<int64_t> { return lookup(name).integer; }, fallback);
  if (!v) throw DiagnosticError{v.error()};
  return *v;
}

std::vector<int64_t> ShapeChecker::extents(const TensorType& type) {
  std::vector<int64_t> shape;
  for (const Expr& dim : type.dims) {
    int64_t extent = eval(dim, type.loc);
    if (extent < 0) fail(dim.loc().valid() ? dim.loc() : type.loc, fmt::format("negative extent {}", extent));
    shape.push_back(extent);
  }
  // The byte size must fit too, or element and byte counts wrap later.
  checkByteSize(type.loc, "", type.dtype, shape);
  return shape;
}

const BoundValue& ShapeChecker::lookup(const std::string& name) const {
  if (const NameSlot* slot = names_.lookup(name)) return values_[static_cast<size_t>(slot->slot)];
  // The structure check guarantees every name resolves.
  throw DiagnosticError{Diagnostic{{}, fmt::format("internal error: unbound name '{}'", name)}};
}

void ShapeChecker::bind(const std::string& name, BoundValue value) {
  const NameSlot& slot = names_.define(name, value.kind);
  if (values_.size() < names_.slotCount()) values_.resize(names_.slotCount());
  values_[static_cast<size_t>(slot.slot)] = std::move(value);
}

void ShapeChecker::bindTensor(const std::string& name, DType dtype, std::vector<int64_t> shape,
                              const std::string& bufferName) {
  auto buffer = std::make_shared<BufferState>(BufferState{&bufferName, {}, false});
  bind(name, BoundValue{ValueKind::Tensor, 0, BoundTensor{dtype, std::move(shape), std::move(buffer)}});
}

const BoundTensor& ShapeChecker::tensor(const Operation& op, size_t operand) {
  const Arg& arg = *op.operands[operand];
  const BoundValue& v = lookup(arg.nameValue());
  const BufferState& buffer = *v.tensor.buffer;
  if (buffer.deallocated)
    fail(arg.loc, fmt::format("'{}' is used after '{}' was deallocated{}", arg.nameValue(), *buffer.name,
                              at(buffer.deallocatedAt)));
  return v.tensor;
}

int64_t ShapeChecker::intOperand(const Operation& op, size_t operand, int64_t defaultValue) {
  const auto& arg = op.operands[operand];
  return arg ? eval(arg->expr, arg->loc) : defaultValue;
}

void ShapeChecker::tooLarge(SourceLoc loc) const {
  fail(loc, fmt::format("the program runs more than {} statements with these parameters; too large to verify",
                        kMaxUnrolledStatements));
}

void ShapeChecker::walk(const std::vector<Statement>& body) {
  for (const Statement& stmt : body) {
    if (++walked_ > budget_) tooLarge(stmt.loc());
    throwIfCancelled(cancel_);
    if (stmt.isOp()) {
      checkOperation(stmt.op());
      continue;
    }
    if (stmt.isWith()) {
      checkStreamNumber(stmt.with().stream);
      walk(stmt.with().body);
      continue;
    }
    if (stmt.isIf()) {
      // Only the branch this rank takes, as a loop's body only for its
      // iterations: the other one is never run with these bindings.
      const IfBlock& block = stmt.ifBlock();
      walkScope(evalCondition(block.cond, block.loc) ? block.thenBody : block.elseBody, [] {});
      continue;
    }
    const ForLoop& loop = stmt.loop();
    int64_t start = loop.start.empty() ? 0 : eval(loop.start, loop.loc);
    int64_t end = eval(loop.end, loop.loc);
    // Refuse a loop the budget cannot cover before unrolling it: every
    // iteration costs at least one step, so an empty body cannot spin for ever.
    int64_t trips = 0;
    if (end > start && __builtin_sub_overflow(end, start, &trips)) trips = INT64_MAX;
    int64_t cost = std::max<int64_t>(1, static_cast<int64_t>(loop.body.size()));
    if (trips > (budget_ - walked_) / cost) tooLarge(loop.loc);
    int64_t terms = exprNodesPerIteration(loop.body);
    if (terms > 0 && trips > (exprBudget_ - evaluated_) / terms) tooManyTerms(loop.loc);
    if (loop.body.empty()) {
      walked_ += trips;
      continue;
    }
    for (int64_t i = start; i < end; ++i)
      walkScope(loop.body, [&] { bind(loop.index.name, BoundValue{ValueKind::Int, i}); });
  }
}

void ShapeChecker::walkScope(const std::vector<Statement>& body, const std::function<void()>& bindFirst) {
  names_.openScope();
  bindFirst();
  walk(body);
  // The scope's slots serve the next one (a loop's next iteration); its
  // values (and the buffers only they refer to) go now.
  names_.closeScope(/*reuseSlots=*/true);
  values_.resize(names_.slotCount());
}

bool ShapeChecker::evalCondition(const Condition& cond, SourceLoc fallback) {
  // Charged whole before the walk, as eval() charges an expression.
  if (__builtin_add_overflow(evaluated_, cond.nodeCount(), &evaluated_) || evaluated_ > exprBudget_)
    tooManyTerms(firstValid(cond.loc(), fallback));
  auto v = evaluate(
      cond, [&](const std::string& name) -> std::optional<int64_t> { return lookup(name).integer; }, fallback);
  if (!v) throw DiagnosticError{v.error()};
  return *v;
}

int64_t ShapeChecker::exprNodesPerIteration(const std::vector<Statement>& body) {
  int64_t total = 0;
  auto add = [&](const Expr& e) {
    if (__builtin_add_overflow(total, e.nodeCount(), &total)) total = INT64_MAX;
  };
  for (const Statement& stmt : body) {
    if (stmt.isFor()) {
      add(stmt.loop().start);
      add(stmt.loop().end);
      continue;
    }
    if (stmt.isWith()) {
      if (stmt.with().stream.form == Arg::Form::Stream) add(stmt.with().stream.expr);
      continue;
    }
    if (stmt.isIf()) {
      if (__builtin_add_overflow(total, stmt.ifBlock().cond.nodeCount(), &total)) total = INT64_MAX;
      continue;
    }
    for (const NameDef& result : stmt.op().results) add(result.index);
    for (const auto& arg : stmt.op().operands) {
      if (!arg) continue;
      if (arg->form == Arg::Form::Element) add(arg->index);
      for (const Expr& item : arg->items) add(item);
      if (arg->form == Arg::Form::Type) {
        for (const Expr& dim : arg->type.dims) add(dim);
      } else if (arg->form == Arg::Form::Stream || (arg->form == Arg::Form::Expr && !arg->isName())) {
        add(arg->expr);
      }
    }
  }
  return total;
}

// Every tensor operand must still be alive; then the operation's own rule.
void ShapeChecker::checkOperation(const Operation& op) {
  const OpSignature& sig = op.signature();
  for (size_t i = 0; i < sig.operands.size(); ++i)
    if (op.operands[i] && sig.operands[i].kind == OperandKind::Tensor) tensor(op, i);
  checkByItsRule(op);
}

void ShapeChecker::requireShape(const Operation& op, size_t operand, const std::vector<int64_t>& want,
                                std::string_view why) {
  const BoundTensor& t = tensor(op, operand);
  const Arg& arg = *op.operands[operand];
  if (t.shape != want)
    fail(arg.loc, fmt::format("'{}' has shape {}, but {} needs {}", arg.nameValue(), shapeString(t.shape), why,
                              shapeString(want)));
}

void ShapeChecker::produce(const Operation& op, size_t out, DType dtype, const std::vector<int64_t>& shape) {
  dtype = result_shape::writtenDType(op.signature().operands[out], dtype);
  // A derived shape ([M, K] x [K, N] -> [M, N]) can be larger than every operand.
  checkByteSize(op.loc, fmt::format("the result of '{}'", op.signature().name), dtype, shape);
  if (op.operands[out]) {
    requireShape(op, out, shape, fmt::format("the result of '{}'", op.signature().name));
    return;
  }
  // The name that stands for `out` (v or i of `v, i = top_k(...)`).
  size_t k = 0;
  while (k + 1 < op.results.size() && resultOperand(op.signature(), k) != out) ++k;
  bindTensor(op.results[k].name, dtype, shape, op.results[k].name);
}

void ShapeChecker::checkAxis(const Operation& op, size_t axisOperand, int64_t axis, const BoundTensor& t) {
  if (axis < 0 || axis >= static_cast<int64_t>(t.shape.size())) {
    const auto& arg = op.operands[axisOperand];
    fail(arg ? arg->loc : op.loc, fmt::format("axis {} is out of range for a tensor of rank {}", axis, t.shape.size()));
  }
}

// The stream of `with`, set_current_stream or synchronize: a `stream(e)` number must not be negative.
void ShapeChecker::checkStreamNumber(const Arg& s) {
  if (s.form != Arg::Form::Stream) return;
  int64_t number = eval(s.expr, s.loc);
  if (number < 0)
    fail(s.expr.loc().valid() ? s.expr.loc() : s.loc, fmt::format("stream number {} is negative", number));
}

}  // namespace verification

Result<std::map<std::string, int64_t>> bindParams(const Program& program, const Bindings& bindings) {
  std::map<std::string, int64_t> values;
  for (const Param& p : program.params)
    if (p.kind == ParamKind::Int) values[p.name] = p.value;
  for (const auto& [name, value] : bindings.params) {
    if (const Param* p = program.findParam(name); p && p->kind != ParamKind::Int)
      return Diagnostic{{},
                        fmt::format("parameter '{}' of program '{}' is a {}, not an integer", name, program.name,
                                    p->kind == ParamKind::Float ? "number" : "dtype")};
    if (!program.findParam(name)) {
      std::vector<std::string> known;
      for (const Param& p : program.params) known.push_back(p.name);
      return Diagnostic{{},
                        fmt::format("program '{}' has no parameter '{}' (its parameters: {})", program.name, name,
                                    known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")))};
    }
    values[name] = value;
  }
  return values;
}

Status verifyStructure(const Program& program) {
  try {
    StructureChecker(program).run();
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
  return std::nullopt;
}

Status verifyProgram(const Program& program, const Bindings& bindings, const std::atomic<bool>* cancel) {
  if (auto error = verifyStructure(program)) return error;
  if (bindings.world < 1) return Diagnostic{{}, fmt::format("a team needs at least one rank, got {}", bindings.world)};
  auto params = bindParams(program, bindings);
  if (!params) return params.error();
  try {
    // Shapes may depend on `rank`: then every rank's program must be well
    // formed. A program that never names `rank` is the same on every rank.
    int64_t budget = kMaxUnrolledStatements;
    int64_t exprBudget = kMaxEvaluatedExprNodes;
    int64_t ranksToCheck = namesRank(program) ? bindings.world : 1;
    for (int64_t rank = 0; rank < ranksToCheck; ++rank) {
      verification::ShapeChecker checker(program, *params, rank, bindings.world);
      checker.setBudget(budget, exprBudget);
      checker.setCancel(cancel);
      checker.run();
      budget -= checker.statementsWalked();
      exprBudget -= checker.exprNodesEvaluated();
    }
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
  return std::nullopt;
}

}  // namespace hostir
