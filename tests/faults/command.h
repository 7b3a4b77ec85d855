// Runs a shell command as a user would (the hostir binary, or mpirun around
// it) and keeps what it printed, its exit status and how long it took.
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hostir::testing {

struct CommandResult {
  int exitCode = -1;
  bool signaled = false;  // killed by a signal, or a shell's 128+N
  std::string out, err;
  double seconds = 0;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `command` runs under /bin/sh with stdin from /dev/null; its output goes to
// files in `dir`.
inline CommandResult runCommand(const std::string& command, const std::filesystem::path& dir) {
  std::string line = command + " >" + (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(line.c_str());
  CommandResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.signaled = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 128);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("hostir_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  CommandResult run(const std::string& command) { return runCommand(command, dir_); }

  std::filesystem::path dir_;
};

// How often `needle` occurs in `text`.
inline size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace hostir::testing
