#include "hir_expectations.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace hostir::hirtest {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    text = trim(text);
    if (text.empty()) return out;
    size_t end = text.find_first_of(" \t");
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return out;
    text.remove_prefix(end);
  }
}

std::string readSet(const std::vector<std::string_view>& w, size_t& k, std::map<std::string, int64_t>& params) {
  size_t eq = k + 1 < w.size() ? w[k + 1].find('=') : std::string_view::npos;
  std::optional<int64_t> value =
      eq == std::string_view::npos ? std::nullopt : parseInt<int64_t>(w[k + 1].substr(eq + 1));
  std::string problem;
  if (!value || eq == 0)
    problem = "expected 'set NAME=INTEGER'";
  else
    params[std::string(w[k + 1].substr(0, eq))] = *value;
  ++k;
  return problem;
}

std::string lineOf(const std::string& source, uint32_t line) {
  size_t begin = 0;
  for (uint32_t l = 1; l < line; ++l) {
    size_t nl = source.find('\n', begin);
    if (nl == std::string::npos) return "";
    begin = nl + 1;
  }
  size_t end = source.find('\n', begin);
  return source.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::string CaseBase::name() const {
  std::string stem = std::filesystem::path(file).replace_extension().generic_string();
  for (char& ch : stem)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  std::string number = std::to_string(index);
  return stem + "_" + std::string(number.size() < 2 ? 2 - number.size() : 0, '0') + number;
}

std::string CaseBase::head() const {
  return file + " case " + std::to_string(index) + " (lines " + std::to_string(firstLine) + "-" +
         std::to_string(lastLine) + ")";
}

namespace {

// `[[@LINE]]`, `[[@LINE+N]]`, `[[@LINE-N]]` in an expected message, and
// `[[FILE]]` where `file` is given.
std::string substitute(std::string_view message, uint32_t line, const std::string* file, std::string& problem) {
  const std::string open = file ? "[[" : "[[@LINE";
  std::string out;
  while (true) {
    size_t at = message.find(open);
    if (at == std::string_view::npos) return out + std::string(message);
    size_t close = message.find("]]", at);
    if (close == std::string_view::npos) {
      problem = "unterminated " + open;
      return out;
    }
    std::string_view inner = message.substr(at + 2, close - at - 2);
    out += std::string(message.substr(0, at));
    message.remove_prefix(close + 2);
    if (file && inner == "FILE") {
      out += *file;
      continue;
    }
    if (!inner.starts_with("@LINE")) {
      problem = "expected [[@LINE]], [[@LINE+N]], [[@LINE-N]] or [[FILE]]";
      return out;
    }
    std::string_view offset = inner.substr(5);
    int64_t value = line;
    if (!offset.empty()) {
      auto n = parseInt<int64_t>(offset.substr(offset[0] == '+' ? 1 : 0));
      if (!n || (offset[0] != '+' && offset[0] != '-')) {
        problem = "expected [[@LINE]], [[@LINE+N]] or [[@LINE-N]]";
        return out;
      }
      value += *n;
    }
    out += std::to_string(value);
  }
}

// `@+N`, `@-N` or `@unknown` at the start of `text` (stepped over): the line
// the expectation on line `line` is for, 0 for unknown. Nothing, with
// `problem`, where it is malformed.
std::optional<int64_t> readWhere(std::string_view& text, uint32_t line, std::string& problem) {
  int64_t target = line;
  if (!text.starts_with("@")) return target;
  text.remove_prefix(1);
  if (text.starts_with("unknown")) {
    text.remove_prefix(7);
    return 0;
  }
  size_t end = 1;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  auto n = text.empty() ? std::nullopt : parseInt<int64_t>(text.substr(1, end - 1));
  if (!n || (text[0] != '+' && text[0] != '-')) {
    problem = "expected @+N, @-N or @unknown";
    return std::nullopt;
  }
  target += text[0] == '+' ? *n : -*n;
  text.remove_prefix(end);
  return target;
}

// ` col N` at the start of `text` (trimmed; stepped over) into `e.col`;
// false, with `problem`, where it is malformed.
bool readColumn(std::string_view& text, Expected& e, std::string& problem) {
  if (!text.starts_with("col ")) return true;
  text = trim(text.substr(4));
  size_t end = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  auto col = parseInt<uint32_t>(text.substr(0, end));
  if (!col || *col == 0) {
    problem = "expected a column number after 'col'";
    return false;
  }
  if (e.line == 0) {
    problem = "@unknown takes no column";
    return false;
  }
  e.col = col;
  text = trim(text.substr(end));
  return true;
}

// The text after "expected-" in a comment on line `line`.
std::optional<Expected> parseExpectation(std::string_view text, uint32_t line, const std::string& file,
                                         const CaseReader& reader, std::string& problem) {
  Expected e;
  e.directiveLine = line;
  if (text.starts_with("error")) {
    text.remove_prefix(5);
  } else if (text.starts_with("note")) {
    e.note = true;
    text.remove_prefix(4);
  } else {
    problem = "unknown directive; expected " + reader.directives;
    return std::nullopt;
  }
  std::optional<int64_t> target = readWhere(text, line, problem);
  if (!target) return std::nullopt;
  if (*target < 0) {
    problem = "the expectation points before the start of the file";
    return std::nullopt;
  }
  e.line = static_cast<uint32_t>(*target);
  text = trim(text);
  if (!readColumn(text, e, problem)) return std::nullopt;
  if (!text.starts_with(":")) {
    problem = "expected ':' before the message";
    return std::nullopt;
  }
  std::string_view message = trim(text.substr(1));
  if (message.empty()) {
    problem = "the expected message is empty";
    return std::nullopt;
  }
  e.message = substitute(message, line, reader.fileSubstitution ? &file : nullptr, problem);
  if (!problem.empty()) return std::nullopt;
  return e;
}

// An `expected-` comment (the text after it) on line `line` of `c`.
void readExpectation(CaseBase& c, std::string_view text, uint32_t line, const CaseReader& reader) {
  std::string where = c.file + ":" + std::to_string(line) + ": ";
  std::string problem;
  auto e = parseExpectation(text, line, c.file, reader, problem);
  const uint32_t lastTarget = c.lastLine + (reader.endOfInputLine ? 1 : 0);
  if (!e) {
    c.problems.push_back(where + "bad expectation: " + problem);
  } else if (e->line != 0 && (e->line < c.firstLine || e->line > lastTarget)) {
    c.problems.push_back(where + "the expectation points at line " + std::to_string(e->line) +
                         ", outside its case (lines " + std::to_string(c.firstLine) + "-" + std::to_string(lastTarget) +
                         ")");
  } else {
    c.expected.push_back(std::move(*e));
  }
}

// The comments of `c`, lines [begin, last) of `lines`; whether it has a RUN line.
bool readComments(CaseBase& c, const std::vector<std::string_view>& lines, size_t begin, size_t last,
                  const CaseReader& reader) {
  bool ownRun = false;
  for (size_t k = begin; k < last; ++k) {
    const uint32_t lineNo = static_cast<uint32_t>(k + 1);
    size_t hash = lines[k].find('#');
    if (hash == std::string_view::npos) continue;
    std::string_view comment = trim(lines[k].substr(hash + 1));
    std::string where = c.file + ":" + std::to_string(lineNo) + ": ";
    std::string problem;
    if (comment.starts_with("RUN:")) {
      if (ownRun) c.problems.push_back(where + "a case has at most one RUN line");
      ownRun = true;
      reader.run(comment.substr(4),
                 [&](const std::string& what) { c.problems.push_back(where + "bad RUN line: " + what); });
    } else if (reader.directive && reader.directive(comment, problem)) {
      if (!problem.empty()) c.problems.push_back(where + problem);
    } else if (comment.starts_with("expected-")) {
      readExpectation(c, comment.substr(9), lineNo, reader);
    }
  }
  return ownRun;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

bool isSeparator(std::string_view line) { return trim(line) == "# -----"; }

}  // namespace

void readCases(const std::string& file, std::string_view text, const CaseReader& reader) {
  const std::vector<std::string_view> lines = splitLines(text);
  const bool endsWithNewline = !text.empty() && text.back() == '\n';
  bool fileHasRun = false;
  int index = 0;
  size_t begin = 0;
  while (begin <= lines.size()) {
    size_t end = begin;
    while (end < lines.size() && !isSeparator(lines[end])) ++end;
    size_t last = end;  // one past the last non-blank line
    while (last > begin && trim(lines[last - 1]).empty()) --last;
    CaseBase& c = reader.start();
    c.file = file;
    c.index = ++index;
    c.firstLine = static_cast<uint32_t>(begin + 1);
    c.lastLine = static_cast<uint32_t>(last);
    if (last == begin) c.problems.push_back(file + ":" + std::to_string(begin + 1) + ": empty case");
    bool ownRun = readComments(c, lines, begin, last, reader);
    if (index == 1) fileHasRun = ownRun;
    if (!ownRun && !fileHasRun) c.problems.push_back(file + ": the file needs a '# RUN:' line in its first case");
    FinalNewline finalNewline = reader.finish();
    c.source = std::string(begin, '\n');
    for (size_t k = begin; k < last; ++k) {
      c.source += lines[k];
      bool fileEndsHere = k + 1 == lines.size() && !endsWithNewline;
      if (k + 1 < last || finalNewline == FinalNewline::Always ||
          (finalNewline == FinalNewline::AsInFile && !fileEndsHere))
        c.source += '\n';
    }
    begin = end + 1;
  }
}

std::vector<HirFile> readHirFiles(const std::filesystem::path& dir, bool recursive) {
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  auto keep = [&](const std::filesystem::directory_entry& entry) {
    if (entry.is_regular_file() && entry.path().extension() == ".hir") paths.push_back(entry.path());
  };
  if (recursive)
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) keep(entry);
  else
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) keep(entry);
  std::sort(paths.begin(), paths.end());
  std::vector<HirFile> files;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    files.push_back({std::filesystem::relative(path, dir).generic_string(), text.str()});
  }
  return files;
}

std::string codeOf(const CaseBase& c) {
  std::string code;
  std::istringstream in(c.source);
  for (std::string line; std::getline(in, line);) {
    std::string_view t = trim(line);
    if (!t.empty() && t[0] != '#') code += line + "\n";
  }
  return code;
}

std::string describe(const Expected& e, const std::string& file) {
  std::string where = file;
  if (e.line) where += ":" + std::to_string(e.line) + (e.col ? ":" + std::to_string(*e.col) : "");
  return where + ": " + (e.note ? "note" : "error") + ": ..." + e.message + "...  (expected-" +
         (e.note ? "note" : "error") + " on line " + std::to_string(e.directiveLine) + ")";
}

std::string describe(const Actual& a, const std::string& file) {
  std::string where = a.line ? file + ":" + std::to_string(a.line) + ":" + std::to_string(a.col) : file;
  return where + ": " + (a.note ? "note" : "error") + ": " + a.message;
}

namespace {

bool meets(const Actual& a, const Expected& e) {
  if (a.note != e.note || a.line != e.line || (e.col && a.col != *e.col)) return false;
  return a.message.find(e.message) != std::string::npos;
}

}  // namespace

void match(const std::vector<Actual>& actual, const std::vector<Expected>& expected, const std::string& file,
           std::vector<std::string>& complaints) {
  std::vector<bool> used(expected.size(), false);
  for (const Actual& a : actual) {
    bool found = false;
    for (size_t k = 0; k < expected.size() && !found; ++k) {
      if (!used[k] && meets(a, expected[k])) used[k] = found = true;
    }
    if (!found) complaints.push_back("unexpected: " + describe(a, file));
  }
  for (size_t k = 0; k < expected.size(); ++k)
    if (!used[k]) complaints.push_back("missing:    " + describe(expected[k], file));
}

std::string malformedReport(const std::string& head, const std::vector<std::string>& problems) {
  std::string out = head + ": malformed case\n";
  for (const std::string& p : problems) out += "  " + p + "\n";
  return out;
}

std::string report(const std::string& head, const std::vector<std::string>& complaints, const CaseBase& c,
                   const std::vector<Actual>& actual, const std::string& none) {
  if (complaints.empty()) return "";
  std::string out = head + ":\n";
  for (const std::string& line : complaints) out += "  " + line + "\n";
  out += "expected:\n";
  if (c.expected.empty()) out += "  " + none + "\n";
  for (const Expected& e : c.expected) out += "  " + describe(e, c.file) + "\n";
  out += "actual:\n";
  if (actual.empty()) out += "  " + none + "\n";
  for (const Actual& a : actual) out += "  " + describe(a, c.file) + "\n";
  return out;
}

std::string edited(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace hostir::hirtest
