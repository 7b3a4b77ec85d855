#include "ir/diagnostic.h"

#include <fmt/format.h>

namespace hostir {
namespace {

// The text of line `line` (1-based), or nullopt when out of range.
std::optional<std::string_view> sourceLine(std::string_view source, uint32_t line) {
  size_t begin = 0;
  for (uint32_t l = 1; l < line; ++l) {
    size_t nl = source.find('\n', begin);
    if (nl == std::string_view::npos) return std::nullopt;
    begin = nl + 1;
  }
  if (begin > source.size()) return std::nullopt;
  size_t end = source.find('\n', begin);
  if (end == std::string_view::npos) end = source.size();
  return source.substr(begin, end - begin);
}

// Printable form of a source line: tabs kept so the caret lines up, other
// control and non-ASCII bytes shown as '?' so a binary file cannot garble the terminal.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\t' || (c >= 0x20 && c < 0x7f))
      out.push_back(static_cast<char>(c));
    else if (c != '\r')
      out.push_back('?');
  }
  return out;
}

std::string_view severityName(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    case Severity::Remark: return "remark";
  }
  return "error";
}

}  // namespace

std::string renderDiagnostic(const Diagnostic& diag, std::string_view file, std::string_view source) {
  std::string out = renderMessage(diag.severity, diag.loc, diag.message, file, source);
  for (const Note& note : diag.notes) out += renderMessage(Severity::Note, note.loc, note.message, file, source);
  return out;
}

std::string renderMessage(Severity severity, SourceLoc loc, std::string_view message, std::string_view file,
                          std::string_view source) {
  std::string where = loc.valid() ? fmt::format("{}:{}:{}", file, loc.line, loc.col) : std::string(file);
  std::string out = fmt::format("{}: {}: {}\n", where, severityName(severity), message);
  if (!loc.valid() || source.empty()) return out;
  auto line = sourceLine(source, loc.line);
  if (!line) return out;
  constexpr size_t kMaxShown = 200;  // keep huge one-line inputs readable
  std::string_view shown = *line;
  size_t col = loc.col - 1;
  if (shown.size() > kMaxShown) {
    size_t start = col > kMaxShown / 2 ? col - kMaxShown / 2 : 0;
    shown = shown.substr(start, kMaxShown);
    col -= start;
  }
  std::string text = printable(shown);
  std::string caret;
  for (size_t i = 0; i < col && i < text.size(); ++i) caret.push_back(text[i] == '\t' ? '\t' : ' ');
  out += text + "\n" + caret + "^\n";
  return out;
}

}  // namespace hostir
