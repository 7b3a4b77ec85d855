#include "api/findings.h"

#include <charconv>
#include <optional>
#include <tuple>
#include <utility>

namespace hostir::api {
namespace {

// One rendered line "PATH[:LINE:COL]: SEVERITY: MESSAGE", taken apart.
struct Header {
  int line = 0;
  int column = 0;
  std::string severity;
  std::string message;
};

std::optional<int> number(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "LINE:COL" at the start of `rest` (which follows "PATH:"), consumed.
std::optional<std::pair<int, int>> position(std::string_view& rest) {
  size_t colon = rest.find(':');
  size_t second = colon == std::string_view::npos ? colon : rest.find(':', colon + 1);
  if (second == std::string_view::npos) return std::nullopt;
  auto line = number(rest.substr(0, colon));
  auto column = number(rest.substr(colon + 1, second - colon - 1));
  if (!line || !column) return std::nullopt;
  rest.remove_prefix(second + 1);
  return std::pair{*line, *column};
}

std::optional<Header> header(std::string_view text, std::string_view path) {
  // The path itself may hold colons: it is known, so it is matched whole.
  if (text.size() <= path.size() || text.substr(0, path.size()) != path || text[path.size()] != ':')
    return std::nullopt;
  std::string_view rest = text.substr(path.size() + 1);
  Header out;
  if (auto at = position(rest)) std::tie(out.line, out.column) = *at;
  for (std::string_view severity : {"error", "remark", "note"}) {
    std::string prefix = " " + std::string(severity) + ": ";
    if (rest.substr(0, prefix.size()) != prefix) continue;
    out.severity = severity;
    out.message = rest.substr(prefix.size());
    return out;
  }
  return std::nullopt;
}

bool isCaret(std::string_view line) {
  size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line.substr(first) == "^";
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace

Finding findingOf(const Diagnostic& diag, std::string_view path) {
  auto where = [&](SourceLoc loc) { return loc.valid() ? std::string(path) : std::string(); };
  Finding finding{where(diag.loc),
                  static_cast<int>(diag.loc.line),
                  static_cast<int>(diag.loc.col),
                  diag.severity == Severity::Remark ? "remark" : "error",
                  diag.message,
                  {}};
  for (const Note& note : diag.notes)
    finding.notes.push_back(
        FindingNote{where(note.loc), static_cast<int>(note.loc.line), static_cast<int>(note.loc.col), note.message});
  return finding;
}

std::vector<Finding> findingsOfReport(std::string_view report, std::string_view path) {
  std::vector<Finding> findings;
  std::vector<std::string_view> all = lines(report);
  for (size_t i = 0; i < all.size(); ++i) {
    std::optional<Header> h = header(all[i], path);
    if (!h) continue;
    // A positioned line is followed by its source line and a caret.
    if (h->line != 0 && i + 2 < all.size() && isCaret(all[i + 2])) i += 2;
    std::string file = h->line != 0 ? std::string(path) : std::string();
    if (h->severity == "note" && !findings.empty()) {
      findings.back().notes.push_back(FindingNote{std::move(file), h->line, h->column, std::move(h->message)});
      continue;
    }
    findings.push_back(Finding{std::move(file), h->line, h->column, std::move(h->severity), std::move(h->message), {}});
  }
  return findings;
}

Error checkError(std::string summary, std::string report, std::string_view closing, std::string_view path) {
  std::vector<Finding> findings = findingsOfReport(report, path);
  // The closing's notes (the team the program's proved_for clause names)
  // concern every finding.
  for (std::string_view line : lines(closing)) {
    std::optional<Header> h = header(line, path);
    if (!h || h->severity != "note") continue;
    for (Finding& finding : findings)
      finding.notes.push_back(
          FindingNote{h->line != 0 ? std::string(path) : std::string(), h->line, h->column, h->message});
  }
  return Error(ErrorKind::Check, std::move(summary), report.append(closing), std::move(findings));
}

}  // namespace hostir::api
