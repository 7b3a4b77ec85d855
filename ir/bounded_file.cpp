#include "ir/bounded_file.h"

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

// Closes the descriptor however the read ends.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> readBoundedFile(const std::string& path, uint64_t maxBytes, std::string_view what) {
  auto failure = [](std::string message) { return Diagnostic{{}, std::move(message)}; };
  const uint64_t limitMiB = maxBytes >> 20;
  const std::string limit = fmt::format("hostir reads {} files of at most {} MiB", what, limitMiB);
  // "-" is standard input (a copy of it, so that closing leaves it open).
  // O_NONBLOCK only so that opening a FIFO without a writer does not wait for one.
  FileDescriptor file{path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                                  : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (file.fd < 0) return failure(fmt::format("cannot open the {}: {}", what, std::strerror(errno)));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return failure(fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
  if (S_ISDIR(info.st_mode)) return failure(fmt::format("cannot read the {}: it is a directory, not a file", what));
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > maxBytes) {
    // "16.0 MiB; ... at most 16 MiB" would read as a contradiction.
    std::string size = formatBytes(static_cast<uint64_t>(info.st_size));
    if (size == formatBytes(maxBytes)) size = fmt::format("over {} MiB", limitMiB);
    return failure(fmt::format("the {} file is {}; {}", what, size, limit));
  }
  int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);

  // Bounded chunks, and never more than one byte past the limit: a pipe or
  // a device (/dev/zero) has no size to check up front.
  std::string text;
  char chunk[64 * 1024];
  while (true) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof chunk, maxBytes + 1 - text.size()));
    ssize_t got = ::read(file.fd, chunk, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      return failure(fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
    }
    if (got == 0) break;
    text.append(chunk, static_cast<size_t>(got));
    if (text.size() > maxBytes) return failure(fmt::format("the {} is longer than {} MiB; {}", what, limitMiB, limit));
  }
  return text;
}

}  // namespace hostir
