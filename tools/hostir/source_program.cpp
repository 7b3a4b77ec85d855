#include "tools/hostir/source_program.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "hostir/byte_size.h"
#include "hostir/parser.h"

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

// The whole text of the program file, or why it cannot be had (an unpositioned diagnostic).
Result<std::string> readProgramText(const std::string& path) {
  auto failure = [](std::string message) { return Diagnostic{{}, std::move(message)}; };
  // O_NONBLOCK only so that opening a FIFO without a writer does not wait for one.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
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

}  // namespace

std::string SourceProgram::render(const Diagnostic& diag) const { return renderDiagnostic(diag, path, text); }

tool::ToolError SourceProgram::error(const Diagnostic& diag) const {
  return tool::ToolError{tool::kProgramError, render(diag)};
}

tool::ToolResult<SourceProgram> loadProgram(const std::string& path) {
  auto text = readProgramText(path);
  if (!text) return tool::ToolError{tool::kProgramError, renderDiagnostic(text.error(), path)};
  SourceProgram source{path, std::move(*text), {}};
  auto parsed = parseProgram(source.text);
  if (!parsed) return source.error(parsed.error());
  source.program = std::move(*parsed);
  return source;
}

tool::ToolResult<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> settings;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      return tool::ToolError{tool::kUsageError, fmt::format("error: --set expects NAME=VALUE, got '{}'\n", item)};
    std::string_view value = std::string_view(item).substr(eq + 1);
    int64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || number < 0)
      return tool::ToolError{
          tool::kUsageError,
          fmt::format("error: --set {}: '{}' is not a non-negative integer that fits in 64 bits\n", name, value)};
    settings[name] = number;
  }
  return settings;
}

}  // namespace hostir
