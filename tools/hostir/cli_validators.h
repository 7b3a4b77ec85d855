// Validators for the command line's numbers, with messages people can read:
// "must be an integer from 1 to 1024, got '0'" rather than CLI11's
// "not in range 0.000000 to <a 309-digit number>", and no nan or inf.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string_view>

namespace hostir::tool {

// A whole number in [lo, hi].
CLI::Validator integerFrom(int64_t lo, int64_t hi);

// A whole number in [0, 2^64 - 1] (seeds).
CLI::Validator unsignedInteger();

// A file name: never empty (an empty name would be silently no file).
CLI::Validator fileName();

// A finite number in [lo, hi] (never nan or inf); `unit` names it in messages ("seconds").
CLI::Validator numberFrom(double lo, double hi, std::string_view unit = "");

}  // namespace hostir::tool
