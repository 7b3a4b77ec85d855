// Before any work, the ranks of an mpirun job agree that they can start and
// that they were started alike. Every rank prepares its run (reads, verifies
// and checks the program, reads its inputs) without printing, then all ranks
// exchange whether that failed and a fingerprint of what they were given:
// the program text, the parameters and the options that shape the
// communications. A rank that failed prints its own reason; ranks that were
// started differently are told what differs; and in both cases every rank
// stops at once instead of waiting for a peer that will never come.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/command_line.h"
#include "tools/hostir/commands.h"

namespace hostir::tool {

// One thing every rank must have been given alike.
struct LaunchPart {
  std::string name;      // "the program", "--streams", "parameter M"
  std::string shown;     // this rank's value as a person would write it
  uint64_t value = 0;    // the value itself for integers, else a hash of `shown`
  bool numeric = false;  // `value` is the integer itself (printed for every rank)
};

struct LaunchFingerprint {
  std::string programText;          // hashed; empty when the rank could not read it
  std::vector<LaunchPart> options;  // the same names, in the same order, on every rank
  std::vector<LaunchPart> params;   // compared only when the programs agree
};

struct LaunchOutcome {
  bool proceed = false;  // every rank prepared its run and all were started alike
  int exitCode = 0;      // when not proceeding
};

// Collective over the launch's ranks, under its deadline. `error` is this rank's
// preparation failure (the text it would print; empty: none) and
// `errorCode` its exit code. Prints, to stderr: a failing rank its own
// reason (once per distinct reason, by the lowest rank that has it); rank 0
// which ranks failed, or what differs between ranks.
LaunchOutcome agreeOnLaunch(api::MpiLaunch& launch, const std::string& error, int errorCode,
                            const LaunchFingerprint& fingerprint);

// FNV-1a: stable across processes and builds, unlike std::hash.
uint64_t fingerprintHash(std::string_view text);

// A part compared by its integer value (printed for every rank), or by a
// hash of its text.
LaunchPart numericPart(std::string name, int64_t value);
LaunchPart textPart(std::string name, std::string shown);

// The options of a command line as the ranks compare them: every option as
// parsed, in the command's order, except those that name files or
// parameters (comparedByMeaning), whose meaning the caller compares instead.
// Deriving the parts from the parsed command line means an option added
// later is compared without being listed anywhere.
std::vector<LaunchPart> commandLineParts(const std::vector<GivenOption>& options);

// Why an option is left out of commandLineParts (what is compared in its
// place), or nullptr when it is compared as given.
const char* comparedByMeaning(std::string_view option);

}  // namespace hostir::tool
