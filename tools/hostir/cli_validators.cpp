#include "tools/hostir/cli_validators.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace hostir::tool {
namespace {

template <typename T>
bool parseWhole(const std::string& text, T& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

CLI::Validator integerFrom(int64_t lo, int64_t hi) {
  std::string wanted = fmt::format("an integer from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, wanted](std::string& text) -> std::string {
        int64_t value = 0;
        if (!parseWhole(text, value) || value < lo || value > hi)
          return fmt::format("must be {}, got '{}'", wanted, text);
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

CLI::Validator unsignedInteger() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        if (!parseWhole(text, value)) return fmt::format("must be an integer from 0 to 2^64 - 1, got '{}'", text);
        return {};
      },
      "UINT");
}

CLI::Validator fileName() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "expects a file name, got ''" : std::string(); },
      "FILE");
}

CLI::Validator numberFrom(double lo, double hi, std::string_view unit) {
  std::string wanted =
      fmt::format("a number{} from {:g} to {:g}", unit.empty() ? "" : fmt::format(" of {}", unit), lo, hi);
  return CLI::Validator(
      [lo, hi, wanted](std::string& text) -> std::string {
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        bool parsed = !text.empty() && end == text.c_str() + text.size();
        // NaN fails every comparison: tested for by name.
        if (!parsed || !std::isfinite(value) || value < lo || value > hi)
          return fmt::format("must be {}, got '{}'", wanted, text);
        return {};
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

}  // namespace hostir::tool
