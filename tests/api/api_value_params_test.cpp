// Float and dtype program parameters through the public API: their
// defaults, their values by kind, a run with them bound against a loop the
// test computes, and the refusals of a value of the wrong kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace {

using hostir::api::DType;
using hostir::api::Error;
using hostir::api::ErrorKind;
using hostir::api::HostBuffer;
using hostir::api::Params;
using hostir::api::ParamValue;
using hostir::api::Program;
using hostir::api::testing::errorOf;

Program sgdStep() {
  return Program::fromText(hostir::testing::testProgramText("api/programs/sgd_step.hir"), "sgd.hir");
}

// IEEE binary16 bits to a double, by the format's definition.
double fromHalfBits(uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  const double magnitude = exponent == 0 ? std::ldexp(fraction, -24) : std::ldexp(1024 + fraction, exponent - 25);
  return sign ? -magnitude : magnitude;
}

TEST(ApiValueParams, DefaultsKeepTheirKinds) {
  EXPECT_EQ(sgdStep().defaultParams(), (Params{{"DT", DType::BF16}, {"N", int64_t{8}}, {"lr", 0.5}}));
  EXPECT_EQ(Program::fromText(sgdStep().print()), sgdStep());
  EXPECT_NE(sgdStep().print().find("program sgd_step(N = 8, DT = bf16, lr = 0.5)"), std::string::npos);
  EXPECT_NE(sgdStep().print().find("low : DT[N]"), std::string::npos);
  EXPECT_NE(sgdStep().print().find("scale(g, by=lr)"), std::string::npos);
}

TEST(ApiValueParams, ADTypeParameterSetsTheDeclaredDType) {
  auto low = [](const Params& params) { return sgdStep().tensors(params).back(); };
  EXPECT_EQ(low({}).name, "low");
  EXPECT_EQ(low({}).dtype, DType::BF16);
  EXPECT_EQ(low({{"DT", DType::F64}, {"N", int64_t{3}}}).dtype, DType::F64);
  EXPECT_EQ(low({{"DT", DType::F64}, {"N", int64_t{3}}}).shape, std::vector<int64_t>{3});
}

TEST(ApiValueParams, ARunUsesTheBoundRateAndDType) {
  const int64_t n = 8;
  std::vector<float> x(n), g(n), y(n, NAN);
  std::vector<uint16_t> low(n, 0xffff);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.75f * static_cast<float>(i) - 2.0f;
    g[i] = 0.5f - 0.125f * static_cast<float>(i);
  }
  hostir::api::RunOptions options;
  options.params = {{"lr", 0.25}, {"DT", DType::F16}};
  hostir::api::run(sgdStep(), {{"x", {DType::F32, {n}, x.data()}}, {"g", {DType::F32, {n}, g.data()}}},
                   {{"y", {DType::F32, {n}, y.data()}}, {"low", {DType::F16, {n}, low.data()}}}, options);
  for (int64_t i = 0; i < n; ++i) {
    const double want = double(x[i]) - 0.25 * double(g[i]);  // exact in f32 for these values
    EXPECT_EQ(y[i], want) << "element " << i;
    EXPECT_NEAR(fromHalfBits(low[i]), want, std::ldexp(std::abs(want), -11)) << "element " << i;
  }
  // An integer for a number parameter is that number.
  options.params = {{"lr", int64_t{1}}, {"DT", DType::F16}};
  hostir::api::run(sgdStep(), {{"x", {DType::F32, {n}, x.data()}}, {"g", {DType::F32, {n}, g.data()}}},
                   {{"y", {DType::F32, {n}, y.data()}}, {"low", {DType::F16, {n}, low.data()}}}, options);
  EXPECT_EQ(y[3], x[3] - g[3]);
}

TEST(ApiValueParams, AValueOfTheWrongKindIsAUsageError) {
  auto refusal = [](Params params) {
    hostir::api::CheckOptions options;
    options.params = std::move(params);
    return errorOf([&] { hostir::api::check(sgdStep(), options); });
  };
  Error rate = refusal({{"lr", DType::F32}});
  EXPECT_EQ(rate.kind(), ErrorKind::Usage);
  EXPECT_EQ(rate.message(), "parameter lr = f32: lr takes a number");
  EXPECT_EQ(refusal({{"N", 0.5}}).message(), "parameter N = 0.5: N takes a non-negative integer");
  EXPECT_EQ(refusal({{"DT", int64_t{3}}}).message(), "parameter DT = 3: DT takes a dtype (f32, f16, bf16, f64 or i32)");
  EXPECT_EQ(refusal({{"lr", std::numeric_limits<double>::infinity()}}).message(),
            "parameter lr = inf: lr takes a finite number");
  EXPECT_NE(refusal({{"rate", 0.5}}).message().find("has no parameter 'rate'"), std::string::npos);
  // i32 is a dtype, but not one that cast converts to: the program's error, at the cast.
  Error indices = refusal({{"DT", DType::I32}});
  EXPECT_EQ(indices.kind(), ErrorKind::Program);
  EXPECT_NE(std::string(indices.what()).find("sgd.hir:10:"), std::string::npos) << indices.what();
}

TEST(ApiValueParams, SetTextReadsAsItsKind) {
  EXPECT_EQ(hostir::api::parseParamValue("1024"), ParamValue{int64_t{1024}});
  EXPECT_EQ(hostir::api::parseParamValue("0.01"), ParamValue{0.01});
  EXPECT_EQ(hostir::api::parseParamValue("1e-3"), ParamValue{1e-3});
  EXPECT_EQ(hostir::api::parseParamValue("-2.5"), ParamValue{-2.5});
  EXPECT_EQ(hostir::api::parseParamValue("bf16"), ParamValue{DType::BF16});
  for (const char* text : {"", "bf61", "1.0.0", "nan", "inf", "0x10", "1e999"})
    EXPECT_EQ(errorOf([&] { hostir::api::parseParamValue(text); }).kind(), ErrorKind::Usage) << text;
  EXPECT_EQ(hostir::api::toString(ParamValue{0.1}), "0.1");
  EXPECT_EQ(hostir::api::toString(ParamValue{2.0}), "2.0");
  EXPECT_EQ(hostir::api::toString(ParamValue{DType::F16}), "f16");
}

}  // namespace
