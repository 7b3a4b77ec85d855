// Tests of the .npy reader and writer: round trips, hand-made files for every
// header variant and rejection, cross-checks against NumPy (when a Python
// with numpy is available), and random mutations of valid files.
#include "api/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ir/half.h"

namespace hostir {
namespace {

namespace fs = std::filesystem;

constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32};

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const fs::path& path, const std::string& bytes) {
  // Removing first is much faster than truncating on ext4, which flushes a
  // file replaced by truncation; the fuzz tests write thousands of files.
  std::error_code ec;
  fs::remove(path, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string bytesOf(const std::vector<std::byte>& data) {
  return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

int64_t numElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Value i of the test arrays: i * 0.5 - 3, exact in every dtype for i < 24.
double testValue(int64_t i) { return static_cast<double>(i) * 0.5 - 3.0; }

// `count` test values of `dtype`, little-endian bytes.
std::string testData(DType dtype, int64_t count) {
  std::string out;
  for (int64_t i = 0; i < count; ++i) {
    double v = testValue(i % 64);
    char buf[8];
    size_t n = dtypeSize(dtype);
    switch (dtype) {
      case DType::F32: {
        float f = static_cast<float>(v);
        std::memcpy(buf, &f, 4);
        break;
      }
      case DType::F64: std::memcpy(buf, &v, 8); break;
      case DType::F16: {
        uint16_t b = toHalf(static_cast<float>(v)).bits;
        std::memcpy(buf, &b, 2);
        break;
      }
      case DType::BF16: {
        uint16_t b = toBFloat16(static_cast<float>(v)).bits;
        std::memcpy(buf, &b, 2);
        break;
      }
      case DType::I32: {
        int32_t k = static_cast<int32_t>(i % 64) - 3;  // indices: whole numbers, -1 and below included
        std::memcpy(buf, &k, 4);
        break;
      }
    }
    out.append(buf, n);
  }
  return out;
}

std::string reversedItems(const std::string& data, size_t itemSize) {
  std::string out = data;
  for (size_t i = 0; i + itemSize <= out.size(); i += itemSize)
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(i + itemSize));
  return out;
}

// A .npy file with `header` verbatim (no padding added) and `data`.
std::string rawNpy(const std::string& header, const std::string& data, int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t lenBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lenBytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

// A well-formed .npy file: the standard dict, padded to 64 bytes.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data, bool fortran = false,
                int major = 1) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  return rawNpy(header + "\n", data, major);
}

// The first Python interpreter that can import numpy, or nothing.
const std::optional<std::string>& pythonWithNumpy() {
  static const std::optional<std::string> python = []() -> std::optional<std::string> {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("HOSTIR_PYTHON")) candidates.push_back(env);
    candidates.insert(candidates.end(), {"python3", "/usr/bin/python3", "python"});
    for (const std::string& c : candidates)
      if (std::system((c + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return c;
    return std::nullopt;
  }();
  return python;
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("hostir_npy_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes `bytes` to NAME and expects reading it to fail with a message that
  // names the file and contains every one of `parts`.
  void expectRejected(const std::string& name, const std::string& bytes, std::vector<std::string> parts,
                      std::optional<DType> expected = std::nullopt) {
    std::string p = path(name);
    writeFile(p, bytes);
    Result<HostTensor> r = readNpy(p, expected);
    ASSERT_FALSE(r.ok()) << name << " was accepted";
    const std::string& msg = r.error().message;
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    for (const std::string& part : parts)
      EXPECT_NE(msg.find(part), std::string::npos) << "message for " << name << " lacks '" << part << "': " << msg;
  }

  // Runs `script` with the numpy-enabled Python and argument dir_; returns its
  // output, failing the test when it exits non-zero.
  std::string runPython(const std::string& script) {
    std::string scriptPath = path("script.py"), logPath = path("script.log");
    writeFile(scriptPath, script);
    std::string cmd = *pythonWithNumpy() + " '" + scriptPath + "' '" + dir_.string() + "' >'" + logPath + "' 2>&1";
    int rc = std::system(cmd.c_str());
    std::string log = readFile(logPath);
    EXPECT_EQ(rc, 0) << "python failed:\n" << log;
    return log;
  }

  fs::path dir_;
};

// --- writing and reading back ----------------------------------------------------

TEST_F(NpyTest, RoundTripAllDTypesAndShapes) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {7}, {0}, {3, 0, 2}, {2, 3, 4}, {1, 1, 5}, {2, 0}, {4, 1}};
  for (DType dtype : kAllDTypes) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " rank " + std::to_string(shape.size()));
      std::string data = testData(dtype, numElements(shape));
      std::string p = path("rt.npy");
      ASSERT_EQ(writeNpy(p, dtype, shape, data.data()), std::nullopt);

      std::string file = readFile(p);
      ASSERT_GE(file.size(), 10u);
      EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      size_t headerLen =
          static_cast<unsigned char>(file[8]) | (static_cast<size_t>(static_cast<unsigned char>(file[9])) << 8);
      EXPECT_EQ((10 + headerLen) % 64, 0u);
      EXPECT_EQ(file[10 + headerLen - 1], '\n');
      EXPECT_EQ(file.size(), 10 + headerLen + data.size());

      std::vector<std::optional<DType>> expectations = {dtype};
      if (dtype != DType::BF16) expectations.push_back(std::nullopt);
      for (auto expected : expectations) {
        Result<HostTensor> r = readNpy(p, expected);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->dtype, dtype);
        EXPECT_EQ(r->shape, shape);
        EXPECT_EQ(bytesOf(r->data), data);
      }
    }
  }
}

TEST_F(NpyTest, WrittenHeaderText) {
  struct Case {
    DType dtype;
    std::vector<int64_t> shape;
    std::string dict;
  };
  const Case cases[] = {
      {DType::F32, {2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
      {DType::F64, {7}, "{'descr': '<f8', 'fortran_order': False, 'shape': (7,), }"},
      {DType::F16, {}, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }"},
      {DType::BF16, {0, 4}, "{'descr': '<u2', 'fortran_order': False, 'shape': (0, 4), }"},
      {DType::I32, {5}, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }"},
  };
  for (const Case& c : cases) {
    std::string p = path("h.npy");
    std::string data = testData(c.dtype, numElements(c.shape));
    ASSERT_EQ(writeNpy(p, c.dtype, c.shape, data.data()), std::nullopt);
    std::string file = readFile(p);
    size_t headerLen =
        static_cast<unsigned char>(file[8]) | (static_cast<size_t>(static_cast<unsigned char>(file[9])) << 8);
    EXPECT_EQ(headerLen, 118u);
    std::string header = file.substr(10, headerLen);
    EXPECT_EQ(header.substr(0, c.dict.size()), c.dict);
    EXPECT_EQ(header.find_first_not_of(' ', c.dict.size()), headerLen - 1) << header;
    EXPECT_EQ(header.back(), '\n');
  }
}

TEST_F(NpyTest, Version2WhenHeaderTooLong) {
  std::vector<int64_t> shape(25000, 1);
  shape[100] = 3;
  std::string data = testData(DType::F32, 3);
  std::string p = path("v2.npy");
  ASSERT_EQ(writeNpy(p, DType::F32, shape, data.data()), std::nullopt);
  std::string file = readFile(p);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  size_t headerLen = 0;
  for (int i = 0; i < 4; ++i) headerLen |= static_cast<size_t>(static_cast<unsigned char>(file[8 + i])) << (8 * i);
  EXPECT_GT(headerLen, 0xffffu);
  EXPECT_EQ((12 + headerLen) % 64, 0u);
  EXPECT_EQ(file[12 + headerLen - 1], '\n');
  Result<HostTensor> r = readNpy(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->shape, shape);
  EXPECT_EQ(bytesOf(r->data), data);
}

TEST_F(NpyTest, WriteErrors) {
  float x = 0;
  Status s = writeNpy(path("neg.npy"), DType::F32, {2, -1}, &x);
  ASSERT_TRUE(s);
  EXPECT_NE(s->message.find("neg.npy"), std::string::npos);
  EXPECT_NE(s->message.find("negative dimension"), std::string::npos) << s->message;

  s = writeNpy(path("big.npy"), DType::F64, {int64_t{1} << 40, int64_t{1} << 40}, &x);
  ASSERT_TRUE(s);
  EXPECT_NE(s->message.find("overflows"), std::string::npos) << s->message;

  s = writeNpy(path("null.npy"), DType::F32, {3}, nullptr);
  ASSERT_TRUE(s);
  EXPECT_NE(s->message.find("no data"), std::string::npos) << s->message;
  EXPECT_EQ(writeNpy(path("empty.npy"), DType::F32, {0, 3}, nullptr), std::nullopt);

  std::string missingDir = path("no/such/dir/out.npy");
  s = writeNpy(missingDir, DType::F32, {1}, &x);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->message.rfind(missingDir + ": cannot write", 0), 0u) << s->message;
  EXPECT_NE(s->message.find("No such file or directory"), std::string::npos) << s->message;
}

// --- header variants ---------------------------------------------------------------

TEST_F(NpyTest, ReadsVersions2And3AndHeaderSpellings) {
  std::string f4 = testData(DType::F32, 6);
  struct Case {
    std::string name, file;
  };
  const Case cases[] = {
      {"v2", npy("<f4", "(2, 3)", f4, false, 2)},
      {"v3", npy("<f4", "(2, 3)", f4, false, 3)},
      {"v3 no padding", rawNpy("{'descr':'<f4','fortran_order':False,'shape':(2,3)}", f4, 3)},
      {"double quotes, key order", rawNpy("{\"shape\": (2, 3), \"descr\": \"<f4\", "
                                          "\"fortran_order\": False}\n",
                                          f4)},
      {"native order", npy("=f4", "(2, 3)", f4)},
      {"no order char", npy("f4", "(2, 3)", f4)},
      {"python2 longs", npy("<f4", "(2L, 3L)", f4)},
      {"spaces and tabs", rawNpy(" {\t'descr' : '<f4' ,\n'fortran_order' : False , "
                                 "'shape' : ( 2 , 3 , ) , }  \n",
                                 f4)},
  };
  for (const Case& c : cases) {
    std::string p = path("v.npy");
    writeFile(p, c.file);
    Result<HostTensor> r = readNpy(p, DType::F32);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message;
    EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 3})) << c.name;
    EXPECT_EQ(bytesOf(r->data), f4) << c.name;
  }
}

TEST_F(NpyTest, BigEndianIsSwapped) {
  for (DType dtype : kAllDTypes) {
    std::string data = testData(dtype, 24);
    size_t n = dtypeSize(dtype);
    std::string descr = dtype == DType::F32   ? ">f4"
                        : dtype == DType::F64 ? ">f8"
                        : dtype == DType::F16 ? ">f2"
                        : dtype == DType::I32 ? ">i4"
                                              : ">u2";
    std::string p = path("be.npy");
    writeFile(p, npy(descr, "(4, 6)", reversedItems(data, n)));
    Result<HostTensor> r = readNpy(p, dtype);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->dtype, dtype);
    EXPECT_EQ(r->shape, (std::vector<int64_t>{4, 6}));
    EXPECT_EQ(bytesOf(r->data), data) << descr;
  }
}

TEST_F(NpyTest, FortranOrderIsTransposedToC) {
  // Element (i, j, k) of a 2x3x4 array has value index 12i + 4j + k.
  const std::vector<int64_t> shapes[] = {{2, 3, 4}, {2, 3}, {1, 2, 1, 3}, {5}, {3, 0}, {}};
  for (const auto& shape : shapes) {
    for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
      size_t n = dtypeSize(dtype);
      std::string c = testData(dtype, numElements(shape));
      // Fortran order: first index fastest.
      std::string fortran(c.size(), '\0');
      std::vector<int64_t> idx(shape.size(), 0);
      for (int64_t e = 0; e < numElements(shape); ++e) {
        int64_t cOff = 0, fOff = 0, stride = 1;
        for (size_t k = 0; k < shape.size(); ++k) cOff = cOff * shape[k] + idx[k];
        for (size_t k = 0; k < shape.size(); ++k) {
          fOff += idx[k] * stride;
          stride *= shape[k];
        }
        fortran.replace(static_cast<size_t>(fOff) * n, n, c, static_cast<size_t>(cOff) * n, n);
        for (size_t k = shape.size(); k-- > 0;) {
          if (++idx[k] < shape[k]) break;
          idx[k] = 0;
        }
      }
      std::string shapeText = "(";
      for (int64_t d : shape) shapeText += std::to_string(d) + ",";
      shapeText += ")";
      std::string p = path("f.npy");
      writeFile(p, npy(dtype == DType::F32 ? "<f4" : dtype == DType::F64 ? "<f8" : "<f2", shapeText, fortran, true));
      Result<HostTensor> r = readNpy(p);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->shape, shape);
      EXPECT_EQ(bytesOf(r->data), c) << shapeText;
    }
  }
}

// --- rejections ----------------------------------------------------------------------

TEST_F(NpyTest, RejectsMissingFileAndDirectory) {
  std::string p = path("missing.npy");
  Result<HostTensor> r = readNpy(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, p + ": cannot open .npy file: No such file or directory");

  r = readNpy(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, dir_.string() + ": cannot read .npy file: it is a directory");
}

TEST_F(NpyTest, RejectsBadMagicAndTruncatedPreamble) {
  expectRejected("empty.npy", "", {"empty file", "not a NumPy .npy file"});
  expectRejected("text.npy", "hello world, this is text\n", {"not a NumPy .npy file", "bad magic"});
  expectRejected("zip.npy", std::string("PK\x03\x04", 4) + std::string(100, '\0'), {"bad magic"});
  expectRejected("short.npy", "\x93NU", {"not a NumPy .npy file", "truncated inside the magic"});
  expectRejected("noversion.npy", "\x93NUMPY\x01", {"truncated", "format version"});
  expectRejected("nolen.npy", std::string("\x93NUMPY\x01\x00\x40", 9), {"truncated .npy header", "header length"});
  expectRejected("nolen2.npy", std::string("\x93NUMPY\x02\x00\x40\x00\x00", 11), {"truncated .npy header"});
  expectRejected("v4.npy", npy("<f4", "(1,)", testData(DType::F32, 1), false, 4),
                 {"unsupported .npy format version 4.0", "1.0, 2.0, 3.0"});
  std::string v11 = npy("<f4", "(1,)", testData(DType::F32, 1));
  v11[7] = 1;
  expectRejected("v11.npy", v11, {"unsupported .npy format version 1.1"});
}

TEST_F(NpyTest, RejectsTruncatedHeader) {
  std::string good = npy("<f4", "(2, 3)", testData(DType::F32, 6));
  expectRejected("trunc.npy", good.substr(0, 40),
                 {"truncated .npy header", "claims 118 bytes", "only 30 after the preamble"});
  std::string huge = "\x93NUMPY\x02";
  huge += std::string("\0\xff\xff\xff\x7f", 5);
  expectRejected("hugeheader.npy", huge + "{}", {"header claims 2147483647 bytes", "limit"});
}

TEST_F(NpyTest, RejectsMalformedHeaderDict) {
  std::string d = testData(DType::F32, 6);
  struct Case {
    std::string name, header;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"notdict", "['descr', '<f4']\n", {"malformed .npy header", "expected a dict, found a list"}},
      {"unclosed",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)\n",
       {"malformed .npy header", "expected ',' or '}'"}},
      {"garbage",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk\n",
       {"malformed .npy header", "after the header dict"}},
      {"unterminated", "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}\n", {"malformed .npy header"}},
      {"nocolon",
       "{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}\n",
       {"malformed .npy header", "expected ':'"}},
      {"nodescr", "{'fortran_order': False, 'shape': (2, 3)}\n", {"missing key 'descr'"}},
      {"noshape", "{'descr': '<f4', 'fortran_order': False}\n", {"missing key 'shape'"}},
      {"nofortran", "{'descr': '<f4', 'shape': (2, 3)}\n", {"missing key 'fortran_order'"}},
      {"extra", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}\n", {"unexpected key 'x'"}},
      {"dup", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\n", {"duplicate key 'descr'"}},
      {"intkey", "{1: '<f4', 'fortran_order': False, 'shape': (2, 3)}\n", {"a key is an integer"}},
      {"fortranstr", "{'descr': '<f4', 'fortran_order': 'no', 'shape': (2, 3)}\n", {"'fortran_order' is a string"}},
      {"shapelist", "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}\n", {"'shape' is a list, not a tuple"}},
      {"shapeint", "{'descr': '<f4', 'fortran_order': False, 'shape': (6)}\n", {"'shape' is an integer, not a tuple"}},
      {"shapestr", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, '3')}\n", {"a 'shape' entry is a string"}},
      {"shapefloat", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0)}\n", {"malformed integer"}},
      {"negative", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3)}\n", {"negative dimension -2"}},
      {"descrint", "{'descr': 4, 'fortran_order': False, 'shape': (2, 3)}\n", {"'descr' is an integer, not a string"}},
      {"deep",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': " + std::string(100, '(') +
           std::string(100, ')') + "}\n",
       {"nested too deeply"}},
      {"binary", std::string("{'descr': '<f4', \x01\xff", 19) + "\n", {"unexpected '\\x01\\xff"}},
      {"empty", "\n", {"header ends where a value was expected"}},
  };
  for (const Case& c : cases) expectRejected(c.name + ".npy", rawNpy(c.header, d), c.parts);
}

TEST_F(NpyTest, RejectsUnsupportedDTypes) {
  std::string four(24, '\0');
  const char* supported = "supported: '<f4' (f32), '<f8' (f64), '<f2' (f16), '<i4' (i32), and '<u2'";
  expectRejected("i8.npy", npy("<i8", "(3,)", four), {"unsupported dtype '<i8'", supported});
  expectRejected("u4.npy", npy("<u4", "(6,)", four), {"unsupported dtype '<u4'", supported});
  expectRejected("c8.npy", npy("<c8", "(3,)", four), {"unsupported dtype '<c8'", supported});
  expectRejected("f16.npy", npy("<f16", "(1,)", std::string(16, '\0')), {"unsupported dtype '<f16'"});
  expectRejected("str.npy", npy("<U3", "(2,)", four), {"unsupported dtype '<U3'"});
  expectRejected("obj.npy", npy("|O", "(3,)", four), {"object arrays", "'|O'", "not supported"});
  expectRejected("struct.npy",
                 rawNpy("{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, "
                        "'shape': (3,)}\n",
                        four),
                 {"structured dtypes", "not supported"});
  // uint16 only when bf16 is expected.
  expectRejected("u2.npy", npy("<u2", "(12,)", four), {"'<u2' (uint16)", "bf16"});
  expectRejected("u2f32.npy", npy("<u2", "(12,)", four), {"'<u2' (uint16)"}, DType::F32);
  // A different dtype than expected.
  expectRejected("f8asf4.npy", npy("<f8", "(3,)", four), {"holds f64 data (dtype '<f8') but f32 was expected"},
                 DType::F32);
  expectRejected("f4asbf16.npy", npy("<f4", "(6,)", four), {"holds f32 data", "bf16 was expected", "'<u2' raw bits"},
                 DType::BF16);
}

TEST_F(NpyTest, RejectsWrongDataSize) {
  std::string d = testData(DType::F32, 6);
  expectRejected("short.npy", npy("<f4", "(2, 3)", d.substr(0, 20)),
                 {"data is truncated", "shape (2, 3) of f32 needs 24 bytes", "the file has 20"});
  expectRejected("long.npy", npy("<f4", "(2, 3)", d + "xyz"), {"3 bytes after the data", "needs 24 bytes"});
  expectRejected("nodata.npy", npy("<f8", "()", ""), {"shape () of f64 needs 8 bytes"});
  expectRejected("emptyextra.npy", npy("<f4", "(0, 3)", "abcd"), {"4 bytes after the data"});
  // A header claiming terabytes must fail before anything is allocated.
  expectRejected("claims.npy", npy("<f8", "(1000000, 1000000)", d), {"data is truncated"});
}

TEST_F(NpyTest, RejectsShapeOverflow) {
  std::string d = testData(DType::F32, 6);
  expectRejected("ovf1.npy", npy("<f4", "(4611686018427387904, 4)", d), {"shape (4611686018427387904, 4) overflows"});
  expectRejected("ovf2.npy", npy("<f8", "(2305843009213693952,)", d), {"overflows"});
  expectRejected("ovf3.npy", npy("<f4", "(99999999999999999999999,)", d), {"shape overflows", "64 bits"});
  expectRejected("ovf4.npy", npy("<f4", "(65536, 65536, 65536, 65536)", d), {"overflows"});
  // A zero dimension makes the product 0 whatever the others are.
  std::string p = path("zero.npy");
  writeFile(p, npy("<f4", "(4611686018427387904, 0, 4611686018427387904)", ""));
  Result<HostTensor> r = readNpy(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->data.empty());
}

// --- random mutations ----------------------------------------------------------------

TEST_F(NpyTest, RandomMutationsNeverCrash) {
  std::vector<std::string> seeds;
  std::vector<DType> seedTypes;
  for (DType dtype : kAllDTypes) {
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{}, {3}, {2, 3, 2}, {0, 2}}) {
      std::string data = testData(dtype, numElements(shape));
      std::string p = path("seed.npy");
      ASSERT_EQ(writeNpy(p, dtype, shape, data.data()), std::nullopt);
      seeds.push_back(readFile(p));
      seedTypes.push_back(dtype);
    }
  }
  std::string f = testData(DType::F32, 6);
  seeds.push_back(npy("<f4", "(2, 3)", f, false, 2));
  seeds.push_back(npy(">f4", "(3, 2)", f, true, 3));
  seeds.push_back(rawNpy("{'descr':'<f4','fortran_order':True,'shape':(1,2,3)}", f));
  seedTypes.resize(seeds.size(), DType::F32);

  const std::string interesting = "(){}[],:'\"-+0123456789 \nLTFNx<>|=fuO\\";
  std::mt19937 rng(12345);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string p = path("fuzz.npy");
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 10000; ++iter) {
    size_t seed = pick(seeds.size());
    std::string file = seeds[seed];
    int mutations = pick(2) ? 1 : 2 + static_cast<int>(pick(3));
    for (int m = 0; m < mutations; ++m) {
      // Most mutations hit the preamble and header, where the parsing is.
      size_t limit = pick(4) == 0 ? file.size() : std::min<size_t>(file.size(), 140);
      size_t at = limit ? pick(limit) : 0;
      switch (pick(8)) {
        case 0:
          if (at < file.size()) file[at] = static_cast<char>(file[at] ^ (1 << pick(8)));
          break;
        case 1:
          if (at < file.size()) file[at] = static_cast<char>(pick(256));
          break;
        case 2:
          if (at < file.size()) file[at] = interesting[pick(interesting.size())];
          break;
        case 3: file.resize(at); break;
        case 4: file.insert(at, 1 + pick(8), interesting[pick(interesting.size())]); break;
        case 5: file.erase(at, 1 + pick(8)); break;
        case 6:  // header length bytes
          if (file.size() > 11) file[8 + pick(4)] = static_cast<char>(pick(256));
          break;
        case 7:  // duplicate a piece
          if (at < file.size()) file.insert(at, file.substr(at, 1 + pick(16)));
          break;
      }
    }
    writeFile(p, file);
    // Mostly the seed's dtype, so that mutations reach past the descr check.
    std::optional<DType> expected = seedTypes[seed];
    if (size_t e = pick(8); e < std::size(kAllDTypes))
      expected = kAllDTypes[e];
    else if (e == std::size(kAllDTypes))
      expected = std::nullopt;
    Result<HostTensor> r = readNpy(p, expected);
    if (r.ok()) {
      ++accepted;
      int64_t n = 1;
      for (int64_t d : r->shape) {
        ASSERT_GE(d, 0);
        n *= d;
      }
      ASSERT_EQ(r->data.size(), static_cast<size_t>(n) * dtypeSize(r->dtype));
      if (expected) {
        ASSERT_EQ(r->dtype, *expected);
      }
    } else {
      ++rejected;
      const std::string& msg = r.error().message;
      ASSERT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
      ASSERT_GT(msg.size(), p.size() + 2);
      for (char c : msg) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in message: " << msg;
    }
  }
  std::cout << "mutated files accepted: " << accepted << ", rejected: " << rejected << "\n";
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 5000);
}

// Headers assembled from random tokens, and random valid headers that must be
// read correctly.
TEST_F(NpyTest, RandomHeaders) {
  const std::vector<std::string> tokens = {"{",       "}",       "(",
                                           ")",       "[",       "]",
                                           ",",       ":",       " ",
                                           "\n",      "'",       "\"",
                                           "'descr'", "'shape'", "'fortran_order'",
                                           "'<f4'",   "'>f2'",   "'<u2'",
                                           "'|O'",    "True",    "False",
                                           "None",    "0",       "1",
                                           "3",       "-1",      "99999999999999999999",
                                           "2L",      "1.5",     "\\",
                                           "\x01"};
  std::mt19937 rng(777);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string p = path("hdr.npy");
  for (int iter = 0; iter < 3000; ++iter) {
    std::string header;
    size_t n = pick(40);
    for (size_t i = 0; i < n; ++i) header += tokens[pick(tokens.size())];
    writeFile(p, rawNpy(header, std::string(pick(64), 'x'), 1 + static_cast<int>(pick(3))));
    Result<HostTensor> r = readNpy(p, pick(2) ? std::optional<DType>(DType::BF16) : std::nullopt);
    if (!r.ok()) {
      ASSERT_EQ(r.error().message.rfind(p + ": ", 0), 0u) << r.error().message;
    }
  }

  const char* descrs[] = {"<f4", "<f8", "<f2", "<u2", "<i4", ">f4", ">f8", ">f2", ">u2", ">i4"};
  const DType types[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32};
  for (int iter = 0; iter < 1000; ++iter) {
    size_t t = pick(10);
    DType dtype = types[t % 5];
    std::vector<int64_t> shape(pick(5));
    for (int64_t& d : shape) d = static_cast<int64_t>(pick(4));
    std::string shapeText = "(";
    for (int64_t d : shape) shapeText += std::to_string(d) + (pick(2) ? "," : ", ");
    shapeText += ")";
    std::string data = testData(dtype, numElements(shape));
    bool fortran = pick(2);
    std::string p2 = path("valid.npy");
    writeFile(p2, npy(descrs[t], shapeText, t < 5 ? data : reversedItems(data, dtypeSize(dtype)), fortran,
                      1 + static_cast<int>(pick(3))));
    Result<HostTensor> r = readNpy(p2, dtype);
    ASSERT_TRUE(r.ok()) << descrs[t] << " " << shapeText << ": " << r.error().message;
    ASSERT_EQ(r->shape, shape);
    ASSERT_EQ(r->dtype, dtype);
    // C order must come back exactly (Fortran order is covered above).
    if (!fortran) {
      ASSERT_EQ(bytesOf(r->data), data);
    } else {
      ASSERT_EQ(r->data.size(), data.size());
    }
  }
}

// --- cross-checks with NumPy -----------------------------------------------------

TEST_F(NpyTest, NumpyWritesWeRead) {
  if (!pythonWithNumpy()) GTEST_SKIP() << "no Python with numpy (apt-get install python3-numpy)";
  runPython(R"PY(
import os, sys
import numpy as np
d = sys.argv[1]
base = (np.arange(24, dtype=np.float64) * 0.5 - 3.0).reshape(2, 3, 4)
bf16 = (base.astype('<f4').view('<u4') >> 16).astype('<u2')

def save(name, arr, version=None, use_save=False):
    path = os.path.join(d, name + '.npy')
    if use_save:
        np.save(path, arr, allow_pickle=True)
    else:
        with open(path, 'wb') as f:
            np.lib.format.write_array(f, arr, version=version, allow_pickle=True)
    if arr.dtype != object and arr.dtype.names is None:
        le = arr.astype(arr.dtype.newbyteorder('<'))
        with open(os.path.join(d, name + '.bin'), 'wb') as f:
            f.write(le.tobytes(order='C'))

save('f4_3d', base.astype('<f4'), use_save=True)
save('f8_3d', base, use_save=True)
save('f2_3d', base.astype('<f2'))
save('bf16_3d', bf16)
save('f4_0d', np.array(1.5, dtype='<f4'))
save('f4_1d', np.arange(5, dtype='<f4'))
save('f8_empty', np.zeros((2, 0, 3)))
save('be_f4', base.astype('>f4'))
save('be_f8', base.astype('>f8'))
save('be_f2', base.astype('>f2'))
save('be_bf16', bf16.astype('>u2'))
save('fortran_f4', np.asfortranarray(base.astype('<f4')))
save('fortran_f8', np.asfortranarray(base.reshape(2, 3, 1, 4)))
save('fortran_be_f2', np.asfortranarray(base.astype('>f2')))
save('fortran_bf16', np.asfortranarray(bf16.reshape(6, 4)))
save('v2_f4', base.astype('<f4'), version=(2, 0))
save('v3_f8', base, version=(3, 0))
save('i4_3d', (np.arange(24) - 3).reshape(2, 3, 4).astype('<i4'))
save('be_i4', (np.arange(24) - 3).reshape(2, 3, 4).astype('>i4'))
save('reject_i8', np.arange(3, dtype='<i8'))
save('reject_c8', np.arange(3, dtype='<c8'))
save('reject_obj', np.array([1, 'a', None], dtype=object))
save('reject_struct', np.zeros(2, dtype=[('a', '<f4'), ('b', '<f8')]))
save('reject_u2', bf16)
print('ok')
)PY");
  if (HasFailure()) return;

  struct Case {
    std::string name;
    std::optional<DType> expected;
    DType dtype;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {"f4_3d", std::nullopt, DType::F32, {2, 3, 4}},
      {"f8_3d", DType::F64, DType::F64, {2, 3, 4}},
      {"f2_3d", std::nullopt, DType::F16, {2, 3, 4}},
      {"bf16_3d", DType::BF16, DType::BF16, {2, 3, 4}},
      {"f4_0d", DType::F32, DType::F32, {}},
      {"f4_1d", std::nullopt, DType::F32, {5}},
      {"f8_empty", std::nullopt, DType::F64, {2, 0, 3}},
      {"be_f4", std::nullopt, DType::F32, {2, 3, 4}},
      {"be_f8", std::nullopt, DType::F64, {2, 3, 4}},
      {"be_f2", DType::F16, DType::F16, {2, 3, 4}},
      {"be_bf16", DType::BF16, DType::BF16, {2, 3, 4}},
      {"fortran_f4", std::nullopt, DType::F32, {2, 3, 4}},
      {"fortran_f8", std::nullopt, DType::F64, {2, 3, 1, 4}},
      {"fortran_be_f2", std::nullopt, DType::F16, {2, 3, 4}},
      {"fortran_bf16", DType::BF16, DType::BF16, {6, 4}},
      {"v2_f4", std::nullopt, DType::F32, {2, 3, 4}},
      {"v3_f8", std::nullopt, DType::F64, {2, 3, 4}},
      {"i4_3d", std::nullopt, DType::I32, {2, 3, 4}},
      {"be_i4", DType::I32, DType::I32, {2, 3, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<HostTensor> r = readNpy(path(c.name + ".npy"), c.expected);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->dtype, c.dtype);
    EXPECT_EQ(r->shape, c.shape);
    EXPECT_EQ(bytesOf(r->data), readFile(path(c.name + ".bin")));
    if (c.shape == std::vector<int64_t>{2, 3, 4} || c.shape == std::vector<int64_t>{2, 3, 1, 4} ||
        c.shape == std::vector<int64_t>{6, 4}) {
      EXPECT_EQ(bytesOf(r->data), testData(c.dtype, 24));  // values in C order
    }
  }
  Result<HostTensor> zeroD = readNpy(path("f4_0d.npy"));
  ASSERT_TRUE(zeroD.ok());
  float v;
  std::memcpy(&v, zeroD->data.data(), 4);
  EXPECT_EQ(v, 1.5f);

  auto rejected = [&](const std::string& name, const std::string& part) {
    Result<HostTensor> r = readNpy(path(name + ".npy"));
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.error().message.find(part), std::string::npos) << r.error().message;
  };
  rejected("reject_i8", "unsupported dtype '<i8'");
  rejected("reject_c8", "unsupported dtype '<c8'");
  rejected("reject_obj", "object arrays");
  rejected("reject_struct", "structured dtypes");
  rejected("reject_u2", "'<u2' (uint16)");
}

TEST_F(NpyTest, WeWriteNumpyReads) {
  if (!pythonWithNumpy()) GTEST_SKIP() << "no Python with numpy (apt-get install python3-numpy)";
  struct Case {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {"f4_3d", DType::F32, {2, 3, 4}},    {"f8_3d", DType::F64, {2, 3, 4}},    {"f2_3d", DType::F16, {2, 3, 4}},
      {"bf16_3d", DType::BF16, {2, 3, 4}}, {"f4_0d", DType::F32, {}},           {"f8_1d", DType::F64, {24}},
      {"f2_1", DType::F16, {1}},           {"f4_empty", DType::F32, {2, 0, 3}}, {"f8_0", DType::F64, {0}},
      {"bf16_0d", DType::BF16, {}},        {"i4_3d", DType::I32, {2, 3, 4}},
  };
  for (const Case& c : cases) {
    std::string data = testData(c.dtype, numElements(c.shape));
    ASSERT_EQ(writeNpy(path(c.name + ".npy"), c.dtype, c.shape, data.data()), std::nullopt);
  }
  std::string log = runPython(R"PY(
import os, sys
import numpy as np
d = sys.argv[1]
vals = np.arange(24, dtype=np.float64) * 0.5 - 3.0
def bf16(a):
    return (a.astype('<f4').view('<u4') >> 16).astype('<u2')
cases = {
    'f4_3d': vals.reshape(2, 3, 4).astype('<f4'),
    'f8_3d': vals.reshape(2, 3, 4),
    'f2_3d': vals.reshape(2, 3, 4).astype('<f2'),
    'bf16_3d': bf16(vals.reshape(2, 3, 4)),
    'f4_0d': np.array(vals[0], dtype='<f4'),
    'f8_1d': vals,
    'f2_1': vals[:1].astype('<f2'),
    'f4_empty': np.zeros((2, 0, 3), dtype='<f4'),
    'f8_0': np.zeros((0,)),
    'bf16_0d': bf16(np.array(vals[0])),
    'i4_3d': (np.arange(24) - 3).reshape(2, 3, 4).astype('<i4'),
}
for name, want in cases.items():
    path = os.path.join(d, name + '.npy')
    with open(path, 'rb') as f:
        version = np.lib.format.read_magic(f)
        assert version == (1, 0), (name, version)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        assert f.tell() % 64 == 0, (name, f.tell())
        assert not fortran, name
    a = np.load(path, allow_pickle=False)
    assert a.dtype == want.dtype, (name, a.dtype, want.dtype)
    assert a.shape == want.shape, (name, a.shape, want.shape)
    assert np.array_equal(a, want), (name, a, want)
    print('checked', name)
print('all ok')
)PY");
  EXPECT_NE(log.find("all ok"), std::string::npos) << log;
}

}  // namespace
}  // namespace hostir
