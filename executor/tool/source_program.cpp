#include "executor/tool/source_program.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hostir/parser.h"

namespace hostir {

void SourceProgram::report(const Diagnostic& diag) const {
  std::cerr << renderDiagnostic(diag, path, text);
}

std::optional<SourceProgram> loadProgram(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << fmt::format("{}: error: cannot open the program: {}\n", path, std::strerror(errno));
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    std::cerr << fmt::format("{}: error: cannot read the program\n", path);
    return std::nullopt;
  }
  SourceProgram source{path, text.str(), {}};
  auto parsed = parseProgram(source.text);
  if (!parsed) {
    source.report(parsed.error());
    return std::nullopt;
  }
  source.program = std::move(*parsed);
  return source;
}

std::optional<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> settings;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty()) {
      std::cerr << fmt::format("error: --set expects NAME=VALUE, got '{}'\n", item);
      return std::nullopt;
    }
    std::string_view value = std::string_view(item).substr(eq + 1);
    int64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || number < 0) {
      std::cerr << fmt::format("error: --set {}: '{}' is not a non-negative integer that fits in 64 bits\n", name, value);
      return std::nullopt;
    }
    settings[name] = number;
  }
  return settings;
}

}  // namespace hostir
