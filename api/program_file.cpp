#include "api/program_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ir/byte_size.h"

namespace hostir {
namespace {

static_assert(kMaxProgramFileBytes % (size_t{1} << 20) == 0, "the messages state the limit in whole MiB");

std::string limitText() {
  return fmt::format("hostir reads program files of at most {} MiB", kMaxProgramFileBytes >> 20);
}

// Closes the descriptor however the read ends.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> readProgramFile(const std::string& path) {
  auto failure = [](std::string message) { return Diagnostic{{}, std::move(message)}; };
  // "-" is standard input (a copy of it, so that closing leaves it open).
  // O_NONBLOCK only so that opening a FIFO without a writer does not wait for one.
  FileDescriptor file{path == kStandardInput ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                                             : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (file.fd < 0) return failure(fmt::format("cannot open the program: {}", std::strerror(errno)));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return failure(fmt::format("cannot read the program: {}", std::strerror(errno)));
  if (S_ISDIR(info.st_mode)) return failure("cannot read the program: it is a directory, not a file");
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > kMaxProgramFileBytes) {
    // "16.0 MiB; ... at most 16 MiB" would read as a contradiction.
    std::string size = formatBytes(static_cast<uint64_t>(info.st_size));
    if (size == formatBytes(kMaxProgramFileBytes)) size = fmt::format("over {} MiB", kMaxProgramFileBytes >> 20);
    return failure(fmt::format("the program file is {}; {}", size, limitText()));
  }
  int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);

  // Bounded chunks, and never more than one byte past the limit: a pipe or
  // a device (/dev/zero) has no size to check up front.
  std::string text;
  char chunk[64 * 1024];
  while (true) {
    size_t want = std::min(sizeof chunk, kMaxProgramFileBytes + 1 - text.size());
    ssize_t got = ::read(file.fd, chunk, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      return failure(fmt::format("cannot read the program: {}", std::strerror(errno)));
    }
    if (got == 0) break;
    text.append(chunk, static_cast<size_t>(got));
    if (text.size() > kMaxProgramFileBytes)
      return failure(fmt::format("the program is longer than {} MiB; {}", kMaxProgramFileBytes >> 20, limitText()));
  }
  return text;
}

}  // namespace hostir
