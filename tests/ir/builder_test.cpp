// Building programs in C++ gives the same IR as parsing their text.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hostir {
namespace {

Program rowParallelLinear() {
  ProgramBuilder b("row_parallel_linear");
  Expr M = b.param("M", 256), K = b.param("K", 512), N = b.param("N", 128), S = b.param("S", 4);
  Value x = b.input("x", DType::F32, {M, K}, 1);
  Value w = b.input("w", DType::F32, {N, K}, 1);
  b.output("y", DType::F32, {M, N});
  Value y = b.allocate(DType::F32, {M, N}, "y");
  b.forLoop("i", S, [&](Expr i) {
    Value xi = b.shardByStream(x, 0, i, S, "xi");
    Value yi = b.shardByStream(y, 0, i, S, "yi");
    b.linearInto(xi, w, yi);
    Value c = b.allreduce(yi, ReduceOp::Sum, {}, "c");
    b.wait(c);
  });
  return b.build();
}

TEST(Builder, RowParallelLinearMatchesTheLanguageDoc) {
  auto blocks = testing::programBlocks(testing::readFile(testing::sourceDir() / "docs" / "hostir-language.md"));
  ASSERT_FALSE(blocks.empty());
  Program parsed = testing::parseOrDie(blocks[0]);
  Program built = rowParallelLinear();
  EXPECT_EQ(built, parsed) << printProgram(built);
  EXPECT_FALSE(verifyProgram(built, Bindings{{}, 2}).has_value());
}

TEST(Builder, GeneratesFreshNamesAndVerifies) {
  ProgramBuilder b("generated");
  Expr n = b.param("N", 6);
  Value a = b.input("a", DType::F16, {n, n});
  b.output("out", DType::F16, {n, n});
  Value out = b.allocate(DType::F16, {n, n}, "out", /*zero=*/true);
  Value t = b.matmul(a, a);
  Value u = b.add(t, a);
  b.copyInto(u, out);
  Value tmp = b.allocate(DType::F16, {n * 2, n});
  Value h = b.allgather(a, tmp);
  b.wait(h);
  b.deallocate(tmp);
  Value s = b.getCurrentStream();
  b.setCurrentStream(StreamRef::worker(Expr(3)));
  b.synchronize(StreamRef::captured(s));
  Value ev = b.recordEvent();
  b.setCurrentStream(StreamRef::captured(s));
  b.waitEvent(ev);
  Expr half = b.intValue(IntFunction::CeilDiv, n, 2, "half");
  b.forLoop("i", 1, half, [&](Expr i) { b.broadcast(out, i % 2); });
  Program p = b.build();

  std::string text = printProgram(p);
  EXPECT_EQ(testing::parseOrDie(text), p) << text;
  EXPECT_NE(text.find("t0 = matmul(a, a)"), std::string::npos) << text;
  EXPECT_NE(text.find("for i in range(1, half)"), std::string::npos) << text;
  auto error = verifyProgram(p, Bindings{{}, 2});
  EXPECT_FALSE(error.has_value()) << error->message << "\n" << text;
}

TEST(Builder, SendRecvPrintsAsTheLanguageWritesIt) {
  ProgramBuilder b("ring");
  Expr n = b.param("N", 8);
  Value x = b.input("x", DType::F32, {n});
  b.output("y", DType::F32, {n});
  Value y = b.allocate(DType::F32, {n}, "y");
  Expr rank = Expr::name("rank"), world = Expr::name("world");
  Value h = b.sendrecv(x, y, (rank + 1) % world, (rank + world - 1) % world, "h");
  b.wait(h);
  Program p = b.build();

  std::string text = printProgram(p);
  EXPECT_NE(text.find("h = sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)"),
            std::string::npos)
      << text;
  EXPECT_EQ(testing::parseOrDie(text), p) << text;
  for (int64_t world = 1; world <= 3; ++world) {
    auto error = verifyProgram(p, Bindings{{}, world});
    EXPECT_FALSE(error.has_value()) << error->message << "\n" << text;
  }
}

TEST(Builder, VerifierCatchesBuiltMistakes) {
  ProgramBuilder b("bad");
  Value a = b.input("a", DType::F32, {Expr(4), Expr(3)});
  b.matmul(a, a);  // [4, 3] x [4, 3]: K does not match
  auto error = verifyProgram(b.build());
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("contracts K"), std::string::npos) << error->message;
}

TEST(Builder, WithBlocksBuildWhatTheTextSays) {
  ProgramBuilder b("with_blocks");
  Expr S = b.param("S", 2);
  Value x = b.input("x", DType::F32, {Expr(8)});
  b.output("y", DType::F32, {Expr(8)});
  Value main = b.getCurrentStream("main");
  b.forLoop("i", S, [&](Expr i) {
    b.withStream(StreamRef::worker(i), [&] {
      b.synchronize(StreamRef::captured(main));
      b.copy(x, "t");
    });
  });
  b.withStream(StreamRef::captured(main), [&] { b.copy(x, "y"); });
  Program built = b.build();
  Program parsed = testing::parseOrDie(R"(program with_blocks(S = 2) {
  input  x : f32[8]
  output y : f32[8]

  main = get_current_stream()
  for i in range(S) {
    with stream(i) {
      synchronize(main)
      t = copy(x)
    }
  }
  with main {
    y = copy(x)
  }
}
)");
  EXPECT_EQ(built, parsed) << printProgram(built);
  EXPECT_EQ(printProgram(built), printProgram(parsed));
  EXPECT_FALSE(verifyProgram(built).has_value());
}

}  // namespace
}  // namespace hostir
