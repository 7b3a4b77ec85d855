// `hostir run` at its edges: inputs that --input forgot, replicated outputs
// whose ranks disagree under --check, inf and NaN that --check compares as
// values, and the small mistakes of a command line (an option given twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace hostir {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::testProgramText;

class EdgesCli : public testing::CliTest {
 protected:
  // A .npy of zeros in the test's directory.
  std::string zeros(const std::string& name, std::vector<int64_t> shape) {
    api::HostArray array = api::HostArray::zeros(api::DType::F32, std::move(shape));
    const std::string path = (dir_ / name).string();
    api::writeNpy(path, api::HostBuffer{array.dtype, array.shape, array.data.data()});
    return path;
  }
};

// The row-parallel layer takes x and w: given x alone, w is named.
TEST_F(EdgesCli, AnInputThatInputForgotIsNamedUnlessFillMissing) {
  const std::string x = zeros("x.npy", {256, 512});
  const std::string program = example("row_parallel_linear.hir");
  CommandResult forgot = run("run " + program + " --input x=" + x);
  EXPECT_EQ(forgot.exitCode, 2) << forgot.err;
  EXPECT_EQ(forgot.err, "error: input 'w' given no --input: give it, or --fill-missing to fill it from --seed\n");
  CommandResult filled = run("run " + program + " --input x=" + x + " --fill-missing --check");
  EXPECT_EQ(filled.exitCode, 0) << filled.err;
  EXPECT_THAT(filled.out, HasSubstr("check: ok"));
  CommandResult seeded = run("run " + program + " --seed 3 --check");
  EXPECT_EQ(seeded.exitCode, 0) << seeded.err;
}

// An output without shard is one value every rank holds: a rank that
// computed another fails --check, naming the output, the rank and the element.
TEST_F(EdgesCli, ReplicatedOutputsWhoseRanksDisagreeFailTheCheck) {
  const std::string program = write("r.hir", testProgramText("tools/programs/replicated_output_doubled_on_rank_1.hir"));
  const std::string x = zeros("x.npy", {2, 3});
  CommandResult checked = run("run " + program + " --ranks 2 --seed 1 --check");
  EXPECT_EQ(checked.exitCode, 1) << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("check: FAILED"));
  EXPECT_THAT(checked.out, HasSubstr("output 'y' is replicated (declared without shard), but its ranks disagree: at "
                                     "element [0, 0], rank 0 holds"));
  EXPECT_THAT(checked.out, HasSubstr("ranks that differ from rank 0: 1; the run returns rank 0's"));
  // Zeros stay zeros when doubled: the ranks agree.
  CommandResult agreeing = run("run " + program + " --ranks 2 --input x=" + x + " --check");
  EXPECT_EQ(agreeing.exitCode, 0) << agreeing.out << agreeing.err;
}

TEST_F(EdgesCli, AnOptionGivenTwiceIsNamed) {
  CommandResult twice = run("calibrate --ranks 2 --ranks 3 --quick -o " + (dir_ / "p.json").string());
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_EQ(twice.err, "error: --ranks is given 2 times; give it once\n");
}

// The reproducer, through the command line: an input that holds inf and
// NaN, copied to the output, passes --check.
class CheckNonFiniteCli : public testing::CliTest {};

TEST_F(CheckNonFiniteCli, ACorrectOutputHoldingInfAndNanPassesTheCheck) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1, kInf, 2, std::numeric_limits<float>::quiet_NaN(), -kInf, 3};
  api::writeNpy((dir_ / "x.npy").string(), api::HostBuffer{api::DType::F32, {6}, x.data()});
  std::string program = write("p.hir", testProgramText("tools/programs/copy_and_add_into_output.hir"));
  CommandResult r = run("run " + program + " --input x=" + (dir_ / "x.npy").string() + " --check --ranks 2");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
  EXPECT_THAT(r.out, Not(HasSubstr("nan")));
}

}  // namespace
}  // namespace hostir
