// Writing a file hostir produces (`run --output`, a run's trace, `opt -o`,
// `calibrate -o`) without ever destroying what it did not make: the content
// goes to a temporary file beside the target and is renamed over it only
// once it is complete and on disk, so a failure (a full disk, an error
// half-way) leaves whatever the path held as it was. A path that
// exists and is not a regular file (a device such as /dev/null or
// /dev/full, a FIFO, /dev/stdout) is written in place and never removed.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "ir/diagnostic.h"

namespace hostir {

class OutputFile {
 public:
  // Opens the temporary beside `path` (a symlink is followed to its
  // target), or the non-regular file itself; the error is why not
  // ("No such file or directory").
  static Result<OutputFile, std::string> open(const std::string& path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();  // without commit: the temporary is removed, the target untouched

  std::FILE* stream() const { return file_; }
  // Writes `bytes` bytes; false (with errno set) when the write failed.
  bool write(const void* data, size_t bytes);
  // Completes the file: flushed, synced and renamed over the target. The
  // error is why it failed; the target is then as it was.
  std::optional<std::string> commit();

 private:
  OutputFile(std::string target, std::string temporary, std::FILE* file)
      : target_(std::move(target)), temporary_(std::move(temporary)), file_(file) {}
  void discard();

  std::string target_;
  std::string temporary_;  // empty: writing the target in place
  std::FILE* file_ = nullptr;
  int error_ = 0;  // the first failed write's errno
};

// The whole of `text` written to `path` as above; the error is why not.
std::optional<std::string> writeOutputFile(const std::string& path, std::string_view text);

}  // namespace hostir
