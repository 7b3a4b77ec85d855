#include "ir/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/closest_name.h"
#include "ir/lexer.h"
#include "ir/mesh.h"
#include "ir/verifier.h"

namespace hostir {
namespace {

// Limits (ir/expr.h, ir/verifier.h) keep every recursive walk of a
// parsed program, here and downstream, within a bounded stack: the parser
// recurses once per parenthesis, call and loop, and each operator it builds
// adds a level to the tree that later walks recurse over.
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) { findConditionGroups(); }

  Program program() {
    skipNewlines();
    lineStart_ = pos_;
    Program p;
    const Token& kw = expectKeyword("program", "a program must start with 'program NAME(...)'");
    p.loc = kw.loc;
    p.name = std::string(expectIdent("a program name").text);
    open(TokenKind::LParen, "'(' after the program name", "the parameter list");
    if (!acceptClose(TokenKind::RParen)) {
      do p.params.push_back(param());
      while (accept(TokenKind::Comma));
      close(TokenKind::RParen, "',' or ')' in the parameter list");
    }
    if (isKeyword(peek(), "mesh")) mesh(p);
    if (isKeyword(peek(), "proved_for")) p.provedFor = provedFor();
    open(TokenKind::LBrace, "'{' to open the program body", "the program body");
    bool sawStatement = false;
    while (true) {
      skipTerminators();
      if (peek().kind == TokenKind::RBrace || peek().kind == TokenKind::Eof) break;
      if (isKeyword(peek(), "input") || isKeyword(peek(), "output")) {
        if (sawStatement) fail(peek().loc, "declarations must come before the first statement");
        p.decls.push_back(decl());
      } else {
        sawStatement = true;
        p.body.push_back(statement(0));
      }
      expectStatementEnd();
    }
    close(TokenKind::RBrace, "'}' to close the program body");
    skipTerminators();
    if (peek().kind != TokenKind::Eof)
      fail(peek().loc, fmt::format("unexpected {} after the end of the program", describeToken(peek())));
    return p;
  }

  Expr standaloneExpr() {
    skipNewlines();
    Expr e = expr(0);
    skipNewlines();
    if (peek().kind != TokenKind::Eof)
      fail(peek().loc, fmt::format("unexpected {} after the expression", describeToken(peek())));
    return e;
  }

  // Explains an error with the delimiter it leaves unclosed: an error at the
  // end of the file, or one about a missing closing delimiter, gets a note
  // at the innermost '{', '(' or '[' that is still open.
  void annotate(Diagnostic& diag) const {
    if (!diag.notes.empty() || openDelimiters_.empty()) return;
    const OpenDelimiter& innermost = openDelimiters_.back();
    if (diag.loc != tokens_.back().loc && !failedToClose_) return;
    diag.notes.push_back(Note{innermost.loc, fmt::format("to match this '{}' ({})", innermost.text, innermost.what)});
  }

 private:
  // A '{', '(' or '[' that has not been closed yet, for the note an error
  // about the missing closing delimiter carries.
  struct OpenDelimiter {
    SourceLoc loc;
    std::string_view text;
    std::string what;  // "the loop body"
  };

  // Token access: newlines are skipped except where statements end.
  const Token& peekRaw() const { return tokens_[pos_]; }
  const Token& peek() {
    skipNewlines();
    return tokens_[pos_];
  }
  const Token& peekAhead(size_t n) {
    skipNewlines();
    size_t p = pos_;
    for (size_t k = 0; k < n && tokens_[p].kind != TokenKind::Eof; ++k) {
      ++p;
      while (tokens_[p].kind == TokenKind::Newline) ++p;
    }
    return tokens_[p];
  }
  const Token& next() {
    const Token& t = peek();
    if (t.kind != TokenKind::Eof) ++pos_;
    return t;
  }
  void skipNewlines() {
    while (tokens_[pos_].kind == TokenKind::Newline) ++pos_;
  }
  void skipTerminators() {
    while (tokens_[pos_].kind == TokenKind::Newline || tokens_[pos_].kind == TokenKind::Semicolon) ++pos_;
    lineStart_ = pos_;
  }
  // The token an error about a missing token points at: the end of the line
  // when the line ended before the construct did, not a token on a later line.
  const Token& found() {
    const Token& t = peek();
    size_t p = pos_;
    while (p > lineStart_ && tokens_[p - 1].kind == TokenKind::Newline) --p;
    return p < pos_ && t.kind != TokenKind::Eof ? tokens_[p] : t;
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  const Token& expect(TokenKind kind, std::string_view what) {
    if (peek().kind != kind) fail(found().loc, fmt::format("expected {}, found {}", what, describeToken(found())));
    return next();
  }
  // Consumes an opening delimiter and remembers it until close().
  const Token& open(TokenKind kind, std::string_view expected, std::string_view what) {
    const Token& t = expect(kind, expected);
    openDelimiters_.push_back(OpenDelimiter{t.loc, t.text, std::string(what)});
    return t;
  }
  // Consumes the closing delimiter of the innermost open one; its absence is
  // an error with a note at the opening delimiter.
  const Token& close(TokenKind kind, std::string_view expected) {
    if (peek().kind != kind) failedToClose_ = true;
    const Token& t = expect(kind, expected);
    openDelimiters_.pop_back();
    return t;
  }
  bool acceptClose(TokenKind kind) {
    if (peek().kind != kind) return false;
    close(kind, "");
    return true;
  }
  static bool isKeyword(const Token& t, std::string_view word) { return t.kind == TokenKind::Ident && t.text == word; }
  const Token& expectKeyword(std::string_view word, std::string_view message) {
    if (!isKeyword(peek(), word)) fail(found().loc, std::string(message));
    return next();
  }
  const Token& expectIdent(std::string_view what) {
    if (peek().kind != TokenKind::Ident)
      fail(found().loc, fmt::format("expected {}, found {}", what, describeToken(found())));
    return next();
  }
  // A name being defined: an identifier that is not reserved.
  NameDef definedName(std::string_view what) {
    const Token& t = expectIdent(what);
    if (isReservedName(t.text)) fail(t.loc, fmt::format("'{}' is a reserved word and cannot be defined", t.text));
    return NameDef{std::string(t.text), t.loc};
  }
  void expectStatementEnd() {
    const Token& t = peekRaw();
    if (t.kind == TokenKind::Newline || t.kind == TokenKind::Semicolon || t.kind == TokenKind::RBrace ||
        t.kind == TokenKind::Eof)
      return;
    if (isKeyword(t, "else")) fail(t.loc, elseWithoutIf());
    fail(t.loc, fmt::format("expected end of statement, found {}", describeToken(t)));
  }

  static std::string elseWithoutIf() { return "'else' without an 'if': only an if block has an else branch"; }

  int64_t nonNegativeInt(std::string_view what) {
    const Token& t = expect(TokenKind::Int, what);
    if (t.intValue > static_cast<uint64_t>(INT64_MAX))
      fail(t.loc, fmt::format("integer literal {} does not fit in 64 bits", t.text));
    return static_cast<int64_t>(t.intValue);
  }

  // NAME = INT | FLOAT | DTYPE: the default's token says the parameter's kind.
  Param param() {
    NameDef name = definedName("a parameter name");
    // A map, not Program::findParam: a long parameter list must not cost quadratic time.
    if (params_.count(name.name)) fail(name.loc, fmt::format("parameter '{}' is defined twice", name.name));
    expect(TokenKind::Equals, fmt::format("'=' and a default value for parameter '{}'", name.name));
    Param p{name.name};
    p.loc = name.loc;
    const Token& t = peek();
    if (t.kind == TokenKind::Float || (t.kind == TokenKind::Minus && peekAhead(1).kind == TokenKind::Float)) {
      const bool negative = accept(TokenKind::Minus);
      p.kind = ParamKind::Float;
      p.floatValue = negative ? -next().floatValue : next().floatValue;
    } else if (t.kind == TokenKind::Ident && parseDType(t.text)) {
      p.kind = ParamKind::DType;
      p.dtypeValue = *parseDType(next().text);
    } else if (t.kind == TokenKind::Ident) {
      fail(t.loc, fmt::format("unknown dtype '{}' as the default of parameter '{}'; expected an integer, a number "
                              "(0.01) or a dtype (f32, f16, bf16, f64 or i32)",
                              t.text, name.name));
    } else {
      p.value = nonNegativeInt("an integer default value");
    }
    params_.emplace(p.name, p);
    return p;
  }

  // The parameter `name` when it is one of `kind`; null otherwise.
  const Param* paramOfKind(std::string_view name, ParamKind kind) const {
    auto it = params_.find(std::string(name));
    return it != params_.end() && it->second.kind == kind ? &it->second : nullptr;
  }

  // mesh(dp = world / TP, tp = TP), after the parameters (ir/mesh.h).
  void mesh(Program& p) {
    p.meshLoc = next().loc;
    open(TokenKind::LParen, "'(' after 'mesh'", "the mesh");
    if (peek().kind == TokenKind::RParen) fail(peek().loc, "a mesh needs at least one axis: mesh(tp = 2)");
    do {
      NameDef name = definedName("a mesh axis name");
      for (const MeshAxis& axis : p.mesh)
        if (axis.name == name.name) fail(name.loc, fmt::format("mesh axis '{}' is defined twice", name.name));
      expect(TokenKind::Equals, fmt::format("'=' and the extent of mesh axis '{}'", name.name));
      p.mesh.push_back(MeshAxis{name.name, expr(0), name.loc});
    } while (accept(TokenKind::Comma));
    close(TokenKind::RParen, "',' or ')' in the mesh");
    for (const MeshAxis& axis : p.mesh) meshAxes_.push_back(axis.name);
  }

  // coord(AXIS) or size(AXIS), after its name: the builtin's name (ir/mesh.h).
  Expr meshBuiltin(const Token& function) {
    open(TokenKind::LParen, "'('", fmt::format("the call of '{}'", function.text));
    const Token& axis = expectIdent(fmt::format("a mesh axis name in '{}(...)'", function.text));
    close(TokenKind::RParen, fmt::format("')' after the axis of '{}'", function.text));
    if (meshAxes_.empty())
      fail(function.loc, fmt::format("'{}({})' needs a mesh, and the program declares none: program p(...) "
                                     "mesh({} = ...) {{",
                                     function.text, axis.text, axis.text));
    if (std::find(meshAxes_.begin(), meshAxes_.end(), axis.text) == meshAxes_.end())
      fail(axis.loc,
           fmt::format("unknown mesh axis '{}'; the mesh's axes are {}", axis.text, fmt::join(meshAxes_, ", ")));
    const std::string name = function.text == "coord" ? meshCoordName(axis.text) : meshSizeName(axis.text);
    return Expr::name(name, function.loc);
  }

  // proved_for(world = W, streams = P), after the parameters.
  ProvedFor provedFor() {
    ProvedFor proved;
    proved.loc = next().loc;
    open(TokenKind::LParen, "'(' after 'proved_for'", "the proved_for clause");
    auto field = [&](std::string_view key, int64_t max) {
      expectKeyword(key, fmt::format("expected '{} = N' in the proved_for clause", key));
      expect(TokenKind::Equals,
             fmt::format("'=' and the {} after '{}'", key == "world" ? "team size" : "pool size", key));
      const SourceLoc at = peek().loc;
      int64_t value = nonNegativeInt(fmt::format("an integer {}", key));
      if (value < 1 || value > max) fail(at, fmt::format("'{}' must be from 1 to {}, got {}", key, max, value));
      return value;
    };
    proved.world = field("world", kMaxRanks);
    expect(TokenKind::Comma, "',' and 'streams = N' in the proved_for clause");
    proved.streams = field("streams", kMaxStreams);
    close(TokenKind::RParen, "')' to close the proved_for clause");
    return proved;
  }

  Decl decl() {
    Decl d;
    d.kind = next().text == "input" ? DeclKind::Input : DeclKind::Output;
    NameDef name = definedName("a tensor name");
    if (params_.count(name.name) || !declNames_.insert(name.name).second)
      fail(name.loc, fmt::format("'{}' is defined twice", name.name));
    d.name = name.name;
    d.loc = name.loc;
    expect(TokenKind::Colon, "':' and a tensor type");
    d.type = tensorType();
    if (isKeyword(peekRaw(), "shard")) {
      d.shardLoc = next().loc;
      open(TokenKind::LParen, "'(' after 'shard'", "the shard axis");
      const Token& axisTok = peek();
      int64_t axis = nonNegativeInt("the sharded axis");
      if (axis >= static_cast<int64_t>(d.type.dims.size()))
        fail(axisTok.loc,
             fmt::format("shard axis {} is out of range for a tensor of rank {}", axis, d.type.dims.size()));
      d.shardAxis = axis;
      if (accept(TokenKind::Comma)) {
        if (!isKeyword(peek(), "over"))
          fail(found().loc, fmt::format("expected 'over=' and a mesh axis, found {}", describeToken(found())));
        next();
        expect(TokenKind::Equals, "'=' and a mesh axis after 'over'");
        const Token& over = expectIdent("a mesh axis after 'over='");
        if (std::find(meshAxes_.begin(), meshAxes_.end(), over.text) == meshAxes_.end())
          fail(over.loc, meshAxes_.empty()
                             ? fmt::format("'shard(..., over={})' needs a mesh, and the program declares none: "
                                           "program p(...) mesh({} = ...) {{",
                                           over.text, over.text)
                             : fmt::format("unknown mesh axis '{}'; the mesh's axes are {}", over.text,
                                           fmt::join(meshAxes_, ", ")));
        d.shardOver = over.text;
        d.shardOverLoc = over.loc;
      }
      close(TokenKind::RParen, "')' after the shard axis");
    }
    return d;
  }

  TensorType tensorType() {
    const Token& t = expectIdent("a dtype (f32, f16, bf16, f64 or i32)");
    TensorType type;
    if (const Param* param = paramOfKind(t.text, ParamKind::DType)) {
      type.dtypeParam = param->name;
      type.dtype = param->dtypeValue;
    } else {
      auto dtype = parseDType(t.text);
      if (!dtype) fail(t.loc, fmt::format("unknown dtype '{}'; expected f32, f16, bf16, f64 or i32", t.text));
      type.dtype = *dtype;
    }
    type.loc = t.loc;
    open(TokenKind::LBracket, "'[' and the dimensions of the tensor type", "the dimensions");
    if (!acceptClose(TokenKind::RBracket)) {
      do type.dims.push_back(expr(0));
      while (accept(TokenKind::Comma));
      close(TokenKind::RBracket, "',' or ']' in the dimensions");
    }
    return type;
  }

  // `depth`: how many loops, with blocks and if blocks enclose the statement.
  Statement statement(int depth) {
    if (isKeyword(peek(), "for")) return forLoop(depth);
    // `with = ...` and `if = ...` go on, to be refused as the definition of a reserved word.
    bool defines = peekAhead(1).kind == TokenKind::Equals || peekAhead(1).kind == TokenKind::Comma;
    if (isKeyword(peek(), "with") && !defines) return withBlock(depth);
    if (isKeyword(peek(), "if") && !defines) return ifBlock(depth);
    if (isKeyword(peek(), "else") && !defines) fail(peek().loc, elseWithoutIf());
    std::vector<NameDef> results;
    if (peek().kind == TokenKind::Ident &&
        (peekAhead(1).kind == TokenKind::Comma || peekAhead(1).kind == TokenKind::Equals ||
         peekAhead(1).kind == TokenKind::LBracket)) {
      do results.push_back(target());
      while (accept(TokenKind::Comma));
      expect(TokenKind::Equals, "'=' after the defined names");
      if (startsIntegerBinding()) return integerBinding(std::move(results));
    }
    const Token& callee = expectIdent("an operation, 'for', 'with' or 'if'");
    open(TokenKind::LParen, fmt::format("'(' after '{}'", callee.text), "the operand list");
    std::vector<ParsedArg> args;
    if (!acceptClose(TokenKind::RParen)) {
      do args.push_back(arg());
      while (accept(TokenKind::Comma));
      close(TokenKind::RParen, "',' or ')' in the operand list");
    }
    return buildOperation(callee, std::move(results), std::move(args));
  }

  // After `names =`: an integer expression rather than an operation, unless
  // the next tokens are `op(` with an operation's name (ceildiv, min and max
  // are integer functions, so `n = min(a, b) + 1` is an expression).
  bool startsIntegerBinding() {
    const Token& t = peek();
    if (t.kind != TokenKind::Ident) return true;
    if (peekAhead(1).kind == TokenKind::LParen) {
      if (isMeshBuiltin(t.text)) return true;
      if (!parseIntFunction(t.text)) return false;
      // `max` is also the reduction: `max(a, b)` (two operands, no
      // keyword) is the integer function, `max(x)` and `max(x, axis=1)` the
      // operation.
      return !opKindByName(t.text) || callHasTwoPositionalOperands();
    }
    // An operation's name followed on its line by what no expression
    // continues with (`t = allocate f32[4]`) is an operation missing its '('.
    return !opKindByName(t.text) || continuesExpression(tokens_[pos_ + 1].kind);
  }

  // Whether the parentheses at the next token hold a comma at their own
  // level: `(1, 0)` is a list, `(a + 1)` an expression.
  bool parenthesesHoldAList() {
    skipNewlines();
    int depth = 0;
    for (size_t p = pos_; tokens_[p].kind != TokenKind::Eof; ++p) {
      const TokenKind kind = tokens_[p].kind;
      if (kind == TokenKind::LParen || kind == TokenKind::LBracket) ++depth;
      if ((kind == TokenKind::RParen || kind == TokenKind::RBracket) && --depth == 0) return false;
      if (depth == 1 && kind == TokenKind::Comma) return true;
    }
    return false;
  }

  // Whether the call at the next tokens (`name(`) has exactly two operands,
  // neither of them `keyword=`, looking ahead without consuming.
  bool callHasTwoPositionalOperands() {
    skipNewlines();
    size_t p = pos_ + 1;  // at '('
    while (tokens_[p].kind == TokenKind::Newline) ++p;
    int depth = 0, commas = 0;
    bool empty = true, keyword = false;
    for (; tokens_[p].kind != TokenKind::Eof; ++p) {
      const TokenKind kind = tokens_[p].kind;
      if (kind == TokenKind::Newline) continue;
      if (kind == TokenKind::LParen || kind == TokenKind::LBracket) {
        if (depth++ == 0) continue;
      } else if (kind == TokenKind::RParen || kind == TokenKind::RBracket) {
        if (--depth == 0) break;
      } else if (depth == 1 && kind == TokenKind::Comma) {
        ++commas;
      } else if (depth == 1 && kind == TokenKind::Equals) {
        keyword = true;
      }
      empty = false;
    }
    return !empty && commas == 1 && !keyword;
  }

  // Whether a name in an expression can be followed by this token.
  static bool continuesExpression(TokenKind kind) {
    switch (kind) {
      case TokenKind::Plus:
      case TokenKind::Minus:
      case TokenKind::Star:
      case TokenKind::Slash:
      case TokenKind::Percent:
      case TokenKind::Newline:
      case TokenKind::Semicolon:
      case TokenKind::RBrace:
      case TokenKind::Eof: return true;
      default: return false;
    }
  }

  // target := IDENT | IDENT '[' expr ']': a name, or an element of a handle or event array.
  NameDef target() {
    NameDef def = definedName("a name to define");
    if (peek().kind != TokenKind::LBracket) return def;
    open(TokenKind::LBracket, "'['", "the element index");
    def.index = expr(0);
    close(TokenKind::RBracket, "']' to close the element index");
    return def;
  }

  // `n = expr`: binds one name to a host integer.
  Operation integerBinding(std::vector<NameDef> results) {
    if (results.size() != 1)
      fail(results[1].loc, fmt::format("an integer expression defines one name, but {} are given", results.size()));
    if (results[0].isElement())
      fail(results[0].loc, fmt::format("an integer cannot be an array element; arrays hold handles and events "
                                       "('{}' = ...)",
                                       results[0].name));
    Operation op(OpKind::IntValue, results[0].loc);
    op.operands[operands::IntValue::value] = Arg::integer(expr(0));
    // The expression looked past the newline that ends the statement.
    while (pos_ > 0 && tokens_[pos_ - 1].kind == TokenKind::Newline) --pos_;
    op.results = std::move(results);
    return op;
  }

  Statement forLoop(int depth) {
    ForLoop loop;
    loop.loc = next().loc;
    if (depth + 1 > kMaxLoopNesting) fail(loop.loc, nestedTooDeeply());
    loop.index = definedName("a loop index name");
    expectKeyword("in", "expected 'in' after the loop index");
    expectKeyword("range", "expected 'range(...)' after 'in'");
    open(TokenKind::LParen, "'(' after 'range'", "the range");
    Expr first = expr(0);
    if (accept(TokenKind::Comma)) {
      loop.start = first;
      loop.end = expr(0);
    } else {
      loop.end = first;
    }
    close(TokenKind::RParen, "')' to close 'range'");
    loop.body = block(depth + 1, "the loop body");
    return loop;
  }

  // with NAME { ... } | with stream(e) { ... }
  Statement withBlock(int depth) {
    WithBlock with;
    with.loc = next().loc;
    if (depth + 1 > kMaxLoopNesting) fail(with.loc, nestedTooDeeply());
    const Token& t = peek();
    if (isKeyword(t, "stream") && peekAhead(1).kind == TokenKind::LParen) {
      SourceLoc loc = next().loc;
      open(TokenKind::LParen, "'('", "the stream number");
      Expr number = expr(0);
      close(TokenKind::RParen, "')' to close 'stream('");
      with.stream = Arg::stream(std::move(number), loc);
    } else if (t.kind == TokenKind::Ident && !isReservedName(t.text)) {
      next();
      with.stream = Arg::name(std::string(t.text), t.loc);
    } else {
      fail(found().loc, fmt::format("expected a stream after 'with' (a captured stream or stream(e)), found {}",
                                    describeToken(found())));
    }
    with.body = block(depth + 1, "the with block");
    return with;
  }

  // if COND { ... } [else { ... }]; `else` may start the line after the '}'.
  Statement ifBlock(int depth) {
    IfBlock stmt;
    stmt.loc = next().loc;
    if (depth + 1 > kMaxLoopNesting) fail(stmt.loc, nestedTooDeeply());
    stmt.cond = condition(0);
    stmt.thenBody = block(depth + 1, "the if branch");
    size_t after = pos_;
    while (tokens_[after].kind == TokenKind::Newline) ++after;
    if (isKeyword(tokens_[after], "else")) {
      pos_ = after + 1;
      if (isKeyword(peek(), "if"))
        fail(peek().loc, "'else if' is not in the language; write 'else { if ... { ... } }'");
      stmt.elseBody = block(depth + 1, "the else branch");
    }
    return stmt;
  }

  static std::string nestedTooDeeply() {
    return fmt::format("blocks nested too deeply: more than {} levels of 'for', 'with' and 'if'", kMaxLoopNesting);
  }

  // cond := conjunction {'or' conjunction}; conjunction := negation {'and'
  // negation}; negation := 'not' negation | '(' cond ')' | expr CMP expr.
  //
  // `nesting` counts the parentheses and `not`s around, as expr() counts
  // its parentheses: nesting plus a condition's levels may not pass
  // kMaxExprLevels. `and` and `or` chains are built in loops.
  Condition condition(int nesting) {
    Condition lhs = conjunction(nesting);
    while (isKeyword(peek(), "or")) {
      SourceLoc loc = next().loc;
      Condition rhs = conjunction(nesting);
      lhs = limited(Condition::logicalOr(std::move(lhs), std::move(rhs), loc), nesting);
    }
    return lhs;
  }

  Condition conjunction(int nesting) {
    Condition lhs = negation(nesting);
    while (isKeyword(peek(), "and")) {
      SourceLoc loc = next().loc;
      Condition rhs = negation(nesting);
      lhs = limited(Condition::logicalAnd(std::move(lhs), std::move(rhs), loc), nesting);
    }
    return lhs;
  }

  Condition negation(int nesting) {
    const Token& t = peek();
    if (isKeyword(t, "not")) {
      if (nesting + 1 > kMaxExprLevels) conditionTooDeep(t.loc);
      next();
      return limited(Condition::logicalNot(negation(nesting + 1), t.loc), nesting);
    }
    if (t.kind == TokenKind::LParen && conditionGroup_[pos_]) {
      if (nesting + 1 > kMaxExprLevels) conditionTooDeep(t.loc);
      open(TokenKind::LParen, "'('", "a parenthesized condition");
      Condition inner = condition(nesting + 1);
      close(TokenKind::RParen, "')' to close the parenthesis");
      return inner;
    }
    return comparison(nesting);
  }

  Condition comparison(int nesting) {
    const Token& start = peek();
    if (start.kind == TokenKind::LBrace || (start.kind == TokenKind::Ident && cannotStartACondition(start.text)))
      fail(found().loc,
           fmt::format("expected a condition (a comparison such as 'rank == 0'), found {}", describeToken(found())));
    Expr lhs = expr(nesting);
    const Token& op = peek();
    std::optional<CompareOp> compare = compareOpOf(op.kind);
    if (!compare) {
      if (op.kind == TokenKind::Equals) fail(op.loc, "'=' defines a name; a condition compares with '=='");
      fail(found().loc, fmt::format("expected a comparison (==, !=, <, <=, > or >=) after '{}' in the condition, "
                                    "found {}",
                                    lhs.toString(), describeToken(found())));
    }
    next();
    Expr rhs = expr(nesting);
    if (compareOpOf(peek().kind))
      fail(peek().loc, "comparisons cannot be chained; join them with 'and' ('a < b and b < c')");
    return limited(Condition::compare(*compare, std::move(lhs), std::move(rhs), op.loc), nesting);
  }

  // Reserved words a condition cannot start with (`not` can).
  static bool cannotStartACondition(std::string_view word) { return word == "and" || word == "or" || word == "else"; }

  static std::optional<CompareOp> compareOpOf(TokenKind kind) {
    switch (kind) {
      case TokenKind::EqualEqual: return CompareOp::Equal;
      case TokenKind::NotEqual: return CompareOp::NotEqual;
      case TokenKind::Less: return CompareOp::Less;
      case TokenKind::LessEqual: return CompareOp::LessEqual;
      case TokenKind::Greater: return CompareOp::Greater;
      case TokenKind::GreaterEqual: return CompareOp::GreaterEqual;
      default: return std::nullopt;
    }
  }

  [[noreturn]] static void conditionTooDeep(SourceLoc loc) {
    fail(loc, fmt::format("condition nested too deeply: more than {} levels of comparisons, 'and', 'or', 'not', "
                          "operators, parentheses and calls",
                          kMaxExprLevels));
  }

  // `c` if it is within the limits at this nesting, else an error at its operator.
  static Condition limited(Condition c, int nesting) {
    if (nesting + c.levels() > kMaxExprLevels) conditionTooDeep(c.loc());
    if (c.nodeCount() > kMaxExprNodes)
      fail(c.loc(), fmt::format("condition too large: more than {} terms", kMaxExprNodes));
    return c;
  }

  // Which '(' open a parenthesized condition rather than an expression: those
  // holding a comparison, 'and', 'or' or 'not' (an expression holds none).
  // One pass over the tokens, so that telling them apart costs no
  // backtracking: a group's finding passes to the group around it as it closes.
  void findConditionGroups() {
    conditionGroup_.assign(tokens_.size(), false);
    std::vector<size_t> open;
    for (size_t p = 0; p < tokens_.size(); ++p) {
      const Token& t = tokens_[p];
      if (t.kind == TokenKind::LParen) {
        open.push_back(p);
      } else if (t.kind == TokenKind::RParen && !open.empty()) {
        bool holds = conditionGroup_[open.back()];
        open.pop_back();
        if (holds && !open.empty()) conditionGroup_[open.back()] = true;
      } else if (!open.empty() &&
                 (compareOpOf(t.kind) || isKeyword(t, "and") || isKeyword(t, "or") || isKeyword(t, "not"))) {
        conditionGroup_[open.back()] = true;
      }
    }
  }

  // '{' {stmt} '}' of a loop, with block or if branch, whose statements sit at `depth`.
  std::vector<Statement> block(int depth, std::string_view what) {
    open(TokenKind::LBrace, fmt::format("'{{' to open {}", what), what);
    std::vector<Statement> body;
    while (true) {
      skipTerminators();
      if (peek().kind == TokenKind::RBrace || peek().kind == TokenKind::Eof) break;
      if (isKeyword(peek(), "input") || isKeyword(peek(), "output"))
        fail(peek().loc, "declarations are only allowed at the top of the program");
      body.push_back(statement(depth));
      expectStatementEnd();
    }
    close(TokenKind::RBrace, fmt::format("'}}' to close {}", what));
    return body;
  }

  struct ParsedArg {
    std::string keyword;  // empty: positional
    SourceLoc keywordLoc;
    Arg value;
  };

  ParsedArg arg() {
    ParsedArg a;
    if (peek().kind == TokenKind::Ident && peekAhead(1).kind == TokenKind::Equals) {
      const Token& kw = next();
      a.keyword = std::string(kw.text);
      a.keywordLoc = kw.loc;
      next();  // '='
    }
    const Token& t = peek();
    // DTYPE[ is a tensor type; any other NAME[ an array element, which a
    // type operand reports as an unknown dtype.
    if (t.kind == TokenKind::Ident && peekAhead(1).kind == TokenKind::LBracket &&
        (parseDType(t.text) || paramOfKind(t.text, ParamKind::DType))) {
      a.value = Arg::ofType(tensorType());
    } else if (t.kind == TokenKind::Ident && peekAhead(1).kind == TokenKind::LBracket) {
      SourceLoc loc = next().loc;
      open(TokenKind::LBracket, "'['", "the element index");
      Expr index = expr(0);
      close(TokenKind::RBracket, "']' to close the element index");
      a.value = Arg::element(std::string(t.text), std::move(index), loc);
    } else if (isKeyword(t, "stream") && peekAhead(1).kind == TokenKind::LParen) {
      SourceLoc loc = next().loc;
      open(TokenKind::LParen, "'('", "the stream number");
      Expr number = expr(0);
      close(TokenKind::RParen, "')' to close 'stream('");
      a.value = Arg::stream(std::move(number), loc);
    } else if (isKeyword(t, "true") || isKeyword(t, "false")) {
      a.value = Arg::boolean(t.text == "true", t.loc);
      next();
    } else if (t.kind == TokenKind::Float) {
      a.value = Arg::number(t.floatValue, t.loc);
      next();
    } else if (t.kind == TokenKind::Minus && peekAhead(1).kind == TokenKind::Float) {
      SourceLoc loc = next().loc;
      a.value = Arg::number(-next().floatValue, loc);
    } else if (t.kind == TokenKind::LParen && parenthesesHoldAList()) {
      // (e0, e1, ...), or (e0,) for one item: a list, not a parenthesized expression.
      SourceLoc loc = t.loc;
      open(TokenKind::LParen, "'('", "the list");
      std::vector<Expr> items;
      do {
        if (peek().kind == TokenKind::RParen) break;  // a trailing comma
        items.push_back(expr(0));
      } while (accept(TokenKind::Comma));
      close(TokenKind::RParen, "',' or ')' in the list");
      a.value = Arg::list(std::move(items), loc);
    } else {
      a.value = Arg::integer(expr(0));
    }
    return a;
  }

  // expr := term {('+'|'-') term}; term := factor {('*'|'/'|'%') factor}
  //
  // `nesting` counts the parentheses and calls around the expression. Every
  // node is checked as it is built: its nesting plus its levels (operators
  // and calls on its deepest path) may not pass kMaxExprLevels. Parentheses
  // and calls recurse here; operator chains are built in loops, so a chain of
  // any length costs no stack to parse but is refused at its 257th level.
  Expr expr(int nesting) {
    Expr lhs = term(nesting);
    while (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      const Token& op = next();
      Expr rhs = term(nesting);
      lhs = limited(Expr::binary(op.kind == TokenKind::Plus ? BinaryOp::Add : BinaryOp::Sub, std::move(lhs),
                                 std::move(rhs), op.loc),
                    nesting);
    }
    return lhs;
  }

  Expr term(int nesting) {
    Expr lhs = factor(nesting);
    while (peek().kind == TokenKind::Star || peek().kind == TokenKind::Slash || peek().kind == TokenKind::Percent) {
      const Token& op = next();
      BinaryOp bop = op.kind == TokenKind::Star    ? BinaryOp::Mul
                     : op.kind == TokenKind::Slash ? BinaryOp::Div
                                                   : BinaryOp::Mod;
      Expr rhs = factor(nesting);
      lhs = limited(Expr::binary(bop, std::move(lhs), std::move(rhs), op.loc), nesting);
    }
    return lhs;
  }

  [[noreturn]] static void tooDeep(SourceLoc loc) {
    fail(loc, fmt::format("expression nested too deeply: more than {} levels of operators, parentheses and calls",
                          kMaxExprLevels));
  }

  // `e` if it is within the limits at this nesting, else an error at its operator or call.
  static Expr limited(Expr e, int nesting) {
    if (nesting + e.levels() > kMaxExprLevels) tooDeep(e.loc());
    if (e.nodeCount() > kMaxExprNodes)
      fail(e.loc(), fmt::format("expression too large: more than {} terms", kMaxExprNodes));
    return e;
  }

  Expr factor(int nesting) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Int: {
        next();
        if (t.intValue > static_cast<uint64_t>(INT64_MAX))
          fail(t.loc, fmt::format("integer literal {} does not fit in 64 bits", t.text));
        return Expr::literal(static_cast<int64_t>(t.intValue), t.loc);
      }
      case TokenKind::Minus: {
        // Only negative literals: the language has no unary minus on expressions.
        next();
        const Token& lit = peek();
        if (lit.kind != TokenKind::Int) fail(t.loc, "'-' must be followed by an integer literal here");
        next();
        if (lit.intValue > (uint64_t{1} << 63))
          fail(lit.loc, fmt::format("integer literal -{} does not fit in 64 bits", lit.text));
        int64_t value = lit.intValue == (uint64_t{1} << 63) ? INT64_MIN : -static_cast<int64_t>(lit.intValue);
        return Expr::literal(value, t.loc);
      }
      case TokenKind::LParen: {
        if (nesting + 1 > kMaxExprLevels) tooDeep(t.loc);
        open(TokenKind::LParen, "'('", "a parenthesized expression");
        Expr inner = expr(nesting + 1);
        close(TokenKind::RParen, "')' to close the parenthesis");
        return inner;
      }
      case TokenKind::Ident: {
        next();
        if (peek().kind == TokenKind::LParen) {
          if (isMeshBuiltin(t.text)) return meshBuiltin(t);
          auto fn = parseIntFunction(t.text);
          if (!fn) fail(t.loc, fmt::format("'{}' is not an integer function; expected ceildiv, min or max", t.text));
          if (nesting + 1 > kMaxExprLevels) tooDeep(t.loc);
          open(TokenKind::LParen, "'('", fmt::format("the call of '{}'", t.text));
          std::vector<Expr> args;
          if (peek().kind != TokenKind::RParen) {
            do {
              if (peek().kind == TokenKind::Ident && peekAhead(1).kind == TokenKind::Equals)
                fail(peek().loc, fmt::format("'{}' takes no keyword operands", t.text));
              args.push_back(expr(nesting + 1));
            } while (accept(TokenKind::Comma));
          }
          close(TokenKind::RParen, "',' or ')' in the call");
          if (args.size() != 2) fail(t.loc, fmt::format("'{}' takes 2 arguments, got {}", t.text, args.size()));
          return limited(Expr::call(*fn, std::move(args), t.loc), nesting);
        }
        return Expr::name(std::string(t.text), t.loc);
      }
      default: fail(t.loc, fmt::format("expected an expression, found {}", describeToken(t)));
    }
  }

  // Matches the parsed operand list against the operation's signature.
  Operation buildOperation(const Token& callee, std::vector<NameDef> results, std::vector<ParsedArg> args) {
    auto kind = opKindByName(callee.text);
    // `max(a, b)` on its own: the integer function (max(x) is the reduction).
    const bool integerCall = args.size() == 2 && args[0].keyword.empty() && args[1].keyword.empty();
    if ((!kind || integerCall) && parseIntFunction(callee.text))
      fail(callee.loc,
           fmt::format("'{0}' computes one integer; bind it to exactly one name (n = {0}(a, b))", callee.text));
    if (!kind)
      fail(callee.loc, fmt::format("unknown operation '{}'{}", callee.text, didYouMean(callee.text, operationNames())));
    Operation op(*kind, callee.loc);
    const OpSignature& sig = op.signature();
    size_t positional = 0;
    bool sawKeyword = false;
    for (ParsedArg& a : args) {
      size_t slot;
      if (a.keyword.empty()) {
        if (sawKeyword) fail(a.value.loc, "positional operand after a keyword operand");
        if (positional >= sig.operands.size())
          fail(a.value.loc, fmt::format("'{}' takes at most {} operand{}", sig.name, sig.operands.size(),
                                        sig.operands.size() == 1 ? "" : "s"));
        slot = positional++;
      } else {
        sawKeyword = true;
        auto index = operandIndex(sig, a.keyword);
        if (!index)
          fail(a.keywordLoc, fmt::format("'{}' has no operand named '{}'{}", sig.name, a.keyword,
                                         didYouMean(a.keyword, operandsNotGiven(op))));
        slot = *index;
        if (op.operands[slot]) fail(a.keywordLoc, fmt::format("operand '{}' is given twice", a.keyword));
      }
      checkOperandForm(sig.name, sig.operands[slot], a.value);
      op.operands[slot] = resolved(sig.operands[slot], std::move(a.value));
    }
    for (size_t i = 0; i < sig.operands.size(); ++i)
      if (sig.operands[i].required && !op.operands[i])
        fail(callee.loc, fmt::format("'{}' is missing its operand '{}'", sig.name, sig.operands[i].name));
    checkResults(sig, op, results, callee);
    op.results = std::move(results);
    return op;
  }

  // "; did you mean 'mul'?" when a candidate is close to `given`, else nothing.
  static std::string didYouMean(std::string_view given, const std::vector<std::string>& candidates) {
    std::optional<std::string> closest = closestName(given, candidates);
    return closest ? fmt::format("; did you mean '{}'?", *closest) : std::string();
  }

  static std::vector<std::string> operationNames() {
    std::vector<std::string> names;
    for (const OpSignature& sig : allSignatures())
      if (opKindByName(sig.name)) names.emplace_back(sig.name);  // not the integer binding's row
    return names;
  }

  // What a misspelt keyword may have meant: an operand not given yet
  // (`scale(x, bx=2.0)` lacks 'by', not 'x').
  static std::vector<std::string> operandsNotGiven(const Operation& op) {
    std::vector<std::string> names;
    const OpSignature& sig = op.signature();
    for (size_t i = 0; i < sig.operands.size(); ++i)
      if (!op.operands[i]) names.emplace_back(sig.operands[i].name);
    return names;
  }

  // An integer literal where a FLOAT belongs (`by=2`) is that number: the
  // printer writes it back as `2.0`, which parses to the same value. A
  // float parameter's name there, and a dtype operand, hold their value
  // (a parameter's default until bindValueParams binds it).
  Arg resolved(const OperandSpec& spec, Arg value) const {
    if (spec.kind == OperandKind::Float && value.form == Arg::Form::Expr) {
      if (const Param* param = value.isName() ? paramOfKind(value.nameValue(), ParamKind::Float) : nullptr)
        return Arg::floatParam(param->name, param->floatValue, value.loc);
      return Arg::number(static_cast<double>(*value.expr.literalValue()), value.loc);
    }
    if (spec.kind == OperandKind::DType && value.isName()) {
      if (const Param* param = paramOfKind(value.nameValue(), ParamKind::DType))
        return Arg::dtype(param->dtypeValue, value.loc, param->name);
      return Arg::dtype(*parseDType(value.nameValue()), value.loc);
    }
    return value;
  }

  void checkOperandForm(std::string_view opName, const OperandSpec& spec, const Arg& value) const {
    auto wrong = [&](std::string_view got, std::string_view hint = {}) {
      fail(value.loc, fmt::format("operand '{}' of '{}' must be {}, not {}{}", spec.name, opName,
                                  operandKindName(spec.kind), got, hint));
    };
    std::string_view got = value.form == Arg::Form::Type     ? "a tensor type"
                           : value.form == Arg::Form::Stream ? "stream(...)"
                           : value.form == Arg::Form::Bool   ? "a boolean"
                           : value.form == Arg::Form::Float  ? "a number with a fraction or exponent"
                           : value.form == Arg::Form::List   ? "a list"
                           : value.isElement()               ? "an array element"
                           : value.isName()                  ? "a name"
                                                             : "an integer expression";
    switch (spec.kind) {
      case OperandKind::Type:
        if (value.isElement())
          fail(value.loc, fmt::format("unknown dtype '{}'; expected f32, f16, bf16, f64 or i32", value.nameValue()));
        if (value.form != Arg::Form::Type) wrong(got);
        break;
      case OperandKind::Bool:
        if (value.form != Arg::Form::Bool) wrong(got);
        break;
      case OperandKind::IntList:
        if (value.form != Arg::Form::List) wrong(got);
        break;
      case OperandKind::MeshAxes:
        if (!value.isName() &&
            !(value.form == Arg::Form::List &&
              std::all_of(value.items.begin(), value.items.end(), [](const Expr& item) { return item.isName(); })))
          wrong(value.form == Arg::Form::List ? "a list with something other than axis names" : got);
        break;
      case OperandKind::Int:
        if (value.form != Arg::Form::Expr) wrong(got);
        break;
      case OperandKind::Stream:
        if (value.form != Arg::Form::Stream && !value.isName()) wrong(got);
        break;
      case OperandKind::Tensor:  // an element here is refused by the verifier, which knows the array's kind
      case OperandKind::Event:
      case OperandKind::Handle:
        if (!value.isName() && !value.isElement()) wrong(got);
        break;
      case OperandKind::ReduceOp:
        if (!value.isName() || !parseReduceOp(value.nameValue()))
          wrong(value.isName() ? "'" + value.nameValue() + "'" : std::string(got));
        break;
      case OperandKind::Float:
        if (value.isName() && !paramOfKind(value.nameValue(), ParamKind::Float))
          wrong(fmt::format("'{}'", value.nameValue()),
                paramOfKind(value.nameValue(), ParamKind::DType) ? " (a dtype parameter)" : "");
        if (value.form != Arg::Form::Float && !(value.form == Arg::Form::Expr && value.expr.literalValue()) &&
            !value.isName())
          wrong(got);
        break;
      case OperandKind::DType:
        if (!value.isName())
          wrong(got);
        else if (!parseDType(value.nameValue()) && !paramOfKind(value.nameValue(), ParamKind::DType))
          wrong("'" + value.nameValue() + "'", didYouMean(value.nameValue(), {"f32", "f16", "bf16", "f64"}));
        break;
    }
  }

  static void checkResults(const OpSignature& sig, const Operation& op, const std::vector<NameDef>& results,
                           const Token& callee) {
    if (results.size() > 1 && sig.resultMode != ResultMode::OutsOrResults)
      fail(results[1].loc, fmt::format("'{}' defines one value, but {} names are given", sig.name, results.size()));
    switch (sig.resultMode) {
      case ResultMode::OutsOrResults: {
        // Every written operand given, or a name for each of them.
        const size_t count = resultOperandCount(sig);
        size_t given = 0;
        std::vector<std::string> names;
        for (size_t k = 0; k < count; ++k) {
          given += op.operands[*resultOperand(sig, k)].has_value() ? 1 : 0;
          names.emplace_back(sig.operands[*resultOperand(sig, k)].name);
        }
        if ((given == count && results.empty()) || (given == 0 && results.size() == count)) break;
        fail(results.empty() ? callee.loc : results[0].loc,
             fmt::format("'{}' defines {} values: name them all ({} = {}(...)) or give every one of {}=", sig.name,
                         count, fmt::join(names, ", "), sig.name, fmt::join(names, "=, ")));
      }
      case ResultMode::None:
        if (!results.empty()) fail(results[0].loc, fmt::format("'{}' defines no value", sig.name));
        break;
      case ResultMode::Required:
        if (results.empty()) fail(callee.loc, fmt::format("the result of '{}' must be bound to a name", sig.name));
        break;
      case ResultMode::Optional: break;
      case ResultMode::OutOrResult: {
        auto outSlot = outOperand(sig);
        bool hasOut = outSlot && op.operands[*outSlot].has_value();
        if (hasOut && !results.empty())
          fail(results[0].loc,
               fmt::format("'{}' writes into out=; it cannot also define '{}'", sig.name, results[0].name));
        if (!hasOut && results.empty())
          fail(callee.loc, fmt::format("'{}' needs a result name or an out= operand", sig.name));
        break;
      }
    }
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  size_t lineStart_ = 0;  // where the current statement began: newlines before it ended earlier ones
  std::vector<OpenDelimiter> openDelimiters_;
  bool failedToClose_ = false;  // the error is a missing closing delimiter
  std::unordered_map<std::string, Param> params_;
  std::vector<std::string> meshAxes_;  // once the mesh is parsed
  std::unordered_set<std::string> declNames_;
  std::vector<bool> conditionGroup_;  // by token: a '(' that opens a parenthesized condition
};

template <typename T, typename F>
Result<T> runParser(std::string_view source, F&& body) {
  auto tokens = tokenize(source);
  if (!tokens) return tokens.error();
  Parser parser(std::move(*tokens));
  try {
    return body(parser);
  } catch (const DiagnosticError& e) {
    Diagnostic diag = e.diag;
    parser.annotate(diag);
    return diag;
  }
}

}  // namespace

Result<Program> parseProgram(std::string_view source) {
  return runParser<Program>(source, [](Parser& p) { return p.program(); });
}

Result<Expr> parseExpr(std::string_view source) {
  return runParser<Expr>(source, [](Parser& p) { return p.standaloneExpr(); });
}

}  // namespace hostir
