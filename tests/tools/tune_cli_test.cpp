// `hostir tune` as a user runs it: the table, the best line against the
// table and against `hostir simulate`, the cartesian product with worker
// pool sizes, failing bindings, and the command line's errors.
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "tests/cli_runner.h"

namespace hostir::testing {
namespace {

using TuneCli = CliTest;

// The table tune prints: its column names, its rows (cells split at
// whitespace; a failed row's reason is one long cell run) and the best line.
struct TuneTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::string best;  // after "best: "
};

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Fails the test when the output is not a header line, the table, and (when `withBest`) the best line.
TuneTable parseTable(const std::string& out, bool withBest = true) {
  std::istringstream in(out);
  std::string line;
  TuneTable table;
  EXPECT_TRUE(std::getline(in, line) && line.rfind("tune: ", 0) == 0) << out;
  EXPECT_TRUE(std::getline(in, line)) << out;
  table.columns = words(line);
  while (std::getline(in, line)) {
    if (line.rfind("best: ", 0) == 0) {
      table.best = line.substr(6);
      EXPECT_FALSE(std::getline(in, line)) << "the best line is the last: " << out;
      break;
    }
    table.rows.push_back(words(line));
  }
  EXPECT_EQ(!table.best.empty(), withBest) << out;
  return table;
}

// The cell of `row` under `column`.
std::string cell(const TuneTable& table, const std::vector<std::string>& row, const std::string& column) {
  for (size_t i = 0; i < table.columns.size() && i < row.size(); ++i)
    if (table.columns[i] == column) return row[i];
  ADD_FAILURE() << "no column " << column;
  return {};
}

bool failed(const TuneTable& table, const std::vector<std::string>& row) {
  return cell(table, row, "predicted_ms") == "failed:";
}

// "S=4 predicted_ms=1.2" as NAME -> VALUE, in order.
std::vector<std::pair<std::string, std::string>> assignments(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& word : words(line)) {
    size_t eq = word.find('=');
    out.emplace_back(word.substr(0, eq), eq == std::string::npos ? "" : word.substr(eq + 1));
  }
  return out;
}

// The median_ms of simulate's `predicted:` line, as printed.
std::string simulatedMilliseconds(const std::string& out) {
  static const std::regex line(R"(predicted: median_ms=([0-9.]+) )");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, line)) << out;
  return m.empty() ? "" : m[1].str();
}

TEST_F(TuneCli, TheIssueCommandPicksTheFastestRowAsSimulatePredictsIt) {
  const std::string common =
      example("row_parallel_linear.hir") + " --machine h100-nvlink --ranks 8 --passes assign-streams";
  auto r = run("tune " + common + " --param S=1,2,4,8");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("machine 'h100-nvlink', 8 ranks, passes: assign-streams"), std::string::npos) << r.out;
  TuneTable table = parseTable(r.out);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"S", "predicted_ms", "compute_ms", "comm_ms", "exposed_comm_ms",
                                                     "E", "speedup_vs_S1"}));
  ASSERT_EQ(table.rows.size(), 4u) << r.out;
  std::string fastestS, fastestMs;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    ASSERT_EQ(row.size(), table.columns.size()) << r.out;
    EXPECT_EQ(cell(table, row, "S"), std::to_string(1 << i));
    std::string ms = cell(table, row, "predicted_ms");
    EXPECT_GT(std::stod(ms), 0);
    if (fastestMs.empty() || std::stod(ms) < std::stod(fastestMs)) fastestS = cell(table, row, "S"), fastestMs = ms;
  }
  auto best = assignments(table.best);
  ASSERT_EQ(best.size(), 3u) << table.best;
  EXPECT_EQ(best[0], (std::pair<std::string, std::string>{"S", fastestS}));
  EXPECT_EQ(best[1], (std::pair<std::string, std::string>{"predicted_ms", fastestMs}));
  EXPECT_EQ(best[2].first, "speedup_vs_S1");

  // Independently: simulate predicts the same time for the best binding.
  auto simulated = run("simulate " + common + " --set S=" + fastestS);
  ASSERT_EQ(simulated.exitCode, 0) << simulated.err;
  EXPECT_EQ(simulatedMilliseconds(simulated.out), fastestMs) << simulated.out;
}

// With overlap, each row says the schedule overlap chose for the loop at
// that binding, as `hostir opt --remarks` reports it for the same binding.
TEST_F(TuneCli, WithOverlapEachRowSaysTheScheduleOverlapChose) {
  const std::string common = example("row_parallel_linear.hir") +
                             " --machine h100-nvlink --ranks 8 --set M=16384 --set K=8192 --set N=8192 "
                             "--passes overlap";
  auto r = run("tune " + common + " --param S=1,4,8");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  TuneTable table = parseTable(r.out);
  ASSERT_EQ(table.columns.back(), "schedule") << r.out;
  ASSERT_EQ(table.rows.size(), 3u) << r.out;
  static const std::regex decision(
      R"(overlap: loop (rewritten|left as it is): (?:iterations on|as a) ([0-9a-z ]+?) predicted)");
  for (const auto& row : table.rows) {
    const std::string s = cell(table, row, "S");
    auto opt = run("opt " + common + " --remarks --set S=" + s);
    ASSERT_EQ(opt.exitCode, 0) << opt.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(opt.err, m, decision)) << opt.err;
    const std::string chosen = m[1].str() == "rewritten" ? m[2].str() : "as written";
    // The schedule cell is the rest of the row, after the figures.
    std::string schedule;
    for (size_t i = table.columns.size() - 1; i < row.size(); ++i) schedule += (schedule.empty() ? "" : " ") + row[i];
    EXPECT_EQ(schedule, "line 8: " + chosen) << r.out;
  }
  EXPECT_NE(table.best.find(" schedule: line 8: "), std::string::npos) << r.out;
}

// A profile from a pipe (`--machine <(...)`, a FIFO) can be read only
// once, so tune reads it once for every binding.
TEST_F(TuneCli, AProfileFromAPipeServesEveryBinding) {
  const std::string profile = (std::filesystem::path(HOSTIR_SOURCE_DIR) / "profiles" / "h100-nvlink.json").string();
  const std::string common = example("row_parallel_linear.hir") + " --ranks 2 --passes assign-streams --param S=1,2,4";
  auto fromFile = run("tune " + common + " --machine " + profile);
  ASSERT_EQ(fromFile.exitCode, 0) << fromFile.err;
  const std::string fifo = (dir_ / "profile.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // (The writer gives up after 30 s should hostir never open the FIFO.)
  auto piped = run("tune " + common + " --machine " + fifo,
                   "(timeout 30 sh -c 'cat " + profile + " > " + fifo + "' &) ; sleep 0.2; ");
  ASSERT_EQ(piped.exitCode, 0) << piped.err;
  TuneTable fileTable = parseTable(fromFile.out), pipeTable = parseTable(piped.out);
  ASSERT_EQ(pipeTable.rows.size(), 3u) << piped.out;
  EXPECT_EQ(pipeTable.rows, fileTable.rows);
  EXPECT_EQ(pipeTable.best, fileTable.best);
}

TEST_F(TuneCli, TwoParamsAndTwoPoolSizesAreTheirCartesianProduct) {
  auto r =
      run("tune " + example("row_parallel_linear.hir") +
          " --machine h100-nvlink --ranks 2 --param S=1,2 --param M=128,256 --streams 1,4 --passes assign-streams");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  TuneTable table = parseTable(r.out);
  ASSERT_GE(table.columns.size(), 4u) << r.out;
  EXPECT_EQ((std::vector<std::string>(table.columns.begin(), table.columns.begin() + 4)),
            (std::vector<std::string>{"S", "M", "streams", "predicted_ms"}));
  ASSERT_EQ(table.rows.size(), 8u) << r.out;
  // The first --param varies slowest, the pool size fastest.
  std::vector<std::string> order;
  for (const auto& row : table.rows)
    order.push_back(cell(table, row, "S") + "," + cell(table, row, "M") + "," + cell(table, row, "streams"));
  EXPECT_EQ(order, (std::vector<std::string>{"1,128,1", "1,128,4", "1,256,1", "1,256,4", "2,128,1", "2,128,4",
                                             "2,256,1", "2,256,4"}));
  auto best = assignments(table.best);
  ASSERT_EQ(best.size(), 5u) << table.best;
  EXPECT_EQ(best[0].first, "S");
  EXPECT_EQ(best[1].first, "M");
  EXPECT_EQ(best[2].first, "streams");
  EXPECT_EQ(best[3].first, "predicted_ms");
  EXPECT_EQ(best[4].first, "speedup_vs_S1");
}

// Each row's speedup_vs_S1 is the predicted time of the same binding at
// S=1 over its own: from the S=1 row where the table has one, else from a
// prediction of its own, which simulate reproduces.
TEST_F(TuneCli, EveryRowShowsItsSpeedupAgainstTheUnchunkedProgram) {
  const std::string common =
      example("row_parallel_linear.hir") + " --machine h100-nvlink --ranks 8 --passes assign-streams";
  auto r = run("tune " + common + " --param S=1,2,4 --param M=256,2048");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  TuneTable table = parseTable(r.out);
  ASSERT_EQ(table.rows.size(), 6u) << r.out;
  std::map<std::string, double> unchunked;  // M -> the S=1 row's time
  for (const auto& row : table.rows)
    if (cell(table, row, "S") == "1") unchunked[cell(table, row, "M")] = std::stod(cell(table, row, "predicted_ms"));
  for (const auto& row : table.rows) {
    const double ms = std::stod(cell(table, row, "predicted_ms"));
    const double expected = unchunked.at(cell(table, row, "M")) / ms;
    // The printed times have 4 decimals, the speedup 2.
    EXPECT_NEAR(std::stod(cell(table, row, "speedup_vs_S1")), expected, 0.006) << r.out;
  }
  // Without S=1 in the table: each row's own S=1 prediction, as simulate gives it.
  auto without = run("tune " + common + " --param S=4");
  ASSERT_EQ(without.exitCode, 0) << without.err;
  TuneTable four = parseTable(without.out);
  ASSERT_EQ(four.rows.size(), 1u) << without.out;
  auto one = run("simulate " + common + " --set S=1");
  ASSERT_EQ(one.exitCode, 0) << one.err;
  const double expected =
      std::stod(simulatedMilliseconds(one.out)) / std::stod(cell(four, four.rows[0], "predicted_ms"));
  EXPECT_NEAR(std::stod(cell(four, four.rows[0], "speedup_vs_S1")), expected, 0.006) << without.out;
  // A program without a chunk count has no such column.
  auto unchunkedProgram =
      run("tune " + example("broadcast.hir") + " --machine h100-nvlink --ranks 2 --param M=192,384");
  ASSERT_EQ(unchunkedProgram.exitCode, 0) << unchunkedProgram.err;
  EXPECT_EQ(unchunkedProgram.out.find("speedup_vs_S1"), std::string::npos) << unchunkedProgram.out;
}

TEST_F(TuneCli, ABindingThatDoesNotVerifyIsReportedAndSkipped) {
  // x is sharded over the ranks along K: 10 columns do not divide over 4 ranks.
  auto r = run("tune " + example("row_parallel_linear.hir") + " --machine h100-nvlink --ranks 4 --param K=512,10,256");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  TuneTable table = parseTable(r.out);
  ASSERT_EQ(table.rows.size(), 3u) << r.out;
  EXPECT_FALSE(failed(table, table.rows[0]));
  EXPECT_TRUE(failed(table, table.rows[1])) << r.out;
  EXPECT_FALSE(failed(table, table.rows[2]));
  EXPECT_NE(r.out.find("does not divide evenly over 4 ranks"), std::string::npos) << r.out;
  EXPECT_NE(assignments(table.best)[0].second, "10") << r.out;
  EXPECT_EQ(occurrences(r.out, "\n"), 6u) << "a failed row is one line: " << r.out;
}

TEST_F(TuneCli, ABindingTheProgramCheckRefusesIsReportedAndSkipped) {
  // No chunks write nothing: the output is never written, as `run` would refuse it.
  auto r = run("tune " + example("row_parallel_linear.hir") + " --machine h100-nvlink --param S=0,2");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  TuneTable table = parseTable(r.out);
  ASSERT_EQ(table.rows.size(), 2u) << r.out;
  EXPECT_TRUE(failed(table, table.rows[0])) << r.out;
  EXPECT_NE(r.out.find("not fully written"), std::string::npos) << r.out;
  EXPECT_EQ(assignments(table.best)[0].second, "2") << r.out;
}

TEST_F(TuneCli, EveryBindingFailingIsAProgramError) {
  auto r = run("tune " + example("row_parallel_linear.hir") + " --machine h100-nvlink --ranks 4 --param K=6,10");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  TuneTable table = parseTable(r.out, /*withBest=*/false);
  ASSERT_EQ(table.rows.size(), 2u) << r.out;
  EXPECT_TRUE(failed(table, table.rows[0]) && failed(table, table.rows[1])) << r.out;
  EXPECT_NE(r.err.find("every binding failed (2 tried)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("row_parallel_linear.hir:"), std::string::npos) << "the first error in full: " << r.err;
}

TEST_F(TuneCli, ABadCommandLineIsAUsageError) {
  const std::string program = example("row_parallel_linear.hir");
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--machine h100-nvlink --param Q=1,2", "program 'row_parallel_linear' has no parameter 'Q'"},
           {"--machine h100-nvlink --param S", "--param expects NAME=V1,V2,..., got 'S'"},
           {"--machine h100-nvlink --param S=", "--param expects NAME=V1,V2,..., got 'S='"},
           {"--machine h100-nvlink --param S=1,,2", "--param S: '' is not a non-negative integer"},
           {"--machine h100-nvlink --param S=1,x", "--param S: 'x' is not a non-negative integer"},
           {"--machine h100-nvlink --param S=1 --param S=2", "--param S is given twice"},
           {"--machine h100-nvlink --param S=1,2 --set S=4", "S is also bound with --set"},
           {"--machine h100-nvlink --param S=1 --streams 2,2", "the pool size 2 is given twice"},
           {"--param S=1,2", "--machine is required"},
       }) {
    auto r = run("tune " + program + " " + c.args);
    EXPECT_EQ(r.exitCode, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

}  // namespace
}  // namespace hostir::testing
