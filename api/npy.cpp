#include "api/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

#include "api/dtype_conversion.h"
#include "api/output_file.h"
#include "api/program_impl.h"
#include "hostir/npy.h"

namespace hostir {

static_assert(std::endian::native == std::endian::little, "the .npy reader and writer assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Headers longer than this are rejected before they are read; NumPy itself
// writes a few hundred bytes at most for any array it can represent.
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;
// Nesting depth of the header literal ({...(...)...}).
constexpr int kMaxDepth = 16;
// Data is read in pieces of this size, so a file that claims more data than
// it holds never makes us allocate more than it actually holds (plus one piece).
constexpr size_t kReadChunk = size_t{64} << 20;

Diagnostic error(const std::string& path, const std::string& problem) { return Diagnostic{{}, path + ": " + problem}; }

// `text` in single quotes, non-printable bytes as \xNN, at most 40 characters.
std::string quote(std::string_view text) {
  std::string out = "'";
  size_t n = 0;
  for (char c : text) {
    if (++n > 40) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\' && c != '\'') {
      out += c;
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out + "'";
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// --- The header: a Python dict literal -------------------------------------

struct PyValue {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool intOverflow = false;  // an integer outside int64
  bool boolean = false;
  std::vector<PyValue> items;   // Tuple, List; Dict keys
  std::vector<PyValue> values;  // Dict values
};

const char* kindName(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::Str: return "a string";
    case PyValue::Kind::Int: return "an integer";
    case PyValue::Kind::Bool: return "a boolean";
    case PyValue::Kind::None: return "None";
    case PyValue::Kind::Tuple: return "a tuple";
    case PyValue::Kind::List: return "a list";
    case PyValue::Kind::Dict: return "a dict";
  }
  return "?";
}

// Parses the subset of Python literals that .npy headers use. Errors are
// returned as a message (without the file name) in `error_`.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  std::optional<PyValue> parseAll() {
    std::optional<PyValue> v = parseValue(0);
    if (!v) return std::nullopt;
    skipSpace();
    if (pos_ != text_.size()) return fail("unexpected " + quote(text_.substr(pos_, 10)) + " after the header dict");
    return v;
  }

  const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return std::nullopt;
  }

  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  std::string where() const {
    if (pos_ >= text_.size()) return "at the end of the header";
    return "at " + quote(text_.substr(pos_, 10));
  }

  bool word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    size_t end = pos_ + w.size();
    if (end < text_.size()) {
      char c = text_[end];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') return false;
    }
    pos_ = end;
    return true;
  }

  std::optional<PyValue> parseValue(int depth) {
    if (depth > kMaxDepth) return fail("header is nested too deeply");
    skipSpace();
    if (pos_ >= text_.size()) return fail("header ends where a value was expected");
    char c = text_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') return parseString();
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return parseInt();
    if (c == '(' || c == '[') return parseSequence(depth);
    if (c == '{') return parseDict(depth);
    bool isTrue = word("True");
    if (isTrue || word("False")) {
      v.kind = PyValue::Kind::Bool;
      v.boolean = isTrue;
      return v;
    }
    if (word("None")) return v;
    return fail("unexpected " + quote(text_.substr(pos_, 10)) + " in the header");
  }

  std::optional<PyValue> parseString() {
    char q = text_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::Str;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') return fail("unterminated string in the header");
      char c = text_[pos_++];
      if (c == q) return v;
      if (c == '\\') {
        if (pos_ >= text_.size()) return fail("unterminated string in the header");
        char e = text_[pos_++];
        switch (e) {
          case 'n': v.str += '\n'; break;
          case 't': v.str += '\t'; break;
          case '\\':
          case '\'':
          case '"': v.str += e; break;
          default:
            v.str += '\\';
            v.str += e;
            break;
        }
      } else {
        v.str += c;
      }
    }
  }

  std::optional<PyValue> parseInt() {
    PyValue v;
    v.kind = PyValue::Kind::Int;
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    skipSpace();
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      return fail("malformed integer in the header " + where());
    // Magnitude in uint64 so that INT64_MIN fits; flag anything beyond.
    uint64_t mag = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      auto d = static_cast<uint64_t>(text_[pos_++] - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10)
        v.intOverflow = true;
      else
        mag = mag * 10 + d;
    }
    // Python 2 era files write long integers as 3L.
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    if (pos_ < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.'))
      return fail("malformed integer in the header " + where());
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (!v.intOverflow && (mag <= kMax || (negative && mag == kMax + 1))) {
      v.integer = negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    } else {
      v.intOverflow = true;
      v.integer = negative ? -1 : 0;
    }
    return v;
  }

  // '(' or '[': a tuple or list; '(x)' without a comma is just x.
  std::optional<PyValue> parseSequence(int depth) {
    char open = text_[pos_++];
    char close = open == '(' ? ')' : ']';
    PyValue v;
    v.kind = open == '(' ? PyValue::Kind::Tuple : PyValue::Kind::List;
    bool comma = false;
    while (true) {
      if (peek(close)) {
        ++pos_;
        break;
      }
      std::optional<PyValue> item = parseValue(depth + 1);
      if (!item) return std::nullopt;
      v.items.push_back(std::move(*item));
      if (peek(',')) {
        ++pos_;
        comma = true;
      } else if (peek(close)) {
        ++pos_;
        break;
      } else {
        return fail(std::string("expected ',' or '") + close + "' in the header " + where());
      }
    }
    if (open == '(' && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    return v;
  }

  std::optional<PyValue> parseDict(int depth) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::Kind::Dict;
    while (true) {
      if (peek('}')) {
        ++pos_;
        return v;
      }
      std::optional<PyValue> key = parseValue(depth + 1);
      if (!key) return std::nullopt;
      if (!peek(':')) return fail("expected ':' in the header dict " + where());
      ++pos_;
      std::optional<PyValue> value = parseValue(depth + 1);
      if (!value) return std::nullopt;
      v.items.push_back(std::move(*key));
      v.values.push_back(std::move(*value));
      if (peek(',')) {
        ++pos_;
      } else if (peek('}')) {
        ++pos_;
        return v;
      } else {
        return fail("expected ',' or '}' in the header dict " + where());
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

// --- descr ------------------------------------------------------------------

struct Descr {
  DType dtype;
  bool bigEndian;
};

constexpr const char* kSupported =
    "supported: '<f4' (f32), '<f8' (f64), '<f2' (f16), '<i4' (i32), and '<u2' holding bf16 bits "
    "when bf16 is expected; '>' (big-endian) variants of these are accepted too";

// Maps a descr string to a dtype, or explains (without the file name) why not.
std::variant<Descr, std::string> parseDescr(const std::string& descr, std::optional<DType> expected) {
  std::string_view s = descr;
  bool big = false;
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
    big = s[0] == '>';
    s.remove_prefix(1);
  }
  if (!s.empty() && s[0] == 'O')
    return std::string("object arrays (dtype ") + quote(descr) +
           ") are not supported; only plain floating-point and int32 arrays are";
  DType dtype;
  if (s == "f4") {
    dtype = DType::F32;
  } else if (s == "f8") {
    dtype = DType::F64;
  } else if (s == "f2") {
    dtype = DType::F16;
  } else if (s == "i4") {
    dtype = DType::I32;
  } else if (s == "u2") {
    if (expected != DType::BF16)
      return "dtype " + quote(descr) +
             " (uint16) is only read as raw bf16 bits, when the input is expected to be "
             "bf16; of the other integer dtypes only int32 is supported (" +
             kSupported + ")";
    dtype = DType::BF16;
  } else {
    return "unsupported dtype " + quote(descr) + " (" + kSupported + ")";
  }
  if (expected && *expected != dtype) {
    std::string msg = "holds " + std::string(dtypeName(dtype)) + " data (dtype " + quote(descr) + ") but " +
                      std::string(dtypeName(*expected)) + " was expected";
    if (*expected == DType::BF16) msg += " (bf16 is stored as '<u2' raw bits)";
    return msg;
  }
  return Descr{dtype, big};
}

// --- files --------------------------------------------------------------------

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Reads up to `n` bytes; returns how many were read (fewer only at EOF or error).
size_t readBytes(std::FILE* f, void* out, size_t n) { return std::fread(out, 1, n, f); }

void byteSwap(std::vector<std::byte>& data, size_t itemSize) {
  if (itemSize < 2) return;
  for (size_t i = 0; i + itemSize <= data.size(); i += itemSize)
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i),
                 data.begin() + static_cast<std::ptrdiff_t>(i + itemSize));
}

// Reorders Fortran-order (first index fastest) data into C order.
std::vector<std::byte> fortranToC(const std::vector<std::byte>& src, const std::vector<int64_t>& shape,
                                  size_t itemSize) {
  // Dimensions of extent 1 do not move anything; dropping them bounds the
  // rank by log2(element count).
  std::vector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1) dims.push_back(d);
  if (dims.size() < 2) return src;
  for (int64_t d : dims)
    if (d == 0) return src;
  size_t rank = dims.size();
  std::vector<size_t> fstride(rank);  // in elements
  size_t stride = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = stride;
    stride *= static_cast<size_t>(dims[k]);
  }
  std::vector<std::byte> dst(src.size());
  std::vector<int64_t> idx(rank, 0);
  size_t count = src.size() / itemSize;
  size_t srcElem = 0;
  for (size_t out = 0; out < count; ++out) {
    std::memcpy(dst.data() + out * itemSize, src.data() + srcElem * itemSize, itemSize);
    // Odometer over C order: last index fastest.
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < dims[k]) {
        srcElem += fstride[k];
        break;
      }
      srcElem -= fstride[k] * static_cast<size_t>(dims[k] - 1);
      idx[k] = 0;
    }
  }
  return dst;
}

uint32_t readLE(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The size of the file at `path` when it is a regular file (a pipe has none).
std::optional<uint64_t> regularFileSize(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  return size;
}

// The header dict's entries.
struct HeaderEntries {
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
};

// One open .npy file, read front to back: the preamble, the header dict,
// then the data. Every step checks what it reads before trusting it, and
// each error is a Diagnostic that names the file.
class NpyReader {
 public:
  NpyReader(const std::string& path, std::FILE* f) : path_(path), f_(f) {}

  Result<HostTensor> read(std::optional<DType> expected) {
    if (Status failed = readPreamble()) return *failed;
    fileSize_ = regularFileSize(path_);
    Result<std::string> header = readHeader();
    if (!header) return header.error();
    HeaderParser parser(*header);
    std::optional<PyValue> dict = parser.parseAll();
    if (!dict) return malformed(parser.error());
    Result<HeaderEntries> entries = headerEntries(*dict);
    if (!entries) return entries.error();
    Result<Descr> d = descrOf(*entries->descr, expected);
    if (!d) return d.error();
    if (entries->fortran->kind != PyValue::Kind::Bool)
      return malformed(std::string("'fortran_order' is ") + kindName(entries->fortran->kind) + ", not True or False");

    HostTensor array;
    array.dtype = d->dtype;
    if (Status failed = readShape(*entries->shape, array.shape)) return *failed;
    size_t itemSize = dtypeSize(d->dtype);
    Result<uint64_t> dataBytes = dataBytesOf(array.shape, itemSize);
    if (!dataBytes) return dataBytes.error();
    if (Status failed = readData(array, *dataBytes)) return *failed;
    if (d->bigEndian) byteSwap(array.data, itemSize);
    if (entries->fortran->boolean) array.data = fortranToC(array.data, array.shape, itemSize);
    return array;
  }

 private:
  Diagnostic readFailed(const std::string& what) const {
    if (std::ferror(f_)) return error(path_, "cannot read " + what + ": " + std::strerror(errno));
    return error(path_, what);
  }

  Diagnostic malformed(const std::string& why) const { return error(path_, "malformed .npy header: " + why); }

  // Magic, version and header length.
  Status readPreamble() {
    unsigned char pre[12];
    size_t got = readBytes(f_, pre, 8);
    if (got == 0) return readFailed("empty file, not a NumPy .npy file");
    if (std::memcmp(pre, kMagic, std::min(got, kMagicLen)) != 0)
      return error(path_, "not a NumPy .npy file (bad magic: it must start with \"\\x93NUMPY\")");
    if (got < kMagicLen) return readFailed("not a NumPy .npy file (truncated inside the magic string)");
    if (got < 8) return readFailed("truncated .npy file (it ends inside the format version)");
    unsigned major = pre[6], minor = pre[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
      return error(path_, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                              " (supported: 1.0, 2.0, 3.0)");
    lenBytes_ = major == 1 ? 2 : 4;
    if (readBytes(f_, pre + 8, lenBytes_) != lenBytes_)
      return readFailed("truncated .npy header (the file ends inside the header length)");
    headerLen_ = readLE(pre + 8, lenBytes_);
    dataOffset_ = 8 + lenBytes_ + headerLen_;
    if (headerLen_ > kMaxHeaderLen)
      return error(path_, "the .npy header claims " + std::to_string(headerLen_) + " bytes, more than the limit of " +
                              std::to_string(kMaxHeaderLen));
    return std::nullopt;
  }

  // The header's text, once the file is known to hold as much as it claims.
  Result<std::string> readHeader() {
    if (fileSize_ && *fileSize_ < dataOffset_)
      return error(path_, "truncated .npy header: it claims " + std::to_string(headerLen_) +
                              " bytes but the file has only " +
                              std::to_string(*fileSize_ - std::min<uint64_t>(*fileSize_, 8 + lenBytes_)) +
                              " after the preamble");
    std::string header(headerLen_, '\0');
    if (readBytes(f_, header.data(), header.size()) != header.size())
      return readFailed("truncated .npy header (header length " + std::to_string(headerLen_) + ")");
    return header;
  }

  // 'descr', 'fortran_order' and 'shape', each exactly once and nothing
  // else; 'shape' a tuple.
  Result<HeaderEntries> headerEntries(const PyValue& dict) const {
    if (dict.kind != PyValue::Kind::Dict)
      return malformed(std::string("expected a dict, found ") + kindName(dict.kind));
    HeaderEntries entries;
    for (size_t i = 0; i < dict.items.size(); ++i) {
      const PyValue& key = dict.items[i];
      if (key.kind != PyValue::Kind::Str)
        return malformed(std::string("a key is ") + kindName(key.kind) + ", not a string");
      const PyValue** slot = key.str == "descr"           ? &entries.descr
                             : key.str == "fortran_order" ? &entries.fortran
                             : key.str == "shape"         ? &entries.shape
                                                          : nullptr;
      if (!slot)
        return malformed("unexpected key " + quote(key.str) + " (the keys are 'descr', 'fortran_order' and 'shape')");
      if (*slot) return malformed("duplicate key " + quote(key.str));
      *slot = &dict.values[i];
    }
    for (auto [value, name] : {std::pair{entries.descr, "descr"}, std::pair{entries.fortran, "fortran_order"},
                               std::pair{entries.shape, "shape"}})
      if (!value) return malformed(std::string("missing key '") + name + "'");
    return entries;
  }

  Result<Descr> descrOf(const PyValue& descr, std::optional<DType> expected) const {
    if (descr.kind == PyValue::Kind::List)
      return error(path_,
                   "structured dtypes (a list as descr) are not supported; only plain "
                   "floating-point arrays are");
    if (descr.kind != PyValue::Kind::Str)
      return malformed(std::string("'descr' is ") + kindName(descr.kind) + ", not a string");
    auto parsed = parseDescr(descr.str, expected);
    if (auto* why = std::get_if<std::string>(&parsed)) return error(path_, *why);
    return std::get<Descr>(parsed);
  }

  // The dimensions of 'shape', which must be non-negative 64-bit integers.
  Status readShape(const PyValue& shapeValue, std::vector<int64_t>& shape) const {
    if (shapeValue.kind != PyValue::Kind::Tuple)
      return malformed(std::string("'shape' is ") + kindName(shapeValue.kind) + ", not a tuple of integers");
    for (const PyValue& dim : shapeValue.items) {
      if (dim.kind != PyValue::Kind::Int)
        return malformed(std::string("a 'shape' entry is ") + kindName(dim.kind) + ", not an integer");
      if (dim.intOverflow) return error(path_, "shape overflows: a dimension does not fit in 64 bits");
      if (dim.integer < 0) return malformed("negative dimension " + std::to_string(dim.integer) + " in 'shape'");
      shape.push_back(dim.integer);
    }
    return std::nullopt;
  }

  // The data's size in bytes, which must fit in an int64 (an empty
  // dimension makes it 0 whatever the others).
  Result<uint64_t> dataBytesOf(const std::vector<int64_t>& shape, size_t itemSize) const {
    uint64_t count = 1;
    bool overflow = false;
    for (int64_t dim : shape) {
      auto u = static_cast<uint64_t>(dim);
      if (u == 0) {
        count = 0;
        overflow = false;
        break;
      }
      if (count > std::numeric_limits<uint64_t>::max() / u)
        overflow = true;
      else
        count *= u;
    }
    constexpr auto kMaxBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (overflow || count > kMaxBytes / itemSize)
      return error(path_, "shape " + shapeText(shape) +
                              " overflows: its size in bytes "
                              "does not fit in 64 bits");
    return count * itemSize;
  }

  // Exactly `dataBytes` bytes to the end of the file, read in pieces so
  // that a file shorter than it claims never makes us allocate the claim.
  Status readData(HostTensor& array, uint64_t dataBytes) {
    std::string needs = "shape " + shapeText(array.shape) + " of " + std::string(dtypeName(array.dtype)) + " needs " +
                        std::to_string(dataBytes) + " bytes of data";
    if (fileSize_) {
      uint64_t have = *fileSize_ - dataOffset_;
      if (have < dataBytes)
        return error(path_, "data is truncated: " + needs + " but the file has " + std::to_string(have));
      if (have > dataBytes)
        return error(path_,
                     "the file has " + std::to_string(have - dataBytes) + " bytes after the data (" + needs + ")");
    }
    while (array.data.size() < dataBytes) {
      size_t old = array.data.size();
      size_t piece = static_cast<size_t>(std::min<uint64_t>(kReadChunk, dataBytes - old));
      array.data.resize(old + piece);
      size_t n = readBytes(f_, array.data.data() + old, piece);
      if (n != piece) return readFailed("data is truncated: " + needs + " but the file has " + std::to_string(old + n));
    }
    unsigned char extra;
    if (readBytes(f_, &extra, 1) != 0) return error(path_, "the file has more bytes after the data (" + needs + ")");
    if (std::ferror(f_)) return readFailed("data");
    return std::nullopt;
  }

  const std::string& path_;
  std::FILE* f_;
  size_t lenBytes_ = 0;     // of the header length: 2 in version 1.0, else 4
  uint64_t headerLen_ = 0;  // as the preamble claims it
  uint64_t dataOffset_ = 0;
  std::optional<uint64_t> fileSize_;
};

}  // namespace

Result<HostTensor> readNpy(const std::string& path, std::optional<DType> expected) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return error(path, "cannot read .npy file: it is a directory");
  errno = 0;
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    int err = errno;
    return error(path, std::string("cannot open .npy file: ") + (err ? std::strerror(err) : "unknown error"));
  }
  return NpyReader(path, file.get()).read(expected);
}

Status writeNpy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data) {
  size_t itemSize = dtypeSize(dtype);
  uint64_t count = 1;
  bool zero = false, overflow = false;
  for (int64_t dim : shape) {
    if (dim < 0) return error(path, "cannot write .npy file: negative dimension in shape " + shapeText(shape));
    if (dim == 0)
      zero = true;
    else if (count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
      overflow = true;
    else
      count *= static_cast<uint64_t>(dim);
  }
  if (zero)
    count = 0;
  else if (overflow || count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / itemSize)
    return error(path, "cannot write .npy file: shape " + shapeText(shape) + " overflows");
  uint64_t dataBytes = count * itemSize;
  if (dataBytes > 0 && !data) return error(path, "cannot write .npy file: no data");

  const char* descr = dtype == DType::F32   ? "<f4"
                      : dtype == DType::F64 ? "<f8"
                      : dtype == DType::F16 ? "<f2"
                      : dtype == DType::I32 ? "<i4"
                                            : "<u2";  // bf16 as raw bits
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shapeText(shape) + ", }";
  // Pad with spaces so that preamble + header + '\n' is a multiple of 64.
  auto padded = [&](size_t preamble) {
    size_t total = preamble + header.size() + 1;
    return header.size() + (64 - total % 64) % 64 + 1;
  };
  unsigned major = 1;
  size_t preamble = 10;
  if (padded(10) > 0xffff) {
    major = 2;
    preamble = 12;
  }
  size_t headerLen = padded(preamble);
  if (headerLen > 0xffffffffu) return error(path, "cannot write .npy file: header too long");
  header.resize(headerLen - 1, ' ');
  header += '\n';

  std::string pre(kMagic, kMagicLen);
  pre += static_cast<char>(major);
  pre += '\0';
  for (size_t i = 0; i < preamble - 8; ++i) pre += static_cast<char>((headerLen >> (8 * i)) & 0xff);

  // Beside the target, renamed over it once complete: a failure leaves what the path held.
  auto file = OutputFile::open(path);
  if (!file) return error(path, "cannot write .npy file: " + file.error());
  file->write(pre.data(), pre.size());
  file->write(header.data(), header.size());
  file->write(data, static_cast<size_t>(dataBytes));
  if (auto failed = file->commit()) return error(path, "cannot write .npy file: " + *failed);
  return std::nullopt;
}

}  // namespace hostir

namespace hostir::api {

HostArray readNpy(const std::string& path, std::optional<DType> expected) {
  std::optional<hostir::DType> internal;
  if (expected) internal = internalDType(*expected);
  Result<HostTensor> read = hostir::readNpy(path, internal);
  if (!read) throw plainError(ErrorKind::Program, read.error().message);
  return HostArray{publicDType(read->dtype), std::move(read->shape), std::move(read->data)};
}

void writeNpy(const std::string& path, const HostBuffer& buffer) {
  if (Status failed = hostir::writeNpy(path, internalDType(buffer.dtype), buffer.shape, buffer.data))
    throw plainError(ErrorKind::Run, failed->message);
}

}  // namespace hostir::api
