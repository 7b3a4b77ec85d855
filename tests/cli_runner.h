// Runs the `hostir` binary (or mpirun around it) as a user would, for the
// tests of the command line: a fresh directory per test, the exit status,
// what was printed, how long it took, and a time limit so that a hang
// fails the test instead of stalling the suite.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hostir::testing {

struct CommandResult {
  int exitCode = -1;
  bool signaled = false;  // killed by a signal, a shell's 128+N, or timeout's 124
  double seconds = 0;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The time limit every command of these tests runs under.
inline constexpr const char* kTimeLimit = "timeout -k 5 120 ";

// `command` under /bin/sh, stdin from /dev/null, output to files in `dir`.
inline CommandResult runShell(const std::string& command, const std::filesystem::path& dir) {
  std::string line = command + " >" + (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(line.c_str());
  CommandResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.signaled = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 124);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// How often `needle` occurs in `text`.
inline size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

// A test of the `hostir` binary (HOSTIR_BINARY, defined by the test target).
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = std::filesystem::temp_directory_path() / ("hostir_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Writes `text` to `name` in the test's directory; returns the path.
  std::string write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  // `hostir ARGS`; `before` is a shell command run first, `wrapper` one that
  // runs hostir (setpriv ...).
  CommandResult run(const std::string& args, const std::string& before = "", const std::string& wrapper = "") {
    return runShell(before + kTimeLimit + wrapper + HOSTIR_BINARY + " " + args, dir_);
  }

  // Any command (mpirun around hostir, say), under the time limit.
  CommandResult shell(const std::string& command) { return runShell(kTimeLimit + command, dir_); }

  static std::string golden(const std::string& name) {
    return (std::filesystem::path(HOSTIR_SOURCE_DIR) / "tests" / "golden" / name).string();
  }
  static std::string example(const std::string& name) {
    return (std::filesystem::path(HOSTIR_SOURCE_DIR) / "examples" / name).string();
  }

  std::filesystem::path dir_;
};

}  // namespace hostir::testing
