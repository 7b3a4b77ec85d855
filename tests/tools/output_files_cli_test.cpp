// Files the command line writes (`run --output` and `--trace`, `opt -o`)
// never destroy what they did not make: a failed write leaves the path as
// it was, a device given as the path is written in place and never
// removed, and a successful write replaces a file with its permissions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "api/output_file.h"
#include "cli_runner.h"

namespace hostir {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;

class OutputFilesCli : public testing::CliTest {
 protected:
  std::string program() {
    return write("p.hir", "program p(N = 4096) {\n  input x : f32[N]\n  output y : f32[N]\n  y = copy(x)\n}\n");
  }
  // Nothing but `keep` in the test's directory: no temporary left behind.
  void expectOnlyFiles(std::set<std::string> expected) {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) names.insert(entry.path().filename());
    EXPECT_EQ(names, expected);
  }
};

bool isCharacterDevice(const char* path) {
  struct stat s {};
  return ::stat(path, &s) == 0 && S_ISCHR(s.st_mode);
}

// The reproducer: as root, a failed write to /dev/full used to delete it.
TEST_F(OutputFilesCli, AFailedWriteToADeviceLeavesTheDevice) {
  ASSERT_TRUE(isCharacterDevice("/dev/full"));
  for (const std::string& args : {"run " + program() + " --output y=/dev/full",
                                  "run " + program() + " --trace /dev/full", "opt " + program() + " -o /dev/full"}) {
    SCOPED_TRACE(args);
    CommandResult r = run(args);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("No space left on device"));
    EXPECT_TRUE(isCharacterDevice("/dev/full"));
  }
  // A device that takes the data is written in place.
  EXPECT_EQ(run("run " + program() + " --output y=/dev/null").exitCode, 0);
  EXPECT_TRUE(isCharacterDevice("/dev/null"));
}

// A write that fails half-way (here: the process's file size limit, with
// SIGXFSZ ignored so that the write returns EFBIG) leaves the old file.
TEST_F(OutputFilesCli, AFailedWriteLeavesTheOldFileWhole) {
  std::string old = write("y.npy", "the old content\n");
  std::string hir = program();
  CommandResult r = run("run " + hir + " --output y=" + old, "trap '' XFSZ; ulimit -f 4; ");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  EXPECT_EQ(testing::slurp(old), "the old content\n");
  expectOnlyFiles({"p.hir", "y.npy", "out", "err"});
}

TEST_F(OutputFilesCli, ASuccessfulWriteReplacesTheFileAndKeepsItsPermissions) {
  std::string old = write("y.npy", "the old content\n");
  std::filesystem::permissions(old, std::filesystem::perms(0640));
  std::filesystem::create_symlink(old, dir_ / "link.npy");
  CommandResult r = run("run " + program() + " --output y=" + (dir_ / "link.npy").string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "link.npy"));  // written through, not replaced
  EXPECT_EQ(std::filesystem::file_size(old), 128u + 4096 * 4);
  EXPECT_EQ(std::filesystem::status(old).permissions(), std::filesystem::perms(0640));
  expectOnlyFiles({"p.hir", "y.npy", "link.npy", "out", "err"});
}

TEST(OutputFile, AnUncommittedFileLeavesThePathAsItWas) {
  auto dir = std::filesystem::temp_directory_path() / ("hostir_output_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "f.txt").string();
  {
    auto file = OutputFile::open(path);
    ASSERT_TRUE(file.ok()) << file.error();
    file->write("half", 4);
  }  // dropped without commit
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  ASSERT_FALSE(writeOutputFile(path, "whole"));
  EXPECT_EQ(testing::slurp(path), "whole");
  EXPECT_THAT(writeOutputFile((dir / "missing" / "f.txt").string(), "x").value_or(""),
              HasSubstr("No such file or directory"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hostir
