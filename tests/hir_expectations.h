// What the runners of .hir test files share: files that hold cases with their
// expected diagnostics or findings written inside them as comments, in the
// style of MLIR's -verify-diagnostics. Two runners use it:
// tests/diagnostics/diagnostics_test.cpp (the parser's and verifier's
// errors) and tests/analysis/program_files_test.cpp (the program check's
// findings); each README.md there gives the syntax with examples.
//
// Shared here: a file's split into cases at `# -----` lines, with the line
// numbers of the whole file (a case's source has every line before it
// blank); the RUN line of the file's first case standing for every case
// without its own; `# expected-error[@WHERE][ col N]: MESSAGE` and
// `expected-note` (WHERE is +N, -N or unknown) with [[@LINE]], [[@LINE+N]]
// and [[@LINE-N]] in MESSAGE; the matching of what a case produced against
// its expectations, and the report of a failed case.
//
// Each runner's own: what its RUN line says (a Dialect's `run`), directives
// of its own, whether [[FILE]] stands for the file's name, how a case runs,
// and how what it produced is read.
#pragma once

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hostir::hirtest {

// ---------------------------------------------------------------------------
// Text.

// `s` without leading spacing and trailing spacing or '\r'.
std::string_view trim(std::string_view s);

// The whole of `text` as a T; nothing where it is not one.
template <typename T>
std::optional<T> parseInt(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// `text` split at spacing.
std::vector<std::string_view> words(std::string_view text);

// A RUN line's `set NAME=INTEGER`, `w[k]` being "set": reads w[k + 1] into
// `params` and steps `k` over it. Empty, or what is wrong.
std::string readSet(const std::vector<std::string_view>& w, size_t& k, std::map<std::string, int64_t>& params);

// The source line `line` (1-based) of `source`, as it stands ('\r' kept).
std::string lineOf(const std::string& source, uint32_t line);

// ---------------------------------------------------------------------------
// Cases.

struct Expected {
  bool note = false;
  uint32_t line = 0;            // 0: @unknown, a diagnostic without a position
  std::optional<uint32_t> col;  // checked when given
  std::string message;          // a substring of the diagnostic's message
  uint32_t directiveLine = 0;   // the line of the comment
};

// What the runners' cases have in common; each runner's Case adds its
// `settings` (what its RUN line says) and what else it reads.
struct CaseBase {
  std::string file;  // the file's name, as the runner's reports give it
  int index = 0;     // 1-based within the file
  uint32_t firstLine = 0, lastLine = 0;
  std::string source;  // what the tools see: earlier lines blank
  std::vector<Expected> expected;
  std::vector<std::string> problems;  // malformed directives: the case fails with these

  // The file's name without ".hir", '/' and other signs as '_', and the
  // case's number: "names_03", "race_events_03".
  std::string name() const;
  // "FILE case N (lines FIRST-LAST)", what a report starts with.
  std::string head() const;
};

// How the last line of a case's source ends.
enum class FinalNewline {
  AsInFile,  // with its newline, unless it is the file's last line and that has none
  Always,    // with a newline
  Dropped,   // without: the input ends right after its last character
};

// Takes a problem with what a RUN line says.
using Complain = std::function<void(const std::string& what)>;

// A runner's part of the syntax, for its Case (a CaseBase with `settings`).
template <typename Case>
struct Dialect {
  using Settings = decltype(Case::settings);
  // Named where an `expected-` directive is none of them.
  std::string directives = "expected-error or expected-note";
  // [[FILE]] in a message stands for the file's name (and any other [[...]]
  // but [[@LINE...]] is malformed).
  bool fileSubstitution = false;
  // An expectation may point at the line after its case: where the parser
  // meets the end of the input.
  bool endOfInputLine = false;
  // A RUN line: the text after "RUN:". Each complaint fails the case as
  // "FILE:LINE: bad RUN line: WHAT".
  std::function<Settings(std::string_view text, const Complain& complain)> run{};
  // A comment (the text after '#') that the runner may read into the case:
  // true when it is one of its own; `problem` says what is wrong with it.
  std::function<bool(std::string_view comment, Case& c, std::string& problem)> directive{};
  // How the case's source ends, its settings known.
  std::function<FinalNewline(const Case& c)> finalNewline = [](const Case&) { return FinalNewline::AsInFile; };
};

// The reading of a file's cases, for splitCases: `start` gives each case to
// fill, `run` and `directive` read its comments in order, and `finish` (its
// comments read) settles its settings.
struct CaseReader {
  std::string directives;
  bool fileSubstitution = false;
  bool endOfInputLine = false;
  std::function<CaseBase&()> start{};
  std::function<void(std::string_view text, const Complain& complain)> run{};
  std::function<bool(std::string_view comment, std::string& problem)> directive{};  // may be empty
  std::function<FinalNewline()> finish{};
};

// Reads the cases of `file`, whose text is `text`, one after another.
void readCases(const std::string& file, std::string_view text, const CaseReader& reader);

// Splits a .hir file's text into its cases.
template <typename Case>
std::vector<Case> splitCases(const std::string& file, std::string_view text, const Dialect<Case>& dialect) {
  std::vector<Case> cases;
  std::optional<typename Dialect<Case>::Settings> own, fileSettings;
  CaseReader reader{dialect.directives, dialect.fileSubstitution, dialect.endOfInputLine};
  reader.start = [&]() -> CaseBase& {
    own.reset();
    return cases.emplace_back();
  };
  reader.run = [&](std::string_view run, const Complain& complain) { own = dialect.run(run, complain); };
  if (dialect.directive)
    reader.directive = [&](std::string_view comment, std::string& problem) {
      return dialect.directive(comment, cases.back(), problem);
    };
  reader.finish = [&] {
    Case& c = cases.back();
    if (cases.size() == 1) fileSettings = own;
    if (own)
      c.settings = *own;
    else if (fileSettings)
      c.settings = *fileSettings;
    return dialect.finalNewline(c);
  };
  readCases(file, text, reader);
  return cases;
}

// The .hir files in `dir` (and its subfolders where `recursive`), sorted.
struct HirFile {
  std::string name;  // relative to `dir`, with '/'
  std::string text;
};
std::vector<HirFile> readHirFiles(const std::filesystem::path& dir, bool recursive);

// Every case of the .hir files in `dir`.
template <typename Case>
std::vector<Case> folderCases(const std::filesystem::path& dir, bool recursive, const Dialect<Case>& dialect) {
  std::vector<Case> all;
  for (const HirFile& f : readHirFiles(dir, recursive))
    for (Case& c : splitCases(f.name, f.text, dialect)) all.push_back(std::move(c));
  return all;
}

// The case's source with its comment lines dropped, so that two cases differ
// in what the tools see.
std::string codeOf(const CaseBase& c);

// ---------------------------------------------------------------------------
// Matching.

// A diagnostic or finding that a case produced: an error or a note.
struct Actual {
  bool note = false;
  uint32_t line = 0, col = 0;  // line 0: no position
  std::string message;
};

std::string describe(const Expected& e, const std::string& file);
std::string describe(const Actual& a, const std::string& file);

// Pairs each of `actual` with an expectation it meets, each expectation used
// once; adds "unexpected: ..." for each left without and "missing:    ..."
// for each expectation left unmet to `complaints`.
void match(const std::vector<Actual>& actual, const std::vector<Expected>& expected, const std::string& file,
           std::vector<std::string>& complaints);

// The report of a case with problems: `head` and the problems.
std::string malformedReport(const std::string& head, const std::vector<std::string>& problems);

// Empty without complaints; else `head`, the complaints, and expected
// against actual, `none` standing for an empty list ("no diagnostic").
std::string report(const std::string& head, const std::vector<std::string>& complaints, const CaseBase& c,
                   const std::vector<Actual>& actual, const std::string& none);

// ---------------------------------------------------------------------------
// The runners' tests of themselves.

// `text` with `from` replaced by `to`; a test failure where `from` is not in it.
std::string edited(std::string text, const std::string& from, const std::string& to);

}  // namespace hostir::hirtest
