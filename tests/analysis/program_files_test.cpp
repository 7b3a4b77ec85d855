// Checked programs as .hir files: every tests/analysis/programs/DIR/*.hir
// file holds programs whose expected findings (races, uninitialized reads,
// unwritten outputs, communications that differ between ranks) are written
// inside them as comments, in the style of tests/diagnostics/.
// programs/README.md says the same with examples.
//
//   # RUN: check ranks=2,3,4 streams=4 set N=64
//   # expected-summary: a communication mismatch between ranks
//   # expected-ranks-checked: all
//   program p(N = 64) {
//     ...
//     # expected-error@+1 col 9: ranks issue different communications: ...
//     c = allreduce(y, op=sum)
//   }
//   # -----
//   ...the next case...
//
// Cases. A line `# -----` splits a file into independent cases, with the
// line numbers of the whole file (a case is checked with every line before
// it left blank), as in tests/diagnostics/.
//
// RUN lines. `# RUN: check [ranks=N[,N]...] [streams=P] [set NAME=VALUE]...`:
// the program must parse and verify for the params and each team, and is
// then checked as `hostir check` does (checkProgram) with `ranks` ranks
// (default 1) and a pool of `streams` worker streams (default 4). A list of
// team sizes makes one test per size. The RUN line of the file's first case
// applies to every case without its own; a case's own replaces it.
//
// Expectations. The findings are matched as rendered by formatProgramCheck:
// `# expected-error[@WHERE][ col N]: MESSAGE` and `expected-note`, as in
// tests/diagnostics/ (WHERE is +N, -N or unknown; MESSAGE is a substring,
// with [[@LINE]], [[@LINE+N]], [[@LINE-N]] and [[FILE]] for the file's name
// as the report gives it, e.g. in a race's "while copy at FILE:8:3").
// `# expected-summary: TEXT`: summarizeFindings gives exactly TEXT.
// `# expected-ranks-checked: N` or `all` (the team size): the ranks issued.
//
// Matching. Every finding (each error and each of its notes) must meet an
// expectation and every expectation must be met; a case without expectations
// must be found ok. Each positioned finding must render with its source line
// and a caret under its column; checkRaces must find as many races as
// checkProgram.
//
// What this runner shares with tests/diagnostics/ (the split into cases, the
// RUN line of the file's first case, the expectations, the matching and the
// report) is in tests/hir_expectations.h; here are `check`'s RUN line,
// [[FILE]], the case-wide directives and the reading of the report.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/program_check.h"
#include "analysis/race_check.h"
#include "hir_expectations.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace {

using namespace hostir;
using hirtest::Actual;
using hirtest::Expected;
using hirtest::parseInt;

struct Settings {
  std::vector<int64_t> teams{1};
  int64_t streams = 4;
  std::map<std::string, int64_t> params;
};

constexpr int64_t kAllRanks = -1;  // expected-ranks-checked: all

struct Case : hirtest::CaseBase {  // file: relative to the programs folder, as the report names it
  Settings settings;
  std::optional<std::string> summary;
  std::optional<int64_t> ranksChecked;
};

// `# RUN: ...` after the "RUN:"; the first thing wrong goes to `complain`.
Settings parseRun(std::string_view text, const hirtest::Complain& complain) {
  Settings s;
  std::string problem;
  std::vector<std::string_view> w = hirtest::words(text);
  if (w.empty() || w[0] != "check") {
    complain("expected 'check'");
    return s;
  }
  for (size_t k = 1; k < w.size() && problem.empty(); ++k) {
    if (w[k].starts_with("ranks=")) {
      s.teams.clear();
      std::string_view list = w[k].substr(6);
      while (true) {
        size_t comma = list.find(',');
        auto n = parseInt<int64_t>(list.substr(0, comma));
        if (!n || *n < 1) {
          problem = "expected ranks=N or ranks=N,N,... (N >= 1), got '" + std::string(w[k]) + "'";
          break;
        }
        s.teams.push_back(*n);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    } else if (w[k].starts_with("streams=")) {
      auto n = parseInt<int64_t>(w[k].substr(8));
      if (!n || *n < 1)
        problem = "expected streams=N (N >= 1), got '" + std::string(w[k]) + "'";
      else
        s.streams = *n;
    } else if (w[k] == "set") {
      problem = hirtest::readSet(w, k, s.params);
    } else {
      problem = "unknown setting '" + std::string(w[k]) + "'";
    }
  }
  if (!problem.empty()) complain(problem);
  return s;
}

// The case-wide directives: `expected-summary: TEXT`, `expected-ranks-checked: N|all`.
// False when `comment` is neither.
bool parseCaseDirective(std::string_view comment, Case& c, std::string& problem) {
  if (comment.starts_with("expected-summary:")) {
    if (c.summary) problem = "a case has at most one expected-summary";
    c.summary = std::string(hirtest::trim(comment.substr(17)));
    return true;
  }
  if (comment.starts_with("expected-ranks-checked:")) {
    std::string_view value = hirtest::trim(comment.substr(23));
    auto n = parseInt<int64_t>(value);
    if (c.ranksChecked) problem = "a case has at most one expected-ranks-checked";
    if (value == "all")
      c.ranksChecked = kAllRanks;
    else if (n && *n >= 1)
      c.ranksChecked = *n;
    else
      problem = "expected 'expected-ranks-checked: N' or 'all'";
    return true;
  }
  return false;
}

// The syntax of the programs' files: [[FILE]], the case-wide directives, and
// every case's source ends with a newline.
hirtest::Dialect<Case> dialect() {
  return {.directives = "expected-error, expected-note, expected-summary or expected-ranks-checked",
          .fileSubstitution = true,
          .run = parseRun,
          .directive = parseCaseDirective,
          .finalNewline = [](const Case&) { return hirtest::FinalNewline::Always; }};
}

// Splits a .hir file's text into its cases.
std::vector<Case> splitCases(const std::string& file, std::string_view text) {
  return hirtest::splitCases(file, text, dialect());
}

// Reads formatProgramCheck's text back into findings: each a header line
// "FILE:LINE:COL: error: MESSAGE" (or "FILE: note: MESSAGE" without a
// position), a positioned one followed by its source line and a caret under
// the column. What does not read so goes to `problems`.
std::vector<Actual> readFindings(const std::string& text, const std::string& file, const std::string& source,
                                 std::vector<std::string>& problems) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (!text.empty() && text.back() != '\n') problems.push_back("the report does not end with a newline");
  std::vector<Actual> found;
  for (size_t k = 0; k < lines.size(); ++k) {
    std::string_view rest = lines[k];
    if (!rest.starts_with(file + ":")) {
      problems.push_back("a stray line in the report: " + lines[k]);
      continue;
    }
    rest.remove_prefix(file.size());
    Actual a;
    if (!rest.starts_with(": ")) {  // ":LINE:COL: "
      rest.remove_prefix(1);
      size_t colon = rest.find(':');
      size_t colon2 = colon == std::string_view::npos ? colon : rest.find(':', colon + 1);
      auto line = parseInt<uint32_t>(rest.substr(0, colon));
      auto col = colon2 == std::string_view::npos ? std::nullopt
                                                  : parseInt<uint32_t>(rest.substr(colon + 1, colon2 - colon - 1));
      if (!line || !col) {
        problems.push_back("a header without LINE:COL: " + lines[k]);
        continue;
      }
      a.line = *line;
      a.col = *col;
      rest.remove_prefix(colon2);
    }
    if (rest.starts_with(": error: ")) {
      rest.remove_prefix(9);
    } else if (rest.starts_with(": note: ")) {
      a.note = true;
      rest.remove_prefix(8);
    } else {
      problems.push_back("a header that is neither an error nor a note: " + lines[k]);
      continue;
    }
    a.message = std::string(rest);
    if (a.line) {
      std::string shown = k + 1 < lines.size() ? lines[k + 1] : "";
      std::string caret = k + 2 < lines.size() ? lines[k + 2] : "";
      if (shown != hirtest::lineOf(source, a.line) || caret != std::string(a.col - 1, ' ') + "^")
        problems.push_back("not its source line and a caret under column " + std::to_string(a.col) + " after " +
                           lines[k] + "\n" + shown + "\n" + caret);
      k += 2;
    }
    found.push_back(std::move(a));
  }
  return found;
}

// What a case's check must give besides its findings: an empty report when
// ok, as many races from checkRaces, the expected summary and ranks checked.
void checkTheRest(const Case& c, const ProgramCheck& check, const std::string& text, size_t races, int64_t world,
                  std::vector<std::string>& complaints) {
  if (check.ok() != text.empty())
    complaints.push_back(std::string("the check is ") + (check.ok() ? "ok" : "not ok") + " but its report is " +
                         (text.empty() ? "empty" : "not"));
  if (races != check.races.size())
    complaints.push_back("checkRaces finds " + std::to_string(races) + " race(s), checkProgram " +
                         std::to_string(check.races.size()));
  std::string summary = summarizeFindings(check);
  if (c.summary && summary != *c.summary)
    complaints.push_back("the summary is '" + summary + "', expected '" + *c.summary + "'");
  if (c.ranksChecked) {
    int64_t expected = *c.ranksChecked == kAllRanks ? world : *c.ranksChecked;
    if (check.ranksChecked != expected)
      complaints.push_back(std::to_string(check.ranksChecked) + " rank(s) checked, expected " +
                           std::to_string(expected));
  }
}

// Empty when the case passes on a team of `world`; else one report that
// shows expected against actual.
std::string checkCase(const Case& c, int64_t world) {
  std::string head = c.head() + " on " + std::to_string(world) + " rank(s) and " + std::to_string(c.settings.streams) +
                     " worker streams";
  if (!c.problems.empty()) return hirtest::malformedReport(head, c.problems);
  auto program = parseProgram(c.source);
  if (!program) return head + ": the program must parse:\n" + renderDiagnostic(program.error(), c.file, c.source);
  Bindings bindings{c.settings.params, world};
  if (auto error = verifyProgram(*program, bindings))
    return head + ": the program must verify:\n" + renderDiagnostic(*error, c.file, c.source);
  auto params = bindParams(*program, bindings);
  if (!params) return head + ": the params do not bind: " + params.error().message + "\n";

  ProgramCheck check = checkProgram(*program, *params, world, c.settings.streams);
  std::string text = formatProgramCheck(check, c.file, c.source);
  std::vector<std::string> complaints;
  std::vector<Actual> actual = readFindings(text, c.file, c.source, complaints);
  hirtest::match(actual, c.expected, c.file, complaints);
  // What the passes' race oracle runs finds the same races as `hostir check`.
  size_t races = checkRaces(*program, *params, world, c.settings.streams).size();
  checkTheRest(c, check, text, races, world, complaints);
  return hirtest::report(head, complaints, c, actual, "no finding");
}

// ---------------------------------------------------------------------------
// The .hir files of tests/analysis/programs/.

const std::vector<Case>& folderCases() {
  static const std::vector<Case> cases = hirtest::folderCases(HOSTIR_PROGRAMS_DIR, true, dialect());
  return cases;
}

// A case on one of its teams: the unit of a test.
struct Run {
  const Case* c;
  int64_t world;
};

std::string runName(const Run& r) {
  if (r.c->settings.teams.size() == 1) return r.c->name();
  return r.c->name() + "_" + std::to_string(r.world) + "ranks";
}

void PrintTo(const Run& r, std::ostream* os) { *os << r.c->file << " case " << r.c->index << " on " << r.world; }

std::vector<Run> folderRuns() {
  std::vector<Run> runs;
  for (const Case& c : folderCases())
    for (int64_t world : c.settings.teams) runs.push_back({&c, world});
  return runs;
}

class ProgramFile : public ::testing::TestWithParam<Run> {};

TEST_P(ProgramFile, Case) {
  std::string report = checkCase(*GetParam().c, GetParam().world);
  if (!report.empty()) ADD_FAILURE() << report;
}

INSTANTIATE_TEST_SUITE_P(Hir, ProgramFile, ::testing::ValuesIn(folderRuns()),
                         [](const ::testing::TestParamInfo<Run>& info) { return runName(info.param); });

TEST(ProgramFiles, EveryFolderKeepsItsCases) {
  // The programs converted from the C++ tables; the folders only grow.
  const std::map<std::string, size_t> atLeast = {{"race", 59}, {"cross_rank", 41}, {"uninitialized", 32}};
  std::map<std::string, size_t> counts;
  std::set<std::string> names, keys;
  for (const Case& c : folderCases()) {
    ++counts[std::filesystem::path(c.file).begin()->string()];
    EXPECT_TRUE(names.insert(c.name()).second) << "two cases named " << c.name();
    std::string key = hirtest::codeOf(c) + "|" + std::to_string(c.settings.streams);
    for (int64_t world : c.settings.teams) key += "|" + std::to_string(world);
    for (const auto& [name, value] : c.settings.params) key += "|" + name + "=" + std::to_string(value);
    EXPECT_TRUE(keys.insert(key).second) << c.file << " case " << c.index << " repeats an earlier case";
  }
  for (const auto& [folder, least] : atLeast)
    EXPECT_GE(counts[folder], least) << "cases went missing from " << HOSTIR_PROGRAMS_DIR << "/" << folder;
}

TEST(ProgramFiles, EnoughRacyAndRaceFreePrograms) {
  int racy = 0, free = 0;
  for (const Case& c : folderCases()) {
    if (!c.file.starts_with("race/")) continue;
    (c.expected.empty() ? free : racy)++;
  }
  EXPECT_GE(racy, 22);
  EXPECT_GE(free, 22);
}

// ---------------------------------------------------------------------------
// The runner itself: it must fail what is wrong, or the files prove nothing.

// Two cases the runner passes, one of each kind of finding (a file beside
// programs/, which the runner reads, so that it is not a case there too).
std::string good() { return hostir::testing::testProgramText("analysis/check_programs/runner_two_cases.hir"); }

std::string reportFor(const std::string& text, int index = 1, int64_t world = 1) {
  std::vector<Case> cases = splitCases("t.hir", text);
  EXPECT_GE(static_cast<int>(cases.size()), index);
  return static_cast<int>(cases.size()) >= index ? checkCase(cases[static_cast<size_t>(index - 1)], world) : "";
}

// `good()` with `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to) { return hirtest::edited(good(), from, to); }

TEST(ProgramFilesRunner, SplitsCasesAndReadsTheirDirectives) {
  std::vector<Case> cases = splitCases("t.hir", good());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name(), "t_01");
  EXPECT_EQ(cases[0].settings.streams, 2);
  EXPECT_EQ(cases[1].settings.streams, 1);
  EXPECT_EQ(cases[1].summary, "1 uninitialized read");
  EXPECT_EQ(cases[1].ranksChecked, kAllRanks);
  ASSERT_EQ(cases[0].expected.size(), 3u);
  EXPECT_EQ(cases[0].expected[1].line, 14u);
  EXPECT_NE(cases[0].expected[1].message.find("while copy at t.hir:9:3 on stream(0)"), std::string::npos);
  EXPECT_EQ(cases[0].expected[2].line, 0u);
  EXPECT_EQ(reportFor(good(), 1), "");
  EXPECT_EQ(reportFor(good(), 2), "");
  // The pool of one merges the streams: the race is gone, and expected.
  std::string merged = reportFor(edited("streams=2", "streams=1"));
  EXPECT_NE(merged.find("missing:    t.hir:14:3: error: ...race on 'y'"), std::string::npos) << merged;
  EXPECT_NE(merged.find("actual:\n  no finding"), std::string::npos) << merged;
}

TEST(ProgramFilesRunner, MissingOrWrongExpectationsFail) {
  std::string report = reportFor(edited("  # expected-note@+1 col 3: the other access\n", "\n"));
  EXPECT_NE(report.find("unexpected: t.hir:9:3: note: the other access"), std::string::npos) << report;
  report = reportFor(edited("col 3: the other", "col 4: the other"));
  EXPECT_NE(report.find("missing:    t.hir:9:4: note: ...the other access..."), std::string::npos) << report;
  report = reportFor(edited("[[@LINE-3]]", "[[@LINE-4]]"));
  EXPECT_NE(report.find("missing:    t.hir:14:3: error: ...race on 'y'"), std::string::npos) << report;
  report = reportFor(edited("error@+1 col 7: copy", "error@+2 col 7: copy"), 2);
  EXPECT_NE(report.find("unexpected: t.hir:25:7: error: copy on the main stream"), std::string::npos) << report;
  report = reportFor(edited("wait for stream(0)", "wait for stream(2)"));
  EXPECT_NE(report.find("unexpected: t.hir: note: missing edge"), std::string::npos) << report;
  // A finding where none is expected, and one expected where there is none.
  report = reportFor(edited("  t = allocate(f32[N])\n", "  t = allocate(f32[N], zero=true)\n"), 2);
  EXPECT_NE(report.find("missing:    t.hir:25:7: error:"), std::string::npos) << report;
}

TEST(ProgramFilesRunner, SummaryAndRanksCheckedAreChecked) {
  std::string report = reportFor(edited("1 uninitialized read", "2 uninitialized reads"), 2);
  EXPECT_NE(report.find("the summary is '1 uninitialized read', expected '2 uninitialized reads'"), std::string::npos)
      << report;
  report = reportFor(edited("# expected-ranks-checked: all", "# expected-ranks-checked: 1"), 2, 3);
  EXPECT_EQ(report, "");  // the program never names `rank`: one rank stands for all
  report = reportFor(edited("# expected-ranks-checked: all", "# expected-ranks-checked: 2"), 2, 2);
  EXPECT_NE(report.find("1 rank(s) checked, expected 2"), std::string::npos) << report;
}

TEST(ProgramFilesRunner, ATeamListMakesOneTestPerTeam) {
  std::vector<Case> cases = splitCases("t.hir", edited("# RUN: check streams=2", "# RUN: check ranks=1,2,4 streams=2"));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].settings.teams, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(runName({&cases[0], 2}), "t_01_2ranks");
  EXPECT_EQ(runName({&cases[1], 1}), "t_02");
  // The program must verify on every team.
  std::string report = reportFor("# RUN: check ranks=3\nprogram p(N = 8) {\n  input x : f32[N] shard(0)\n}\n", 1, 3);
  EXPECT_NE(report.find("the program must verify"), std::string::npos) << report;
}

TEST(ProgramFilesRunner, MalformedDirectivesFailTheCase) {
  for (std::string bad : {
           "# expected-nite@+1 col 3: the other access",       // misspelt kind
           "# expected-note@1 col 3: the other access",        // no sign
           "# expected-note@+1 col 3 the other access",        // no colon
           "# expected-note@+1 col 3:",                        // no message
           "# expected-note@+90 col 3: the other access",      // outside its case
           "# expected-note@unknown col 3: the other access",  // a column without a position
           "# expected-note@+1 col 3: at [[@LINE+x]]",         // bad substitution
           "# expected-note@+1 col 3: at [[FILE]",             // unterminated
           "# expected-ranks-checked: some",                   // neither a count nor all
       }) {
    std::string report = reportFor(edited("# expected-note@+1 col 3: the other access", bad));
    EXPECT_NE(report.find("malformed case"), std::string::npos) << bad << "\n" << report;
  }
  for (std::string run : {"# RUN: verify\n", "# RUN: check ranks=0\n", "# RUN: check ranks=2,\n",
                          "# RUN: check streams=x\n", "# RUN: check set M\n", "# RUN: check colour=red\n", "\n"}) {
    std::string report = reportFor(edited("# RUN: check streams=2\n", run));
    EXPECT_NE(report.find("malformed case"), std::string::npos) << run << report;
  }
}

}  // namespace
