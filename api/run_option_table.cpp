#include "hostir/run_option_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <variant>

#include "hostir/catalog.h"
#include "hostir/error.h"
#include "hostir/limits.h"

namespace hostir::api {
namespace {

// The RunOptions member a row sets; `inverted` flags set it to the opposite
// (`--unchecked` clears `checked`).
using Field = std::variant<int64_t RunOptions::*, int RunOptions::*, uint64_t RunOptions::*, uint32_t RunOptions::*,
                           double RunOptions::*, bool RunOptions::*, std::string RunOptions::*>;

struct Entry {
  RunOptionRow row;
  Field field;
  bool inverted = false;
};

template <typename T>
constexpr uint64_t maxOf() {
  return static_cast<uint64_t>(std::numeric_limits<T>::max());
}

Entry integer(std::string name, Field field, uint64_t lo, uint64_t hi, std::string help, std::string typeName = "") {
  RunOptionRow row;
  row.name = std::move(name);
  row.type = RunOptionType::Integer;
  row.minInteger = lo;
  row.maxInteger = hi;
  row.typeName = std::move(typeName);
  row.help = std::move(help);
  return Entry{std::move(row), field};
}

Entry number(std::string name, Field field, double lo, double hi, std::string help, std::string typeName) {
  RunOptionRow row;
  row.name = std::move(name);
  row.type = RunOptionType::Number;
  row.minNumber = lo;
  row.maxNumber = hi;
  row.typeName = std::move(typeName);
  row.help = std::move(help);
  return Entry{std::move(row), field};
}

Entry flag(std::string name, Field field, std::string help, bool inverted = false) {
  RunOptionRow row;
  row.name = std::move(name);
  row.type = RunOptionType::Flag;
  row.help = std::move(help);
  return Entry{std::move(row), field, inverted};
}

Entry text(std::string name, Field field, RunOptionType type, std::string help, std::string typeName,
           std::vector<std::string> choices = {}) {
  RunOptionRow row;
  row.name = std::move(name);
  row.type = type;
  row.choices = std::move(choices);
  row.typeName = std::move(typeName);
  row.help = std::move(help);
  return Entry{std::move(row), field};
}

std::string shippedProfiles() {
  std::string out;
  for (const std::string& name : machineProfiles()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::vector<Entry> makeTable() {
  using O = RunOptions;
  const std::vector<std::string> communicators = {"auto", "nccl", "copy-engine"};
  std::vector<std::string> backends = backendNames();
  return {
      integer("ranks", &O::ranks, 1, kMaxRanks,
              "Team size (ranks as threads of this process; under mpirun the team is MPI's)"),
      integer("streams", &O::streams, 1, kMaxStreams, "Size of the worker stream pool (stream(e) is slot e mod P)"),
      text("machine", &O::machine, RunOptionType::Path,
           "A shipped profile (" + shippedProfiles() +
               ") or a profile file that `hostir calibrate` wrote; needed by passes that consult the cost model "
               "(overlap)",
           "NAME|FILE.json"),
      number("min_gain", &O::minimumGain, kMinMinimumGain, kMaxMinimumGain,
             "The predicted gain, as a fraction of the time before, that a scheduling change must reach", "FRACTION"),
      text("backend", &O::backend, RunOptionType::Choice,
           "auto (a device backend where one can serve, else the CPU), or a backend by name", "", backends),
      text("communicator", &O::communicator, RunOptionType::Choice,
           "What carries the collectives: auto (the host team's on the CPU; NCCL on CUDA, or copy engines when "
           "in-process ranks outnumber the devices), nccl, or copy-engine (peer copies and small reduction kernels; "
           "ranks that are threads of one process, several may share a GPU)",
           "", communicators),
      integer("seed", &O::seed, 0, maxOf<uint64_t>(), "Seed for the inputs not given"),
      flag("fill_missing", &O::fillMissingInputs,
           "Fill the inputs not given from the seed (without it they are an error; given no input at all, every "
           "input is filled from the seed)"),
      flag("race_check", &O::raceCheck, "Check the work for stream races as it is issued (report each race)"),
      integer("warmup", &O::warmup, 0, kMaxRuns, "Untimed runs before the timed ones"),
      integer("repeat", &O::repeat, 0, kMaxRuns, "Timed runs (0: one run, untimed on the command line)"),
      text("trace", &O::tracePath, RunOptionType::Path,
           "Write the last run's timeline (every rank, stream and host issue) as a Chrome trace for Perfetto",
           "FILE.json"),
      integer("trace_limit", &O::traceLimitMiB, 1, kMaxTraceLimitMiB,
              "Largest trace file, in MiB; recording stops there and the trace says so", "MIB"),
      integer("cores_per_rank", &O::coresPerRank, 0, kMaxCoresPerRank,
              "CPU backend: computations and communications a rank runs at once; streams beyond that take turns in "
              "issue order (0: the node's cores divided by its ranks)"),
      number("comm_timeout", &O::commTimeoutSeconds, kMinCommTimeoutSeconds, kMaxCommTimeoutSeconds,
             "Seconds before a communication that has not completed is reported and the team aborted", "SECONDS"),
      flag("unchecked", &O::checked,
           "Skip the proof that the program is race-free and issues the same communications on every rank (for "
           "programs too large to check; the verifier still runs, and communications are matched across ranks "
           "while the program runs)",
           /*inverted=*/true),
      flag("graph", &O::graph, "CUDA: capture the program once into a CUDA graph and replay it each repetition"),
      integer("inject_delays", &O::injectDelaysMicros, 0, kMaxInjectedDelayMicros,
              "Testing aid: sleep up to this many microseconds before every task and communication", "MICROSECONDS"),
  };
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = makeTable();
  return table;
}

const Entry& entryOf(const RunOptionRow& row) {
  for (const Entry& entry : entries())
    if (entry.row.name == row.name) return entry;
  throw Error(ErrorKind::Usage, "no run option " + row.name, "error: no run option " + row.name);
}

std::string boundText(uint64_t bound) {
  // 2^64 - 1 rather than its 20 digits.
  if (bound == std::numeric_limits<uint64_t>::max()) return "2^64 - 1";
  return std::to_string(bound);
}

[[noreturn]] void refuse(const RunOptionRow& row, const std::string& given) {
  std::string message = fmt::format("{}: must be {}, got '{}'", row.name, row.wanted(), given);
  throw Error(ErrorKind::Usage, message, "error: " + message);
}

bool parseUnsigned(const std::string& text, uint64_t& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool parseFinite(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
}

// Whether `value` is one of the row's values; NaN never is.
bool admits(const RunOptionRow& row, double value) { return value >= row.minNumber && value <= row.maxNumber; }
bool admits(const RunOptionRow& row, uint64_t value) { return value >= row.minInteger && value <= row.maxInteger; }
bool admits(const RunOptionRow& row, const std::string& value) {
  if (row.type == RunOptionType::Path) return !value.empty();
  if (row.type == RunOptionType::Choice)
    return std::find(row.choices.begin(), row.choices.end(), value) != row.choices.end();
  return true;
}

}  // namespace

std::string RunOptionRow::flag() const {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string RunOptionRow::wanted() const {
  switch (type) {
    case RunOptionType::Integer:
      return fmt::format("an integer from {} to {}", boundText(minInteger), boundText(maxInteger));
    case RunOptionType::Number:
      return fmt::format("a number{} from {:g} to {:g}", typeName == "SECONDS" ? " of seconds" : "", minNumber,
                         maxNumber);
    case RunOptionType::Flag: return "true or false";
    case RunOptionType::Text: return "a string";
    case RunOptionType::Path: return "a file name";
    case RunOptionType::Choice: return fmt::format("one of {}", fmt::join(choices, ", "));
  }
  return "";
}

const std::vector<RunOptionRow>& runOptionTable() {
  static const std::vector<RunOptionRow> rows = [] {
    std::vector<RunOptionRow> out;
    for (const Entry& entry : entries()) out.push_back(entry.row);
    return out;
  }();
  return rows;
}

const RunOptionRow* findRunOption(std::string_view name) {
  for (const RunOptionRow& row : runOptionTable())
    if (row.name == name || row.flag() == name) return &row;
  return nullptr;
}

std::string runOptionText(const RunOptions& options, const RunOptionRow& row) {
  const Entry& entry = entryOf(row);
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(options.*member)>;
        const T& value = options.*member;
        if constexpr (std::is_same_v<T, bool>) {
          return (value != entry.inverted) ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else if constexpr (std::is_floating_point_v<T>) {
          return fmt::format("{:g}", value);
        } else {
          return std::to_string(value);
        }
      },
      entry.field);
}

void setRunOption(RunOptions& options, const RunOptionRow& row, const std::string& given) {
  const Entry& entry = entryOf(row);
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(options.*member)>;
        T& value = options.*member;
        if constexpr (std::is_same_v<T, bool>) {
          if (given != "true" && given != "false") refuse(row, given);
          value = (given == "true") != entry.inverted;
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (!admits(row, given)) refuse(row, given);
          value = given;
        } else if constexpr (std::is_floating_point_v<T>) {
          double parsed = 0;
          if (!parseFinite(given, parsed) || !admits(row, parsed)) refuse(row, given);
          value = parsed;
        } else {
          uint64_t parsed = 0;
          if (!parseUnsigned(given, parsed) || !admits(row, parsed)) refuse(row, given);
          value = static_cast<T>(parsed);
        }
      },
      entry.field);
}

void checkRunOptionBounds(const RunOptions& options) {
  for (const Entry& entry : entries()) {
    const RunOptionRow& row = entry.row;
    const bool ok = std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(options.*member)>;
          const T& value = options.*member;
          if constexpr (std::is_same_v<T, bool>) {
            return true;
          } else if constexpr (std::is_same_v<T, std::string>) {
            // An empty path is "none" in the API (no trace, no machine).
            return value.empty() || admits(row, value);
          } else if constexpr (std::is_floating_point_v<T>) {
            return admits(row, static_cast<double>(value));
          } else if constexpr (std::is_signed_v<T>) {
            return value >= 0 && admits(row, static_cast<uint64_t>(value));
          } else {
            return admits(row, static_cast<uint64_t>(value));
          }
        },
        entry.field);
    if (!ok) refuse(row, runOptionText(options, row));
  }
}

}  // namespace hostir::api
