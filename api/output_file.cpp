#include "api/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace hostir {
namespace {

std::string errorText(int err) { return err ? std::strerror(err) : "write failed"; }

// The permissions a file created now gets: 0666 less the umask (read from
// /proc, since umask() cannot be read without setting it).
mode_t newFileMode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return 0666 & ~static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 0644;
}

}  // namespace

Result<OutputFile, std::string> OutputFile::open(const std::string& path) {
  std::error_code ec;
  std::filesystem::path target = path;
  if (std::filesystem::is_symlink(target, ec)) target = std::filesystem::weakly_canonical(target, ec);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    // A device, a FIFO or a directory: written in place (or refused by
    // open), and never removed.
    std::FILE* file = std::fopen(target.c_str(), "wb");
    if (!file) return errorText(errno);
    return OutputFile(target.string(), "", file);
  }
  std::filesystem::path dir = target.parent_path();
  std::string pattern =
      ((dir.empty() ? std::filesystem::path(".") : dir) / ("." + target.filename().string() + ".hostir-XXXXXX"))
          .string();
  int fd = ::mkstemp(pattern.data());
  if (fd < 0) return errorText(errno);
  // The permissions the target has, or a new file would get.
  ::fchmod(fd, exists ? (existing.st_mode & 07777) : newFileMode());
  std::FILE* file = ::fdopen(fd, "wb");
  if (!file) {
    int err = errno;
    ::close(fd);
    ::unlink(pattern.c_str());
    return errorText(err);
  }
  return OutputFile(target.string(), pattern, file);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : target_(std::move(other.target_)),
      temporary_(std::move(other.temporary_)),
      file_(other.file_),
      error_(other.error_) {
  other.file_ = nullptr;
  other.temporary_.clear();
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

bool OutputFile::write(const void* data, size_t bytes) {
  if (bytes == 0 || error_) return error_ == 0;
  errno = 0;
  if (std::fwrite(data, 1, bytes, file_) == bytes) return true;
  error_ = errno ? errno : EIO;
  return false;
}

std::optional<std::string> OutputFile::commit() {
  int err = error_;
  if (!err && std::fflush(file_) != 0) err = errno;
  if (!err && !temporary_.empty() && ::fsync(::fileno(file_)) != 0) err = errno;
  int closed = std::fclose(file_);
  file_ = nullptr;
  if (!err && closed != 0) err = errno;
  if (!err && !temporary_.empty() && std::rename(temporary_.c_str(), target_.c_str()) != 0) err = errno;
  if (err) {
    discard();
    return errorText(err);
  }
  temporary_.clear();
  return std::nullopt;
}

std::optional<std::string> writeOutputFile(const std::string& path, std::string_view text) {
  auto file = OutputFile::open(path);
  if (!file) return file.error();
  file->write(text.data(), text.size());
  return file->commit();
}

}  // namespace hostir
