// The source tree's files as the tests read them: standard C++ and
// GoogleTest only, so that a suite of the public API alone may include it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hostir::testing {

inline std::filesystem::path sourceDir() { return HOSTIR_SOURCE_DIR; }

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A test program kept beside its suite, by its path under tests/
// ("executor/programs/copy.hir"); a missing or empty file fails the test.
inline std::string testProgramText(const std::filesystem::path& underTests) {
  const std::filesystem::path path = sourceDir() / "tests" / underTests;
  std::string text = readFile(path);
  if (text.empty()) ADD_FAILURE() << "no test program at " << path.string();
  return text;
}

// The same without the comment (and blank) lines that open the file: the
// text from the `program` line on, as the printer gives it back, or the
// tokens a test mutates.
inline std::string testProgramUncommented(const std::filesystem::path& underTests) {
  std::string text = testProgramText(underTests);
  size_t at = 0;
  while (at < text.size() && (text[at] == '#' || text[at] == '\n')) {
    size_t end = text.find('\n', at);
    at = end == std::string::npos ? text.size() : end + 1;
  }
  if (!text.empty() && text.compare(at, 8, "program ") != 0)
    ADD_FAILURE() << "tests/" << underTests.string() << " holds no program after its comment lines";
  return text.substr(at);
}

}  // namespace hostir::testing
