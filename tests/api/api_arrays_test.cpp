// Host arrays through the public API: .npy files written and read back,
// malformed ones refused naming the file, and outputs compared with a
// reference within each dtype's tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"

namespace {

using hostir::api::DType;
using hostir::api::ErrorKind;
using hostir::api::HostArray;
using hostir::api::testing::errorOf;

class ApiArrays : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hostir_api_arrays_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

HostArray counting(DType dtype, std::vector<int64_t> shape) {
  HostArray a = HostArray::zeros(dtype, std::move(shape));
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<std::byte>(i * 7 + 3);
  return a;
}

TEST_F(ApiArrays, WrittenArraysReadBackAlike) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32}) {
    SCOPED_TRACE(hostir::api::toString(dtype));
    HostArray a = counting(dtype, {3, 5});
    EXPECT_EQ(a.data.size(), size_t(15 * hostir::api::elementBytes(dtype)));
    hostir::api::writeNpy(path("a.npy"), a.buffer());
    HostArray b = hostir::api::readNpy(path("a.npy"), dtype);
    EXPECT_EQ(b.dtype, dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST_F(ApiArrays, AFileThatIsNotTheArrayAskedForIsAnErrorNamingIt) {
  HostArray a = counting(DType::F32, {4});
  hostir::api::writeNpy(path("a.npy"), a.buffer());
  hostir::api::Error wrongType = errorOf([&] { hostir::api::readNpy(path("a.npy"), DType::F64); });
  EXPECT_EQ(wrongType.kind(), ErrorKind::Program);
  EXPECT_NE(wrongType.message().find(path("a.npy")), std::string::npos) << wrongType.message();
  std::ofstream(path("junk.npy")) << "not an npy file";
  hostir::api::Error junk = errorOf([&] { hostir::api::readNpy(path("junk.npy")); });
  EXPECT_EQ(junk.kind(), ErrorKind::Program);
  EXPECT_NE(junk.message().find(path("junk.npy")), std::string::npos) << junk.message();
  hostir::api::Error unwritable = errorOf([&] { hostir::api::writeNpy(path("missing/dir/a.npy"), a.buffer()); });
  EXPECT_EQ(unwritable.kind(), ErrorKind::Run);
}

TEST(ApiCompareOutputs, WithinTheToleranceIsAMatchAndBeyondItNamesTheWorst) {
  std::vector<float> reference = {1, -2, 3, 4}, same = reference, off = reference, nan = reference;
  off[2] += 0.01f;  // 1e-4 relative is f32's tolerance
  nan[1] = NAN;
  auto buffers = [](std::vector<float>& v) {
    return std::map<std::string, hostir::api::HostBuffer>{{"y", {DType::F32, {2, 2}, v.data()}}};
  };
  EXPECT_TRUE(hostir::api::compareOutputs(buffers(same), buffers(reference)).ok);
  hostir::api::OutputComparison c = hostir::api::compareOutputs(buffers(off), buffers(reference));
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.report.find("'y'"), std::string::npos) << c.report;
  EXPECT_NE(c.report.find("[1, 0]"), std::string::npos) << c.report;  // the worst element
  EXPECT_FALSE(hostir::api::compareOutputs(buffers(nan), buffers(reference)).ok);
  EXPECT_FALSE(hostir::api::compareOutputs({}, buffers(reference)).ok);  // a missing output
}

}  // namespace
