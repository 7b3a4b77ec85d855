// A child process that keeps one core busy, named so that a test can find
// it by name in /proc, until the object goes.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace hostir::testing {

class SpinningProcess {
 public:
  static constexpr const char* kName = "hostir-spinner";  // at most 15 characters: /proc's command name

  SpinningProcess() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_NAME, kName);
      volatile unsigned long sink = 0;
      for (;;) sink = sink + 1;
    }
  }
  ~SpinningProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  SpinningProcess(const SpinningProcess&) = delete;
  SpinningProcess& operator=(const SpinningProcess&) = delete;

  int pid() const { return pid_; }

 private:
  int pid_ = -1;
};

}  // namespace hostir::testing
