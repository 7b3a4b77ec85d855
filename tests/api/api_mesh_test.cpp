// A program's mesh through the public API: coord(AXIS) and size(AXIS) on
// every rank of meshes of 1 to 8 ranks, row-major, the mesh kept through
// print and parse, and a team the mesh does not lay out refused at the
// mesh with its extents.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
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

// The rank at tp place `place` of `rank`'s tp group, for rows of `tp`.
int64_t tpRankOf(int64_t rank, int64_t tp, int64_t place) { return rank / tp * tp + place; }

// The outputs of mesh_collectives.hir on `ranks` ranks with rows of `tp`,
// every rank's block side by side, by name.
std::map<std::string, std::vector<float>> runCollectives(int64_t ranks, int64_t tp, int64_t streams = 0) {
  const int64_t n = 4;
  std::vector<float> x(static_cast<size_t>(ranks * n));
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(r * n + i)] = static_cast<float>(100 * r + i);
  std::map<std::string, std::vector<float>> out;
  const std::map<std::string, int64_t> sizes = {
      {"tp_sum", ranks * n},      {"dp_sum", ranks * n},   {"all_sum", ranks * n},  {"gathered", ranks * tp * n},
      {"scattered", tp * tp * n}, {"root_one", ranks * n}, {"previous", ranks * n}, {"exchanged", ranks * n}};
  std::map<std::string, hostir::api::HostBuffer> refs;
  for (const auto& [name, size] : sizes) {
    out[name].assign(static_cast<size_t>(size), -1.0f);
    refs.emplace(name, hostir::api::HostBuffer{DType::F32, {size}, out[name].data()});
  }
  hostir::api::RunOptions options;
  options.ranks = ranks;
  options.params = {{"TP", tp}};
  if (streams > 0) options.streams = streams;
  const Program program =
      Program::fromText(hostir::testing::testProgramText("api/programs/mesh_collectives.hir"), "mesh_collectives.hir");
  hostir::api::run(program, {{"x", {DType::F32, {ranks * n}, x.data()}}}, refs, options);
  return out;
}

// Every communication over tp, over dp and over both, against the blocks
// each rank's group holds (x's block of rank r is 100 · r + i).
TEST(ApiMesh, CommunicationsRunAmongTheRanksOfTheirGroup) {
  for (const auto& layout : {std::pair<int64_t, int64_t>{4, 2}, {8, 4}, {8, 2}}) {
    // Named copies, not structured bindings: the lambdas below capture them.
    const int64_t ranks = layout.first, tp = layout.second;
    SCOPED_TRACE(::testing::Message() << ranks << " ranks, tp = " << tp);
    const int64_t n = 4, dp = ranks / tp;
    const auto out = runCollectives(ranks, tp);
    const auto x = [](int64_t rank, int64_t i) { return static_cast<float>(100 * rank + i); };
    const auto at = [&](const std::string& name, int64_t rank, int64_t block, int64_t i) {
      return out.at(name)[static_cast<size_t>(rank * block + i)];
    };
    for (int64_t r = 0; r < ranks; ++r) {
      const int64_t row = r / tp, column = r % tp;  // coord(dp), coord(tp)
      const auto tpRank = [&](int64_t place) { return row * tp + place; };
      const auto dpRank = [&](int64_t place) { return place * tp + column; };
      for (int64_t i = 0; i < n; ++i) {
        float tpSum = 0, dpSum = 0, allSum = 0;
        for (int64_t j = 0; j < tp; ++j) tpSum += x(tpRank(j), i);
        for (int64_t k = 0; k < dp; ++k) dpSum += x(dpRank(k), i);
        for (int64_t q = 0; q < ranks; ++q) allSum += x(q, i);
        EXPECT_EQ(at("tp_sum", r, n, i), tpSum) << "rank " << r;
        EXPECT_EQ(at("dp_sum", r, n, i), dpSum) << "rank " << r;
        EXPECT_EQ(at("all_sum", r, n, i), allSum) << "rank " << r;
        EXPECT_EQ(at("root_one", r, n, i), x(tpRank(1), i)) << "rank " << r;
        EXPECT_EQ(at("previous", r, n, i), x(tpRank((column + tp - 1) % tp), i)) << "rank " << r;
        // all_to_all over dp: part k of this rank's block is part `row` of dp place k's.
        const int64_t part = n / dp, k = i / part;
        EXPECT_EQ(at("exchanged", r, n, i), x(dpRank(k), row * part + i % part)) << "rank " << r;
      }
      // allgather over tp: the tp group's blocks in place order.
      for (int64_t j = 0; j < tp; ++j)
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(at("gathered", r, tp * n, j * n + i), x(tpRank(j), i)) << r;
      // reduce_scatter over dp of the gathered blocks: part `row` of their sum over dp.
      const int64_t part = tp * n / dp;
      for (int64_t i = 0; i < part; ++i) {
        const int64_t g = row * part + i;  // an element of the gathered [tp * n]
        float sum = 0;
        for (int64_t k = 0; k < dp; ++k) sum += x(tpRankOf(dpRank(k), tp, g / n), g % n);
        EXPECT_EQ(at("scattered", r, part, i), sum) << "rank " << r << " element " << i;
      }
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
