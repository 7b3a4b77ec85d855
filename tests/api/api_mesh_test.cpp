// A program's mesh through the public API: coord(AXIS) and size(AXIS) on
// every rank of meshes of 1 to 8 ranks, row-major, the mesh kept through
// print and parse, and a team the mesh does not lay out refused at the
// mesh with its extents.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace {

using hostir::api::DType;
using hostir::api::ErrorKind;
using hostir::api::Program;
using hostir::api::testing::errorOf;

Program meshCoords() {
  return Program::fromText(hostir::testing::testProgramText("api/programs/mesh_coords.hir"), "mesh.hir");
}

// y's blocks after a run on `ranks` ranks with rows of `tp`.
std::vector<float> runOn(int64_t ranks, int64_t tp) {
  const int64_t n = 4;
  std::vector<float> one(n, 1.0f), y(static_cast<size_t>(ranks * n), -1.0f);
  hostir::api::RunOptions options;
  options.ranks = ranks;
  options.params = {{"TP", tp}};
  hostir::api::run(meshCoords(), {{"one", {DType::F32, {n}, one.data()}}}, {{"y", {DType::F32, {ranks * n}, y.data()}}},
                   options);
  return y;
}

TEST(ApiMesh, EveryRankReadsItsCoordinatesRowMajor) {
  struct Shape {
    int64_t ranks, tp;
  };
  for (Shape shape : {Shape{1, 1}, Shape{2, 2}, Shape{4, 2}, Shape{4, 1}, Shape{8, 4}, Shape{8, 2}}) {
    SCOPED_TRACE(::testing::Message() << shape.ranks << " ranks, tp = " << shape.tp);
    const std::vector<float> y = runOn(shape.ranks, shape.tp);
    const int64_t dp = shape.ranks / shape.tp;
    for (int64_t rank = 0; rank < shape.ranks; ++rank) {
      // Row-major: the last axis (tp) varies fastest.
      const int64_t want = rank % shape.tp + 3 * (rank / shape.tp) + 10 * dp + 100 * shape.tp;
      for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(y[static_cast<size_t>(rank * 4 + i)], want) << "rank " << rank;
    }
  }
}

TEST(ApiMesh, TheMeshSurvivesPrintAndParse) {
  const std::string text = meshCoords().print();
  EXPECT_NE(text.find("program mesh_coords(N = 4, TP = 2) mesh(dp = world / TP, tp = TP) {"), std::string::npos)
      << text;
  EXPECT_NE(text.find("range(coord(tp) + 3 * coord(dp) + 10 * size(dp) + 100 * size(tp))"), std::string::npos) << text;
  EXPECT_EQ(Program::fromText(text), meshCoords());
}

TEST(ApiMesh, ATeamTheMeshDoesNotLayOutIsRefusedAtTheMesh) {
  hostir::api::Error error = errorOf([] { runOn(3, 2); });
  EXPECT_EQ(error.kind(), ErrorKind::Program);
  EXPECT_NE(std::string(error.what())
                .find("mesh.hir:4:36: error: the mesh's extents (dp = 1, tp = 2) multiply to 2, "
                      "not to the 3 ranks of the team"),
            std::string::npos)
      << error.what();
}

}  // namespace
