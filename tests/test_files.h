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

}  // namespace hostir::testing
