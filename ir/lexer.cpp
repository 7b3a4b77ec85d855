#include "ir/lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace hostir {

std::string describeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::Newline: return "end of line";
    case TokenKind::Eof: return "end of file";
    default: return fmt::format("'{}'", token.text);
  }
}

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The length of the fraction and exponent after a number's integer digits
// at `i` ('.' digits, then [eE][+-]digits), 0 when there is neither. As in
// Python and C, `7.` and `.5` are numbers: a '.' needs digits on one side.
size_t floatTail(std::string_view source, size_t i, bool digitsBefore) {
  size_t j = i;
  if (j < source.size() && source[j] == '.' && (digitsBefore || (j + 1 < source.size() && isDigit(source[j + 1])))) {
    ++j;
    while (j < source.size() && isDigit(source[j])) ++j;
  }
  if (j < source.size() && (source[j] == 'e' || source[j] == 'E')) {
    size_t k = j + 1;
    if (k < source.size() && (source[k] == '+' || source[k] == '-')) ++k;
    if (k < source.size() && isDigit(source[k])) {
      while (k < source.size() && isDigit(source[k])) ++k;
      j = k;
    }
  }
  return j - i;
}

// Two-character comparison operators.
TokenKind comparison(char c, char next) {
  if (next != '=') {
    if (c == '<') return TokenKind::Less;
    if (c == '>') return TokenKind::Greater;
    return TokenKind::Eof;
  }
  switch (c) {
    case '=': return TokenKind::EqualEqual;
    case '!': return TokenKind::NotEqual;
    case '<': return TokenKind::LessEqual;
    case '>': return TokenKind::GreaterEqual;
    default: return TokenKind::Eof;
  }
}

TokenKind punctuation(char c) {
  switch (c) {
    case '(': return TokenKind::LParen;
    case ')': return TokenKind::RParen;
    case '{': return TokenKind::LBrace;
    case '}': return TokenKind::RBrace;
    case '[': return TokenKind::LBracket;
    case ']': return TokenKind::RBracket;
    case ',': return TokenKind::Comma;
    case ':': return TokenKind::Colon;
    case ';': return TokenKind::Semicolon;
    case '=': return TokenKind::Equals;
    case '+': return TokenKind::Plus;
    case '-': return TokenKind::Minus;
    case '*': return TokenKind::Star;
    case '/': return TokenKind::Slash;
    case '%': return TokenKind::Percent;
    default: return TokenKind::Eof;  // not punctuation
  }
}

// The Int or Float token that starts at `start` (a digit, or a '.' before
// one), at `loc`.
Result<Token> lexNumber(std::string_view source, size_t start, SourceLoc loc) {
  size_t i = start;
  uint64_t value = 0;
  bool tooLarge = false;
  for (; i < source.size() && isDigit(source[i]); ++i) {
    uint64_t digit = static_cast<uint64_t>(source[i] - '0');
    // Up to 2^63 so that a negated literal can reach INT64_MIN.
    if (value > (uint64_t{1} << 63) / 10 || value * 10 + digit > (uint64_t{1} << 63))
      tooLarge = true;
    else
      value = value * 10 + digit;
  }
  const size_t tail = floatTail(source, i, i > start);
  i += tail;
  const std::string_view text = source.substr(start, i - start);
  const SourceLoc after{loc.line, loc.col + static_cast<uint32_t>(text.size())};
  if (i < source.size() && isIdentStart(source[i]))
    return Diagnostic{after, fmt::format("unexpected '{}' after a number", source[i])};
  const std::string_view shown = text.substr(0, std::min<size_t>(text.size(), 40));
  if (tail == 0) {
    if (tooLarge) return Diagnostic{loc, fmt::format("integer literal {} does not fit in 64 bits", shown)};
    return Token{TokenKind::Int, text, loc, value};
  }
  Token token{TokenKind::Float, text, loc};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), token.floatValue);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(token.floatValue))
    return Diagnostic{loc, fmt::format("number {} is out of the range of a double", shown)};
  return token;
}

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) {
  std::vector<Token> tokens;
  uint32_t line = 1, col = 1;
  int groupDepth = 0;  // open ( and [: newlines inside are spacing
  size_t i = 0;
  auto advance = [&](size_t n) {
    i += n;
    col += static_cast<uint32_t>(n);
  };
  while (i < source.size()) {
    char c = source[i];
    SourceLoc loc{line, col};
    if (c == '\n') {
      if (groupDepth == 0) tokens.push_back({TokenKind::Newline, source.substr(i, 1), loc});
      ++i;
      ++line;
      col = 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < source.size() && source[i] != '\n') advance(1);
      continue;
    }
    if (isIdentStart(c)) {
      size_t start = i;
      while (i < source.size() && isIdentChar(source[i])) advance(1);
      tokens.push_back({TokenKind::Ident, source.substr(start, i - start), loc});
      continue;
    }
    if (isDigit(c) || (c == '.' && i + 1 < source.size() && isDigit(source[i + 1]))) {
      Result<Token> number = lexNumber(source, i, loc);
      if (!number) return number.error();
      advance(number->text.size());
      tokens.push_back(*number);
      continue;
    }
    if (TokenKind cmp = comparison(c, i + 1 < source.size() ? source[i + 1] : '\0'); cmp != TokenKind::Eof) {
      size_t length = (cmp == TokenKind::Less || cmp == TokenKind::Greater) ? 1 : 2;
      tokens.push_back({cmp, source.substr(i, length), loc});
      advance(length);
      continue;
    }
    TokenKind kind = punctuation(c);
    if (kind == TokenKind::Eof) {
      unsigned char u = static_cast<unsigned char>(c);
      std::string shown = (u >= 0x20 && u < 0x7f) ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", u);
      return Diagnostic{loc, fmt::format("unexpected character {}", shown)};
    }
    if (kind == TokenKind::LParen || kind == TokenKind::LBracket) ++groupDepth;
    if ((kind == TokenKind::RParen || kind == TokenKind::RBracket) && groupDepth > 0) --groupDepth;
    tokens.push_back({kind, source.substr(i, 1), loc});
    advance(1);
  }
  tokens.push_back({TokenKind::Eof, source.substr(source.size()), SourceLoc{line, col}});
  return tokens;
}

}  // namespace hostir
