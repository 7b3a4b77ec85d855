// `hostir tune`: every binding of the tuned parameters (the cartesian
// product of their values, in the order given, times the worker pool sizes
// of --streams) bound, verified, put through --passes and predicted as
// `simulate` predicts it (api::simulate). It prints one row per
// binding, a binding that fails saying why in its row, then the fastest:
// `best: S=4 predicted_ms=X`.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "hostir/defaults.h"
#include "hostir/error.h"
#include "hostir/execution.h"
#include "hostir/program.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/unchunked_speedup.h"

namespace hostir::tool {
namespace {

// Bindings one tune simulates at most: each costs a verification, the
// passes, a race proof and three simulations, and a table of thousands of
// rows is no longer read.
constexpr size_t kMaxBindings = 4096;

struct TunedParam {
  std::string name;
  std::vector<int64_t> values;
};

ToolError usageError(std::string text) { return ToolError{kUsageError, "error: " + std::move(text) + "\n"}; }

// Parses `--param NAME=V1,V2,...` items; on failure why (a usage error), as parseSettings reports --set's.
ToolResult<std::vector<TunedParam>> parseTunedParams(const std::vector<std::string>& items) {
  std::vector<TunedParam> tuned;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty() || eq + 1 == item.size())
      return usageError(fmt::format("--param expects NAME=V1,V2,..., got '{}'", item));
    TunedParam param{name, {}};
    std::string_view list = std::string_view(item).substr(eq + 1);
    while (true) {
      size_t comma = list.find(',');
      std::string_view value = list.substr(0, comma);
      int64_t number = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec != std::errc() || end != value.data() + value.size() || value.empty() || number < 0)
        return usageError(
            fmt::format("--param {}: '{}' is not a non-negative integer that fits in 64 bits", name, value));
      if (std::find(param.values.begin(), param.values.end(), number) != param.values.end())
        return usageError(fmt::format("--param {}: the value {} is given twice", name, number));
      param.values.push_back(number);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    for (const TunedParam& earlier : tuned)
      if (earlier.name == name) return usageError(fmt::format("--param {} is given twice; list its values once", name));
    tuned.push_back(std::move(param));
  }
  return tuned;
}

// The tuned names against the program's params and --set (usage errors: the command line names them).
ToolStatus checkTunedNames(const std::vector<TunedParam>& tuned, const api::Params& settings,
                           const api::Program& program) {
  const std::vector<std::string> names = program.paramNames();
  for (const TunedParam& param : tuned) {
    if (std::find(names.begin(), names.end(), param.name) == names.end())
      return usageError(fmt::format("--param {}: program '{}' has no parameter '{}' (its parameters: {})", param.name,
                                    program.name(), param.name,
                                    names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    if (settings.count(param.name))
      return usageError(
          fmt::format("--param {}: {} is also bound with --set; tune it or set it, not both", param.name, param.name));
  }
  return std::nullopt;
}

// The worker pool sizes to try: --streams, or the default pool.
ToolResult<std::vector<int64_t>> poolSizes(const TuneOptions& o) {
  if (o.streamCounts.empty()) return std::vector<int64_t>{o.api.streams};
  for (size_t i = 0; i < o.streamCounts.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.streamCounts[i] == o.streamCounts[j])
        return usageError(fmt::format("--streams: the pool size {} is given twice", o.streamCounts[i]));
  return o.streamCounts;
}

// One point of the product: a value per tuned param (parallel to them) and a pool size.
struct Binding {
  std::vector<int64_t> values;
  int64_t streams = kDefaultStreams;
};

// The cartesian product, the first --param varying slowest and the pool size fastest.
ToolResult<std::vector<Binding>> enumerateBindings(const std::vector<TunedParam>& tuned,
                                                   const std::vector<int64_t>& pools) {
  size_t count = pools.size();
  for (const TunedParam& param : tuned) {
    if (count > kMaxBindings / param.values.size())
      return usageError(fmt::format("--param: more than {} bindings to try; give fewer values", kMaxBindings));
    count *= param.values.size();
  }
  if (count > kMaxBindings)
    return usageError(fmt::format("--param: more than {} bindings to try; give fewer values", kMaxBindings));
  std::vector<Binding> bindings;
  std::vector<size_t> digits(tuned.size(), 0);
  for (size_t n = 0; n < count / pools.size(); ++n) {
    Binding binding;
    for (size_t p = 0; p < tuned.size(); ++p) binding.values.push_back(tuned[p].values[digits[p]]);
    for (int64_t pool : pools) {
      binding.streams = pool;
      bindings.push_back(binding);
    }
    for (size_t p = tuned.size(); p-- > 0;) {  // the odometer: the last param turns first
      if (++digits[p] < tuned[p].values.size()) break;
      digits[p] = 0;
    }
  }
  return bindings;
}

// A binding's error in one short line: the first line of the rendered error,
// "FILE:LINE:COL: error: MESSAGE" told as "MESSAGE (line LINE)".
std::string shortReason(const ToolError& error, const std::string& path) {
  std::string_view line = std::string_view(error.text).substr(0, error.text.find('\n'));
  if (line.substr(0, path.size() + 1) == path + ":") line.remove_prefix(path.size() + 1);
  std::string lineNumber;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::all_of(line.begin(), line.begin() + colon, [](char c) { return c >= '0' && c <= '9'; })) {
    lineNumber = std::string(line.substr(0, colon));
    line.remove_prefix(colon + 1);
    size_t column = line.find(':');
    if (column != std::string_view::npos) line.remove_prefix(column + 1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  }
  if (line.substr(0, 7) == "error: ") line.remove_prefix(7);
  return lineNumber.empty() ? std::string(line) : fmt::format("{} (line {})", line, lineNumber);
}

// A binding's outcome: its prediction, or the error that explains why there is none.
struct Outcome {
  Binding binding;
  std::optional<api::Prediction> prediction;
  ToolError failure;
  std::optional<double> speedup;  // against the same binding at S=1 (unchunked_speedup.h)
};

struct TuneContext {
  const TuneOptions& options;
  const api::Program& program;
  const api::Machine& machine;  // read once: a pipe (`--machine <(...)`) can be read only once
  const api::Params& settings;
  const std::vector<TunedParam>& tuned;
  bool severalPools = false;
  bool chunked = false;  // the program has a chunk count: the table shows speedup_vs_S1
};

// "S=4 streams=2": the binding as --set and --streams would name it.
std::string describe(const TuneContext& c, const Binding& binding) {
  std::string text;
  for (size_t p = 0; p < c.tuned.size(); ++p)
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", c.tuned[p].name, binding.values[p]);
  if (c.severalPools) text += fmt::format(" streams={}", binding.streams);
  return text;
}

ToolResult<api::Prediction> predictBinding(const TuneContext& c, const Binding& binding) {
  api::SimulateOptions options = c.options.api;
  options.params = c.settings;
  for (size_t p = 0; p < c.tuned.size(); ++p) options.params[c.tuned[p].name] = binding.values[p];
  options.streams = binding.streams;
  std::string remarks;
  if (c.options.remarks) options.onRemark = [&remarks](const std::string& remark) { remarks += remark; };
  options.onWarning = [&remarks](const std::string& warning) { remarks += warning; };
  ToolResult<api::Prediction> prediction = ToolError{};
  try {
    prediction = api::simulate(c.program, c.machine, options);
  } catch (const api::Error& error) {
    prediction = toolError(error);
  }
  // Each binding's remarks under its name: the passes decide differently for each.
  if (!remarks.empty()) std::cerr << "tune: " << describe(c, binding) << ":\n" << remarks;
  return prediction;
}

// Each outcome's speedup against its binding with S at 1: that binding's
// row where the table has it, else a prediction of its own.
void addSpeedups(const TuneContext& c, std::vector<Outcome>& outcomes) {
  auto tunedS =
      std::find_if(c.tuned.begin(), c.tuned.end(), [](const TunedParam& p) { return p.name == kChunkCountParam; });
  const size_t sIndex = static_cast<size_t>(tunedS - c.tuned.begin());
  for (Outcome& outcome : outcomes) {
    if (!outcome.prediction) continue;
    std::optional<double> unchunked;
    if (tunedS != c.tuned.end()) {
      Binding reference = outcome.binding;
      reference.values[sIndex] = 1;
      for (const Outcome& other : outcomes)
        if (other.prediction && other.binding.values == reference.values && other.binding.streams == reference.streams)
          unchunked = other.prediction->medianMs;
    }
    if (!unchunked) {
      api::SimulateOptions options = c.options.api;
      options.params = c.settings;
      for (size_t p = 0; p < c.tuned.size(); ++p) options.params[c.tuned[p].name] = outcome.binding.values[p];
      options.streams = outcome.binding.streams;
      unchunked = unchunkedMs(c.program, c.machine, options);
    }
    if (unchunked && outcome.prediction->medianMs > 0) outcome.speedup = *unchunked / outcome.prediction->medianMs;
  }
}

std::string milliseconds(double ms) { return fmt::format("{:.4f}", ms); }

// The predicted time as printed: ties are judged on what the table shows,
// so that the earlier of two rows that read the same wins.
int64_t printedTenthsOfMicroseconds(double ms) { return std::llround(ms * 1e4); }

// "line 8: 2 worker streams; line 20: as written": what the passes chose
// for each loop they weighed.
std::string scheduleOf(const api::Prediction& p) { return fmt::format("{}", fmt::join(p.schedules, "; ")); }

bool anySchedule(const std::vector<Outcome>& outcomes) {
  for (const Outcome& outcome : outcomes)
    if (outcome.prediction && !outcome.prediction->schedules.empty()) return true;
  return false;
}

std::string formatTable(const TuneContext& c, const std::vector<Outcome>& outcomes) {
  std::vector<std::string> header;
  for (const TunedParam& param : c.tuned) header.push_back(param.name);
  if (c.severalPools) header.push_back("streams");
  const size_t keyColumns = header.size();
  for (const char* figure : {"predicted_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "E"}) header.push_back(figure);
  if (c.chunked) header.push_back("speedup_vs_S1");
  // The schedule comes last, left-aligned: it is words, not a figure.
  const bool schedules = anySchedule(outcomes);
  if (schedules) header.push_back("schedule");

  std::vector<std::vector<std::string>> rows;
  for (const Outcome& outcome : outcomes) {
    std::vector<std::string> row;
    for (int64_t value : outcome.binding.values) row.push_back(std::to_string(value));
    if (c.severalPools) row.push_back(std::to_string(outcome.binding.streams));
    if (const auto& p = outcome.prediction) {
      row.insert(row.end(), {milliseconds(p->medianMs), milliseconds(p->computeMs), milliseconds(p->commMs),
                             milliseconds(p->exposedCommMs), fmt::format("{:.2f}", p->overlapEfficiency)});
      if (c.chunked) row.push_back(outcome.speedup ? fmt::format("{:.2f}", *outcome.speedup) : "-");
      if (schedules) row.push_back(scheduleOf(*p));
    } else {
      row.push_back("failed: " + shortReason(outcome.failure, c.program.sourceName()));
    }
    rows.push_back(std::move(row));
  }

  std::vector<size_t> widths(header.size());
  for (size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& row : rows)
    if (row.size() == header.size())  // a failure's reason spans the figures' columns
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    else
      for (size_t i = 0; i < keyColumns; ++i) widths[i] = std::max(widths[i], row[i].size());

  auto formatRow = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      bool reason = i == keyColumns && row.size() < header.size();
      bool words = schedules && i + 1 == header.size();
      line += reason || words ? row[i] : fmt::format("{:>{}}", row[i], widths[i]);
    }
    return line + "\n";
  };
  std::string out = formatRow(header);
  for (const auto& row : rows) out += formatRow(row);
  return out;
}

int tune(const TuneOptions& o) {
  auto fail = [](const ToolError& error) {
    std::cerr << error.text;
    return static_cast<int>(error.exitCode);
  };
  auto tuned = parseTunedParams(o.tuned);
  if (!tuned) return fail(tuned.error());
  auto settings = parseSettings(o.settings);
  if (!settings) return fail(settings.error());
  auto pools = poolSizes(o);
  if (!pools) return fail(pools.error());
  auto bindings = enumerateBindings(*tuned, *pools);
  if (!bindings) return fail(bindings.error());
  const ModelOptions model = o.model();
  if (auto error = checkPassNames(o.api.passes, {}, &model)) return fail(*error);
  std::optional<api::Program> program;
  std::optional<api::Machine> machine;
  try {
    // The profile once, so that a bad one is one error rather than every binding's.
    machine = api::Machine::load(o.machine);
    program = api::Program::fromFile(o.file);
  } catch (const api::Error& error) {
    return fail(toolError(error));
  }
  if (auto error = checkTunedNames(*tuned, *settings, *program)) return fail(*error);

  TuneContext context{o, *program, *machine, *settings, *tuned, pools->size() > 1, hasChunkCount(*program)};
  std::string out =
      fmt::format("tune: program '{}' ({}), machine {}, {} rank{}, passes: {}", program->name(), program->sourceName(),
                  machineShown(machine->name(), o.machine), o.api.ranks, o.api.ranks == 1 ? "" : "s",
                  o.api.passes.empty() ? "none" : fmt::format("{}", fmt::join(o.api.passes, ",")));
  if (!context.severalPools) out += fmt::format(", {} worker stream{}", pools->front(), pools->front() == 1 ? "" : "s");
  out += "\n";

  std::vector<Outcome> outcomes;
  const Outcome* best = nullptr;
  const Outcome* firstFailure = nullptr;
  outcomes.reserve(bindings->size());  // `best` points into it
  for (const Binding& binding : *bindings) {
    Outcome& outcome = outcomes.emplace_back(Outcome{binding, std::nullopt, {}});
    auto prediction = predictBinding(context, binding);
    if (!prediction) {
      outcome.failure = prediction.error();
      if (!firstFailure) firstFailure = &outcome;
      continue;
    }
    outcome.prediction = std::move(*prediction);
    if (!best || printedTenthsOfMicroseconds(outcome.prediction->medianMs) <
                     printedTenthsOfMicroseconds(best->prediction->medianMs))
      best = &outcome;
  }
  if (context.chunked) addSpeedups(context, outcomes);
  out += formatTable(context, outcomes);
  if (!best) {
    std::cout << out;
    std::cerr << firstFailure->failure.text
              << fmt::format("error: every binding failed ({} tried); the first one's error is above\n",
                             outcomes.size());
    return kProgramError;
  }
  out += fmt::format("best: {} predicted_ms={}", describe(context, best->binding),
                     milliseconds(best->prediction->medianMs));
  if (best->speedup) out += fmt::format(" speedup_vs_S1={:.2f}", *best->speedup);
  if (!best->prediction->schedules.empty()) out += fmt::format(" schedule: {}", scheduleOf(*best->prediction));
  out += "\n";
  std::cout << out;
  return kSuccess;
}

}  // namespace

int runTune(const TuneOptions& o) { return tune(o); }

}  // namespace hostir::tool
