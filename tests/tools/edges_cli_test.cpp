// `hostir run` where a run used to go wrong without a word: inputs that
// --input forgot, replicated outputs whose ranks disagree under --check, and
// the small mistakes of a command line (an option given twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"
#include "hostir/hostir.h"

namespace hostir {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;

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
  const std::string program = write("r.hir",
                                    "program r() {\n  input x : f32[2, 3]\n  output y : f32[2, 3]\n"
                                    "  y = copy(x)\n  if rank == 1 {\n    scale(y, by=2.0, out=y)\n  }\n}\n");
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

}  // namespace
}  // namespace hostir
