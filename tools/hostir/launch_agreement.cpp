#include "tools/hostir/launch_agreement.h"

#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <optional>

#include "tools/hostir/exit_codes.h"

namespace hostir::tool {
namespace {

// A 64-bit value travels as two doubles of 32 bits each: exact in f64.
void pushWord(std::vector<double>& row, uint64_t value) {
  row.push_back(static_cast<double>(value >> 32));
  row.push_back(static_cast<double>(value & 0xffffffffu));
}

uint64_t wordAt(const std::vector<double>& table, size_t index) {
  return (static_cast<uint64_t>(table[index]) << 32) | static_cast<uint64_t>(table[index + 1]);
}

// Every rank's row, gathered on every rank: table[r * width + i].
// The parts whose value differs from rank 0's on some rank, each as one line.
std::vector<std::string> differences(const std::vector<LaunchPart>& parts, const std::vector<double>& table,
                                     size_t width, size_t first, int world) {
  std::vector<std::string> lines;
  for (size_t p = 0; p < parts.size(); ++p) {
    size_t at = first + 2 * p;
    uint64_t reference = wordAt(table, at);
    std::vector<std::string> others;
    for (int r = 1; r < world; ++r) {
      uint64_t v = wordAt(table, static_cast<size_t>(r) * width + at);
      if (v == reference) continue;
      others.push_back(parts[p].numeric ? fmt::format("{} on rank {}", static_cast<int64_t>(v), r)
                                        : fmt::format("something else on rank {}", r));
    }
    if (others.empty()) continue;
    constexpr size_t kShown = 3;
    size_t more = others.size() > kShown ? others.size() - kShown : 0;
    if (more) others.resize(kShown);
    lines.push_back(fmt::format("{} is {} on rank 0 but {}{}", parts[p].name, parts[p].shown, fmt::join(others, ", "),
                                more ? fmt::format(" (and {} more ranks)", more) : ""));
  }
  return lines;
}

}  // namespace

LaunchPart numericPart(std::string name, int64_t value) {
  return LaunchPart{std::move(name), std::to_string(value), static_cast<uint64_t>(value), true};
}

LaunchPart textPart(std::string name, std::string shown) {
  uint64_t hash = fingerprintHash(shown);
  return LaunchPart{std::move(name), fmt::format("'{}'", shown), hash, false};
}

const char* comparedByMeaning(std::string_view option) {
  struct Entry {
    std::string_view option;
    const char* instead;
  };
  static constexpr Entry kEntries[] = {
      {"file", "the program text (its path may differ between nodes)"},
      {"--set", "the parameters' values once bound"},
      {"--input", "the inputs' names and data (their paths may differ between nodes)"},
      {"--output", "the outputs' names (rank 0 alone writes the files)"},
      {"--trace", "whether a trace is written (rank 0 alone writes it)"},
  };
  for (const Entry& e : kEntries)
    if (e.option == option) return e.instead;
  return nullptr;
}

namespace {

std::optional<int64_t> integerIn(const std::string& text) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return number;
}

}  // namespace

std::vector<LaunchPart> commandLineParts(const std::vector<GivenOption>& options) {
  std::vector<LaunchPart> parts;
  for (const GivenOption& option : options) {
    if (comparedByMeaning(option.name)) continue;
    // An integer option (its default, the same on every rank, says so) is
    // shown for every rank: "--streams is 4 on rank 0 but 8 on rank 1".
    std::optional<int64_t> number = integerIn(option.value);
    if (integerIn(option.defaultValue) && number)
      parts.push_back(numericPart(option.name, *number));
    else if (integerIn(option.defaultValue))
      parts.push_back(LaunchPart{option.name, option.value, fingerprintHash(option.value), true});
    else
      parts.push_back(textPart(option.name, option.value));
  }
  return parts;
}

uint64_t fingerprintHash(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

LaunchOutcome agreeOnLaunch(api::MpiLaunch& launch, const std::string& error, int errorCode,
                            const LaunchFingerprint& fingerprint) {
  const int rank = launch.rank(), world = static_cast<int>(launch.world());
  const bool failed = !error.empty();

  // Round 1: failure, the failure's text, the program and the options.
  std::vector<double> row;
  row.push_back(failed ? 1.0 : 0.0);
  pushWord(row, failed ? fingerprintHash(error) : 0);
  pushWord(row, fingerprintHash(fingerprint.programText));
  for (const LaunchPart& part : fingerprint.options) pushWord(row, part.value);
  const size_t width = row.size();
  const std::vector<double> table = launch.allgather(row, "the start-up agreement between the ranks");

  std::vector<int> failedRanks;
  for (int r = 0; r < world; ++r)
    if (table[static_cast<size_t>(r) * width] != 0.0) failedRanks.push_back(r);
  if (!failedRanks.empty()) {
    if (failed) {
      // The lowest rank with this very text prints it: a syntax error every
      // rank finds is printed once, a rank's own problem by that rank.
      bool printedBelow = false;
      for (int r = 0; r < rank; ++r)
        printedBelow |= table[static_cast<size_t>(r) * width] != 0.0 &&
                        wordAt(table, static_cast<size_t>(r) * width + 1) == wordAt(row, 1);
      if (!printedBelow)
        std::cerr << (failedRanks.size() == static_cast<size_t>(world) || world == 1
                          ? error
                          : fmt::format("hostir: rank {}: {}", rank, error));
    }
    if (rank == 0 && !failed)
      std::cerr << fmt::format(
          "error: rank{} {} of {} could not start the run (each prints its reason); no rank runs it\n",
          failedRanks.size() == 1 ? "" : "s", fmt::join(failedRanks, ", "), world);
    return LaunchOutcome{false, failed ? errorCode : kProgramError};
  }

  std::vector<std::string> lines;
  constexpr size_t kProgramAt = 3;  // after the failure flag and its text's hash
  for (int r = 1; r < world; ++r)
    if (wordAt(table, static_cast<size_t>(r) * width + kProgramAt) != wordAt(table, kProgramAt))
      lines.push_back(fmt::format("the program text differs between rank 0 and rank {}", r));
  const bool programsAgree = lines.empty();
  for (std::string& line : differences(fingerprint.options, table, width, kProgramAt + 2, world))
    lines.push_back(std::move(line));

  // Round 2, only when the programs agree (so every rank has the same
  // parameters, in the same order): the parameter values themselves.
  if (programsAgree && !fingerprint.params.empty()) {
    std::vector<double> params;
    for (const LaunchPart& part : fingerprint.params) pushWord(params, part.value);
    const std::vector<double> paramTable = launch.allgather(params, "the comparison of the ranks' parameters");
    for (std::string& line : differences(fingerprint.params, paramTable, params.size(), 0, world))
      lines.push_back(std::move(line));
  }
  if (lines.empty()) return LaunchOutcome{true, kSuccess};
  if (rank == 0) {
    std::cerr << "error: the ranks were started differently; every rank must run the same program with the same "
                 "parameters and options:\n";
    for (const std::string& line : lines) std::cerr << "  " << line << "\n";
  }
  // Ranks started differently, with other programs or other options, are
  // a bad command line (mpirun's): every one was valid on its own.
  return LaunchOutcome{false, kUsageError};
}

}  // namespace hostir::tool
