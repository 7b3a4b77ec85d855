// Every option of a run, one row each: its name, type, bounds and help, and
// the RunOptions field it sets (its default is that field's initializer).
// The command line's `hostir run` flags, the Python module's keywords and
// the API's validation are all made from this table, so an option is added
// by adding its row (and the code that uses it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hostir/execution.h"

namespace hostir::api {

enum class RunOptionType {
  Integer,  // a whole number within [minInteger, maxInteger]
  Number,   // a finite real within [minNumber, maxNumber]
  Flag,     // true or false
  Text,     // any string
  Path,     // a file name, never empty
  Choice,   // one of `choices`
};

struct RunOptionRow {
  // The Python keyword ("comm_timeout"); the command line's flag is the
  // same with dashes ("--comm-timeout").
  std::string name;
  RunOptionType type = RunOptionType::Flag;
  uint64_t minInteger = 0, maxInteger = 0;
  double minNumber = 0, maxNumber = 0;
  std::vector<std::string> choices;
  std::string typeName;  // the command line's placeholder: "SECONDS"; empty: the type's own
  std::string help;

  std::string flag() const;
  // "an integer from 1 to 1024", "a number of seconds from 0.001 to 1e+06",
  // "True or False", "one of auto, cpu, cuda", "a file name".
  std::string wanted() const;
};

// The rows in the order `hostir run --help` lists them.
const std::vector<RunOptionRow>& runOptionTable();
// The row named `name` (a keyword or a flag); null when none is.
const RunOptionRow* findRunOption(std::string_view name);

// The option's value in `options` as the command line writes it: "4",
// "0.05", "true", "cpu", "" for an empty text.
std::string runOptionText(const RunOptions& options, const RunOptionRow& row);
// Sets the option from the command line's text ("true" or "false" for a
// flag). Throws Error (kind Usage) "NAME: must be WANTED, got 'TEXT'" when
// the text is not one of its values.
void setRunOption(RunOptions& options, const RunOptionRow& row, const std::string& text);
// Throws Error (kind Usage) naming the first option whose value lies
// outside its row's bounds or choices, in setRunOption's words.
void checkRunOptionBounds(const RunOptions& options);

}  // namespace hostir::api
