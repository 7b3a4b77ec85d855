// Error tests as .hir files: every tests/diagnostics/*.hir file holds cases
// whose expected diagnostics are written inside them, in the style of MLIR's
// -verify-diagnostics. README.md in this folder says the same with examples.
//
//   # RUN: verify ranks=3 set M=5
//   program p(M = 4) {
//     # expected-error@+1 col 20: extent 5 of axis 0 of 'x' does not divide evenly over 3 ranks
//     input x : f32[M] shard(0)
//   }
//   # -----
//   ...the next case...
//
// Cases. A line `# -----` splits a file into independent cases. Line
// numbers are those of the whole file: the parser sees a case with every
// line before it left blank, so a diagnostic's file:line:col is the line an
// editor shows. A case ends at its last non-blank line, with that line's
// newline; the end of file a parser meets is the line after it, column 1.
//
// RUN lines. `# RUN: STAGE [ranks=N] [set NAME=VALUE]... [no-final-newline]`.
//   parse      the diagnostics come from parseProgram;
//   structure  the program parses, the diagnostics come from verifyStructure
//              (no param values), and verifyProgram reports the same;
//   verify     the program parses, the diagnostics come from verifyProgram
//              with Bindings{params: the `set`s, world: ranks (default 1)}.
//   no-final-newline: the case's last line has no newline, so the input ends
//              right after its last character (errors at an unterminated end).
// The RUN line of the file's first case is the file's: it applies to every
// case that has none of its own. A case's own RUN line replaces it.
//
// Expectations. `# expected-error[@WHERE][ col N]: MESSAGE`, and the same with
// `expected-note` for a note attached to the error. WHERE is `+N` or `-N`
// lines from the comment's own line, or `unknown` for a diagnostic without a
// position; without `@` the expectation is for the comment's own line (a
// comment after code on that line). ` col N` also checks the column (1-based;
// every case in this folder gives it). MESSAGE must be a substring of the
// diagnostic's message; in it, `[[@LINE]]`, `[[@LINE+N]]` and `[[@LINE-N]]`
// stand for the comment's line number (plus or minus N), for messages such
// as "'t' is already defined at [[@LINE-2]]:3".
//
// Matching. Every diagnostic the case produces (the error and each of its
// notes) must meet an expectation of its kind, line, column and message, and
// every expectation must be met; a case without expectations must produce no
// diagnostic. Malformed directives and RUN lines fail the case. Every
// diagnostic must also render as "FILE:LINE:COL: error: MESSAGE" with its
// source line and a caret under the column.
//
// What this runner shares with tests/analysis/program_files_test.cpp (the
// split into cases, the RUN line of the file's first case, the expectations,
// the matching and the report) is in tests/hir_expectations.h; here are the
// RUN stages, how a case runs, and the check of the rendering.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hir_expectations.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "test_files.h"

namespace {

using namespace hostir;
using hirtest::Actual;
using hirtest::Expected;
using hirtest::parseInt;
using hostir::testing::testProgramText;

enum class Stage { Parse, Structure, Verify };

struct Settings {
  Stage stage = Stage::Verify;
  int64_t world = 1;
  std::map<std::string, int64_t> params;
  bool noFinalNewline = false;
};

struct Case : hirtest::CaseBase {
  Settings settings;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file << " case " << c.index; }

// `# RUN: ...` after the "RUN:".
Settings parseRun(std::string_view text, const hirtest::Complain& problem) {
  Settings s;
  std::vector<std::string_view> w = hirtest::words(text);
  if (w.empty()) {
    problem("expected a stage: parse, structure or verify");
    return s;
  }
  if (w[0] == "parse")
    s.stage = Stage::Parse;
  else if (w[0] == "structure")
    s.stage = Stage::Structure;
  else if (w[0] == "verify")
    s.stage = Stage::Verify;
  else
    problem("unknown stage '" + std::string(w[0]) + "'; expected parse, structure or verify");
  for (size_t k = 1; k < w.size(); ++k) {
    if (w[k].starts_with("ranks=")) {
      auto n = parseInt<int64_t>(w[k].substr(6));
      if (!n)
        problem("expected ranks=INTEGER, got '" + std::string(w[k]) + "'");
      else
        s.world = *n;
    } else if (w[k] == "set") {
      if (std::string bad = hirtest::readSet(w, k, s.params); !bad.empty()) problem(bad);
    } else if (w[k] == "no-final-newline") {
      s.noFinalNewline = true;
    } else {
      problem("unknown setting '" + std::string(w[k]) + "'");
    }
  }
  return s;
}

// The syntax of this folder's files: an expectation may point at the line
// after its case, where the parser meets the end of the input.
hirtest::Dialect<Case> dialect() {
  return {.endOfInputLine = true, .run = parseRun, .finalNewline = [](const Case& c) {
            return c.settings.noFinalNewline ? hirtest::FinalNewline::Dropped : hirtest::FinalNewline::AsInFile;
          }};
}

// Splits a .hir file's text into its cases.
std::vector<Case> splitCases(const std::string& file, std::string_view text) {
  return hirtest::splitCases(file, text, dialect());
}

// What running a case gives: its diagnostic, or a failure that is not one
// (a parse error where the verifier was to speak).
struct Outcome {
  std::optional<Diagnostic> diag;
  std::string failure;
};

Outcome runCase(const Case& c) {
  auto parsed = parseProgram(c.source);
  if (c.settings.stage == Stage::Parse) return {parsed.ok() ? std::nullopt : std::optional(parsed.error()), ""};
  if (!parsed.ok())
    return {std::nullopt, "the case must parse for its RUN stage, but the parser reports:\n" +
                              renderDiagnostic(parsed.error(), c.file, c.source)};
  Bindings bindings{c.settings.params, c.settings.world};
  if (c.settings.stage == Stage::Verify) return {verifyProgram(*parsed, bindings), ""};
  Status structural = verifyStructure(*parsed);
  Status full = verifyProgram(*parsed, bindings);
  std::string rs = structural ? renderDiagnostic(*structural, c.file) : "nothing\n";
  std::string rf = full ? renderDiagnostic(*full, c.file) : "nothing\n";
  if (rs != rf)
    return {structural,
            "verifyStructure and verifyProgram differ:\n  verifyStructure: " + rs + "  verifyProgram: " + rf};
  return {structural, ""};
}

// The diagnostic renders as a header, then its source line and a caret under
// the column, for the error and for each note.
std::vector<std::string> renderingProblems(const Diagnostic& d, const std::string& file, const std::string& source) {
  std::vector<std::string> problems;
  std::string rendered = renderDiagnostic(d, file, source);
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < rendered.size();) {
    size_t end = rendered.find('\n', begin);
    if (end == std::string::npos) return {"a rendered line does not end with a newline:\n" + rendered};
    lines.push_back(rendered.substr(begin, end - begin));
    begin = end + 1;
  }
  std::vector<std::pair<SourceLoc, std::string>> parts{{d.loc, d.message}};
  for (const Note& n : d.notes) parts.push_back({n.loc, n.message});
  size_t at = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto& [loc, message] = parts[k];
    std::string header = (loc.valid() ? file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) : file) +
                         (k == 0 ? ": error: " : ": note: ") + message;
    if (message.find('\n') != std::string::npos) problems.push_back("the message spans lines: " + message);
    if (at >= lines.size() || lines[at] != header) {
      problems.push_back("rendered as:\n" + rendered + "but expected the header " + header);
      return problems;
    }
    ++at;
    if (!loc.valid()) continue;
    if (at + 2 > lines.size()) {
      problems.push_back("no source line and caret under " + header + "\n" + rendered);
      return problems;
    }
    std::string text = hirtest::lineOf(source, loc.line);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const std::string& shown = lines[at];
    const std::string& caret = lines[at + 1];
    at += 2;
    size_t col = loc.col - 1;
    if (caret.empty() || caret.back() != '^' || caret.find_first_not_of(" \t") != caret.size() - 1) {
      problems.push_back("the caret line is not spacing then '^':\n" + rendered);
      continue;
    }
    if (col > text.size()) problems.push_back("column " + std::to_string(loc.col) + " is beyond the end of its line");
    size_t caretCol = caret.size() - 1;
    if (text.size() <= 200) {
      std::string printable;
      for (unsigned char ch : text) printable += (ch == '\t' || (ch >= 0x20 && ch < 0x7f)) ? char(ch) : '?';
      if (shown != printable || caretCol != col) problems.push_back("the caret is not under the column:\n" + rendered);
    } else if (shown.size() > 200 || text.find(shown) == std::string::npos || caretCol >= shown.size() ||
               col >= text.size() || shown[caretCol] != text[col]) {
      problems.push_back("the window around a long line misses the column:\n" + rendered);
    }
    if (k == 0 && col < text.size() && (text[col] == ' ' || text[col] == '\t'))
      problems.push_back("the caret points at spacing, not a token:\n" + rendered);
  }
  if (at != lines.size()) problems.push_back("stray rendered lines:\n" + rendered);
  return problems;
}

// Empty when the case passes; else one report that shows expected against actual.
std::string checkCase(const Case& c) {
  if (!c.problems.empty()) return hirtest::malformedReport(c.head(), c.problems);
  Outcome outcome = runCase(c);
  std::vector<Actual> actual;
  if (outcome.diag) {
    actual.push_back({false, outcome.diag->loc.line, outcome.diag->loc.col, outcome.diag->message});
    for (const Note& n : outcome.diag->notes) actual.push_back({true, n.loc.line, n.loc.col, n.message});
  }
  std::vector<std::string> complaints;
  hirtest::match(actual, c.expected, c.file, complaints);
  if (!outcome.failure.empty()) complaints.push_back(outcome.failure);
  if (outcome.diag)
    for (const std::string& p : renderingProblems(*outcome.diag, c.file, c.source)) complaints.push_back(p);
  return hirtest::report(c.head(), complaints, c, actual, "no diagnostic");
}

// ---------------------------------------------------------------------------
// The .hir files of this folder.

const std::vector<Case>& folderCases() {
  static const std::vector<Case> cases = hirtest::folderCases(HOSTIR_DIAGNOSTICS_DIR, false, dialect());
  return cases;
}

class DiagnosticsFile : public ::testing::TestWithParam<Case> {};

TEST_P(DiagnosticsFile, Case) {
  std::string report = checkCase(GetParam());
  if (!report.empty()) ADD_FAILURE() << report;
}

INSTANTIATE_TEST_SUITE_P(Hir, DiagnosticsFile, ::testing::ValuesIn(folderCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name(); });

TEST(DiagnosticsFiles, ManyDistinctCases) {
  const std::vector<Case>& cases = folderCases();
  // The error cases converted from the C++ tables; the folder only grows.
  EXPECT_GE(cases.size(), 200u) << "diagnostics cases went missing from " << HOSTIR_DIAGNOSTICS_DIR;
  std::set<std::string> names, keys;
  for (const Case& c : cases) {
    EXPECT_TRUE(names.insert(c.name()).second) << "two cases named " << c.name();
    std::string key = hirtest::codeOf(c) + "|" + std::to_string(static_cast<int>(c.settings.stage)) + "|" +
                      std::to_string(c.settings.world) + "|" + (c.settings.noFinalNewline ? "n" : "");
    for (const auto& [name, value] : c.settings.params) key += "|" + name + "=" + std::to_string(value);
    EXPECT_TRUE(keys.insert(key).second) << c.file << " case " << c.index << " repeats an earlier case";
    EXPECT_FALSE(c.expected.empty()) << c.file << " case " << c.index << " expects no diagnostic";
  }
}

// ---------------------------------------------------------------------------
// The runner itself: it must fail what is wrong, or the files prove nothing.

// Two cases that pass: a verify case with an error and a parse case with an
// error and a note at the end of the file. Line numbers as in the file.
std::string good() { return testProgramText("diagnostics/programs/good_cases.hir"); }

std::string reportFor(const std::string& text, int index = 1) {
  std::vector<Case> cases = splitCases("t.hir", text);
  EXPECT_GE(static_cast<int>(cases.size()), index);
  return static_cast<int>(cases.size()) >= index ? checkCase(cases[static_cast<size_t>(index - 1)]) : "";
}

// `good()` with `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to) { return hirtest::edited(good(), from, to); }

TEST(DiagnosticsRunner, SplitsCasesWithTheFileLineNumbers) {
  std::vector<Case> cases = splitCases("t.hir", good());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name(), "t_01");
  EXPECT_EQ(cases[1].name(), "t_02");
  EXPECT_EQ(cases[0].settings.stage, Stage::Verify);
  EXPECT_EQ(cases[1].settings.stage, Stage::Parse);
  EXPECT_EQ(cases[1].firstLine, 7u);
  EXPECT_EQ(cases[1].lastLine, 10u);  // the blank line 11 is not part of it
  EXPECT_EQ(cases[1].source.substr(0, 6), std::string(6, '\n'));
  ASSERT_EQ(cases[0].expected.size(), 1u);
  EXPECT_EQ(cases[0].expected[0].line, 4u);
  EXPECT_EQ(cases[0].expected[0].col, 12u);
  EXPECT_EQ(reportFor(good(), 1), "");
  EXPECT_EQ(reportFor(good(), 2), "");
}

TEST(DiagnosticsRunner, MissingExpectationFails) {
  std::string report = reportFor(edited("  # expected-error@+1 col 12: unknown name 'q'\n", "\n"));
  EXPECT_NE(report.find("unexpected: t.hir:4:12: error: unknown name 'q'"), std::string::npos) << report;
  EXPECT_NE(report.find("expected:\n  no diagnostic"), std::string::npos) << report;
  // A missing note fails too.
  report = reportFor(edited("# expected-note@+1 col 13: to match this '{' (the program body)\n", "#\n"), 2);
  EXPECT_NE(report.find("unexpected: t.hir:10:13: note: to match this '{'"), std::string::npos) << report;
}

TEST(DiagnosticsRunner, WrongColumnFails) {
  std::string report = reportFor(edited("col 12", "col 11"));
  EXPECT_NE(report.find("missing:    t.hir:4:11: error: ...unknown name 'q'..."), std::string::npos) << report;
  EXPECT_NE(report.find("unexpected: t.hir:4:12: error: unknown name 'q'"), std::string::npos) << report;
  report = reportFor(edited("note@+1 col 13", "note@+1 col 12"), 2);
  EXPECT_NE(report.find("missing:    t.hir:10:12: note:"), std::string::npos) << report;
}

TEST(DiagnosticsRunner, WrongLineFails) {
  std::string report = reportFor(edited("error@+1 col 12", "error@+2 col 12"));
  EXPECT_NE(report.find("missing:    t.hir:5:12: error:"), std::string::npos) << report;
  report = reportFor(edited("error@+3 col 1", "error@+2 col 1"), 2);
  EXPECT_NE(report.find("missing:    t.hir:10:1: error:"), std::string::npos) << report;
}

TEST(DiagnosticsRunner, WrongMessageFails) {
  std::string report = reportFor(edited("unknown name 'q'", "unknown name 'r'"));
  EXPECT_NE(report.find("missing:    t.hir:4:12: error: ...unknown name 'r'..."), std::string::npos) << report;
  // The message is a substring: a part of it is enough, more than it is not.
  EXPECT_EQ(reportFor(edited("unknown name 'q'", "name 'q")), "");
  EXPECT_NE(reportFor(edited("unknown name 'q'", "unknown name 'q' here")), "");
}

TEST(DiagnosticsRunner, ExtraDiagnosticFails) {
  // An expectation of an error where the program is fine.
  std::string text = "# RUN: verify\nprogram p() {\n  # expected-error@+1 col 3: unknown\n  e = record_event()\n}\n";
  std::string report = reportFor(text);
  EXPECT_NE(report.find("missing:    t.hir:4:3: error: ...unknown..."), std::string::npos) << report;
  EXPECT_NE(report.find("actual:\n  no diagnostic"), std::string::npos) << report;
  // An expectation too many: a second error where the tools give one.
  report =
      reportFor(edited("  y = copy(q)\n", "  y = copy(q)\n  # expected-error@+1 col 3: unknown name\n  z = copy(r)\n"));
  EXPECT_NE(report.find("missing:    t.hir:6:3: error:"), std::string::npos) << report;
  // A case without expectations must produce no diagnostic.
  report = reportFor("# RUN: verify\nprogram p() {\n  y = copy(q)\n}\n");
  EXPECT_NE(report.find("unexpected: t.hir:3:12: error: unknown name 'q'"), std::string::npos) << report;
  EXPECT_EQ(reportFor("# RUN: verify\nprogram p() {\n  e = record_event()\n}\n"), "");
}

TEST(DiagnosticsRunner, TheStageMatters) {
  // A parse error does not satisfy a verify case, nor does a verifier error a parse case.
  std::string report = reportFor(edited("  y = copy(q)\n", "  y = copy(q\n"));
  EXPECT_NE(report.find("the case must parse for its RUN stage"), std::string::npos) << report;
  report = reportFor(edited("# RUN: verify\n", "# RUN: parse\n"));
  EXPECT_NE(report.find("missing:    t.hir:4:12: error:"), std::string::npos) << report;
  // Settings reach the verifier.
  std::string shard =
      "# RUN: verify ranks=3 set M=5\nprogram p(M = 3) {\n"
      "  # expected-error@+1 col 20: extent 5 of axis 0 of 'x' does not divide evenly over 3 ranks\n"
      "  input x : f32[M] shard(0)\n}\n";
  EXPECT_EQ(reportFor(shard), "");
  std::string twoRanks = shard;
  twoRanks.replace(twoRanks.find("ranks=3"), 7, "ranks=5");
  EXPECT_NE(reportFor(twoRanks).find("actual:\n  no diagnostic"), std::string::npos);
}

TEST(DiagnosticsRunner, LaterCasesInheritOrReplaceTheFileRunLine) {
  std::vector<Case> cases = splitCases("t.hir", testProgramText("diagnostics/programs/inherited_run_lines.hir"));
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[1].settings.world, 2);
  EXPECT_EQ(cases[1].settings.params, (std::map<std::string, int64_t>{{"M", 3}}));
  EXPECT_EQ(cases[2].settings.stage, Stage::Parse);
  EXPECT_EQ(cases[2].settings.world, 1);
  EXPECT_TRUE(cases[2].settings.params.empty());
  EXPECT_EQ(cases[2].source, std::string(7, '\n') + "# RUN: parse no-final-newline\nprogram r() {\n}");
}

TEST(DiagnosticsRunner, EndOfFileCases) {
  // The same unterminated parameter list, with and without the final newline.
  std::string text =
      "# RUN: parse no-final-newline\n"
      "# expected-error@+2 col 16: expected ',' or ')' in the parameter list, found end of file\n"
      "# expected-note@+1 col 10: to match this '(' (the parameter list)\n"
      "program p(M = 1\n";
  EXPECT_EQ(reportFor(text), "");
  std::string withNewline = text;
  withNewline.replace(withNewline.find(" no-final-newline"), 17, "");
  std::string report = reportFor(withNewline);
  EXPECT_NE(report.find("unexpected: t.hir:5:1: error: expected ',' or ')' in the parameter list, found end of file"),
            std::string::npos)
      << report;
}

TEST(DiagnosticsRunner, LineSubstitutionsAndUnknownPositions) {
  std::string text = testProgramText("diagnostics/programs/line_substitution.hir");
  EXPECT_EQ(reportFor(text), "");
  std::string wrong = text;
  wrong.replace(wrong.find("LINE-1"), 6, "LINE-2");
  EXPECT_NE(reportFor(wrong).find("missing:    t.hir:5:3: error: ...'t' is already defined at 2:3..."),
            std::string::npos);
  std::string unknown =
      "# RUN: verify ranks=0\n# expected-error@unknown: a team needs at least one rank, got 0\n"
      "program p() {\n}\n";
  EXPECT_EQ(reportFor(unknown), "");
  std::string positioned = unknown;
  positioned.replace(positioned.find("@unknown"), 8, "@+1 col 1");
  EXPECT_NE(reportFor(positioned).find("unexpected: t.hir: error: a team needs at least one rank"), std::string::npos);
}

TEST(DiagnosticsRunner, TrailingCommentOnTheSameLine) {
  const std::string text =
      "# RUN: verify\nprogram p() {\n  y = copy(q)  # expected-error col 12: unknown name 'q'\n}\n";
  EXPECT_EQ(reportFor(text), "");
  std::string wrong = text;
  wrong.replace(wrong.find("col 12"), 6, "col 11");
  EXPECT_NE(reportFor(wrong), "");
}

TEST(DiagnosticsRunner, MalformedDirectivesFailTheCase) {
  for (std::string bad : {
           "# expected-eror@+1 col 12: unknown name 'q'",       // misspelt kind
           "# expected-error@1 col 12: unknown name 'q'",       // no sign
           "# expected-error@+1 col 12 unknown name 'q'",       // no colon
           "# expected-error@+1 col x: unknown name 'q'",       // no column number
           "# expected-error@+1 col 12:",                       // no message
           "# expected-error@+90 col 12: unknown name 'q'",     // outside its case
           "# expected-error@unknown col 3: unknown name 'q'",  // a column without a position
           "# expected-error@+1 col 12: at [[@LINE+x]]",        // bad substitution
       }) {
    std::string report = reportFor(edited("# expected-error@+1 col 12: unknown name 'q'", bad));
    EXPECT_NE(report.find("malformed case"), std::string::npos) << bad << "\n" << report;
  }
  for (std::string run : {"# RUN: frobnicate\n", "# RUN: verify ranks=two\n", "# RUN: verify set M\n",
                          "# RUN: verify colour=red\n", "\n"}) {
    std::string report = reportFor(edited("# RUN: verify\n", run));
    EXPECT_NE(report.find("malformed case"), std::string::npos) << run << report;
  }
  EXPECT_NE(reportFor("# RUN: verify\n# RUN: parse\nprogram p() {\n}\n").find("at most one RUN line"),
            std::string::npos);
  EXPECT_NE(reportFor("# RUN: verify\nprogram p() {\n}\n# -----\n\n", 2).find("empty case"), std::string::npos);
}

}  // namespace
