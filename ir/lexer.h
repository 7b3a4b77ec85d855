// Tokens of the .hir language. Newlines are tokens because they end
// statements, except inside parentheses and brackets where they are spacing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"

namespace hostir {

enum class TokenKind {
  Ident,
  Int,
  Float,  // digits with a '.' or an exponent: 0.125, 1e-6, 2.5E+3
  Newline,
  Eof,
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Semicolon,
  Equals,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  EqualEqual,    // ==
  NotEqual,      // !=
  Less,          // <
  LessEqual,     // <=
  Greater,       // >
  GreaterEqual,  // >=
};

struct Token {
  TokenKind kind;
  std::string_view text;  // points into the source
  SourceLoc loc;
  uint64_t intValue = 0;  // Int
  double floatValue = 0;  // Float: finite
};

// Describes a token for messages: "'foo'", "end of line", "end of file".
std::string describeToken(const Token& token);

// Splits `source` into tokens; the last is Eof. Fails on a byte that starts
// no token, an integer literal that does not fit in 63 bits, or a float
// literal beyond the range of a double.
Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace hostir
