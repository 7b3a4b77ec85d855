// Stream and Event handles: idempotent destroy, wrapped streams never
// destroyed, every handle refused after reset, harmless without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "hostir/hostir.h"

namespace {

using hostir::api::Error;
using hostir::api::ErrorKind;
using hostir::api::Runtime;

template <typename Call>
std::string runtimeErrorOf(Call call) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime) << error.what();
    return error.message();
  }
  ADD_FAILURE() << "no hostir::api::Error was thrown";
  return "";
}

TEST(ApiRuntime, CreateUseAndDestroyTwice) {
  Runtime runtime("cpu");
  EXPECT_EQ(runtime.backend(), "cpu");
  EXPECT_FALSE(runtime.hasDevice());
  hostir::api::Stream s = runtime.createStream();
  hostir::api::Event e = runtime.createEvent();
  EXPECT_TRUE(s.valid());
  EXPECT_TRUE(e.valid());
  EXPECT_FALSE(s.external());
  EXPECT_EQ(s.nativeHandle(), nullptr);  // no native stream on the CPU
  runtime.record(e, s);
  runtime.wait(s, e);
  runtime.synchronize(s);
  EXPECT_EQ(runtime.liveHandles(), 2);
  runtime.destroy(s);
  runtime.destroy(s);
  runtime.destroy(e);
  runtime.destroy(e);
  EXPECT_FALSE(s.valid());
  EXPECT_EQ(runtime.liveHandles(), 0);
  EXPECT_NE(runtimeErrorOf([&] { runtime.synchronize(s); }).find("destroyed"), std::string::npos);
  hostir::api::Stream empty;
  EXPECT_FALSE(empty.valid());
  runtime.destroy(empty);
  EXPECT_NE(runtimeErrorOf([&] { runtime.synchronize(empty); }).find("empty"), std::string::npos);
}

TEST(ApiRuntime, WrappedStreamsKeepTheCallersHandle) {
  Runtime runtime("cpu");
  int callerStream = 0;
  hostir::api::Stream s = runtime.wrapStream(&callerStream);
  EXPECT_TRUE(s.external());
  EXPECT_EQ(s.nativeHandle(), &callerStream);
  runtime.destroy(s);
  EXPECT_FALSE(s.valid());
}

TEST(ApiRuntime, EveryHandleIsRefusedAfterReset) {
  Runtime runtime("cpu");
  hostir::api::Stream s = runtime.createStream();
  hostir::api::Event e = runtime.createEvent();
  runtime.reset();
  runtime.reset();
  EXPECT_FALSE(s.valid());
  EXPECT_FALSE(e.valid());
  EXPECT_NE(runtimeErrorOf([&] { s.nativeHandle(); }).find("reset"), std::string::npos);
  EXPECT_NE(runtimeErrorOf([&] { runtime.record(e, s); }).find("reset"), std::string::npos);
  EXPECT_NE(runtimeErrorOf([&] { runtime.createStream(); }).find("reset"), std::string::npos);
  runtime.destroy(s);  // still idempotent
}

TEST(ApiRuntime, HandlesOutliveTheirRuntimeSafely) {
  hostir::api::Stream s;
  {
    Runtime runtime("cpu");
    s = runtime.createStream();
  }
  EXPECT_FALSE(s.valid());
  EXPECT_NE(runtimeErrorOf([&] { s.nativeHandle(); }).find("reset"), std::string::npos);
}

TEST(ApiRuntime, HandlesOfAnotherRuntimeAreRefused) {
  Runtime a("cpu"), b("cpu");
  hostir::api::Stream s = a.createStream();
  hostir::api::Event e = b.createEvent();
  EXPECT_NE(runtimeErrorOf([&] { b.record(e, s); }).find("another runtime"), std::string::npos);
  b.destroy(s);  // not b's: nothing happens
  EXPECT_TRUE(s.valid());
}

TEST(ApiRuntime, UnknownBackendIsAUsageError) {
  try {
    Runtime runtime("tpu");
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
  }
}

TEST(ApiRuntime, ACallersStreamServesOneRank) {
  Runtime runtime("cpu");
  hostir::api::Stream s = runtime.createStream();
  hostir::api::Program p =
      hostir::api::Program::fromText("program p() {\n  output y : f32[2]\n  y = allocate(f32[2], zero=true)\n}\n");
  std::vector<float> y(2, 1);
  hostir::api::RunOptions options;
  options.mainStream = &s;
  options.backend = "cpu";
  hostir::api::run(p, {}, {{"y", {hostir::api::DType::F32, {2}, y.data()}}}, options);
  EXPECT_EQ(y, (std::vector<float>{0, 0}));
  options.ranks = 2;
  try {
    hostir::api::run(p, {}, {}, options);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
  }
  options.ranks = 1;
  runtime.reset();
  EXPECT_NE(runtimeErrorOf([&] { hostir::api::run(p, {}, {}, options); }).find("reset"), std::string::npos);
}

}  // namespace
