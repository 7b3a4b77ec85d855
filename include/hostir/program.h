// A parsed, verified `.hir` program, and the passes that rewrite it.
// Programs are immutable values: applying passes returns a new Program.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hostir/defaults.h"
#include "hostir/host_buffer.h"

namespace hostir::api {

// A parameter's value: an integer (`M = 1024`), a number (`lr = 0.01`) or
// a dtype (`DT = bf16`). A number parameter also takes an integer.
using ParamValue = std::variant<int64_t, double, DType>;
// Parameter values by name (`--set`); unnamed parameters keep their defaults.
using Params = std::map<std::string, ParamValue>;

// "1024", "0.01" (the shortest text that reads back as the same number), "bf16".
std::string toString(const ParamValue& value);
// A value as `--set` writes it: an integer, a number with a '.' or an
// exponent, or a dtype's name; Error (kind Usage) for anything else.
ParamValue parseParamValue(const std::string& text);

// An input or output declaration, its global shape bound to parameters.
struct TensorDecl {
  std::string name;
  bool input = true;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;        // global
  std::optional<int64_t> shardAxis;  // unset: every rank holds the whole tensor
};

class Program {
 public:
  // Parses source text; `sourceName` is the file name its errors show.
  // Throws Error (kind Program) with file:line:col when it does not parse or
  // verify.
  static Program fromText(const std::string& text, const std::string& sourceName = "<string>");
  // Reads and parses a file.
  static Program fromFile(const std::string& path);
  // The contract's rule: text with a newline, or starting with `program`,
  // is source; anything else a path.
  static Program parse(const std::string& pathOrText);

  const std::string& name() const;
  // The file name (or sourceName) that positions refer to.
  const std::string& sourceName() const;
  // The text its positions refer to: what it was parsed from (a rewritten
  // program keeps its original's).
  const std::string& sourceText() const;
  // The program in `.hir` syntax (Program::fromText(p.print()) == p).
  std::string print() const;
  // Every parameter with its default value.
  Params defaultParams() const;
  // Every parameter's name, in the order the program declares them.
  std::vector<std::string> paramNames() const;
  // The inputs and outputs with global shapes for these parameter values
  // (Error kind Usage for an unknown parameter, Program when a shape fails
  // to bind).
  std::vector<TensorDecl> tensors(const Params& params = {}, int64_t ranks = 1) const;

  // Structural equality: positions and the source name do not count.
  friend bool operator==(const Program& a, const Program& b);

  // A move copies the shared, immutable program: a moved-from Program is
  // still the same valid program, never an empty one.
  Program(const Program&) = default;
  Program& operator=(const Program&) = default;
  Program(Program&& other) noexcept : impl_(other.impl_) {}
  Program& operator=(Program&& other) noexcept {
    impl_ = other.impl_;
    return *this;
  }

  struct Impl;
  explicit Program(std::shared_ptr<const Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

// What a pass pipeline is verified and race-checked for.
struct PassOptions {
  Params params;
  int64_t ranks = 1;
  int64_t streams = kDefaultStreams;
  // The machine profile (a shipped name such as "h100-nvlink", or a profile
  // file) for passes that consult the cost model (`overlap`).
  std::string machine;
  double minimumGain = kDefaultMinimumGain;
  // Called with each remark, rendered against the program's source, as the
  // passes make it (`opt --remarks`); empty: none.
  std::function<void(const std::string&)> onRemark;
  // Called with each warning of the passes (one that stopped at a limit,
  // kMaxPassWholeProgramWork), rendered "file:line:col: warning: ..."; the
  // command line always prints them. Empty: none.
  std::function<void(const std::string&)> onWarning;
  // The program after every pass (printIrAfterAll), or after each pass
  // named in printIrAfter, written to irDump as the passes run (`opt
  // --print-ir-after-all`, `--print-ir-after`). Null irDump: nothing is.
  bool printIrAfterAll = false;
  std::vector<std::string> printIrAfter;
  std::ostream* irDump = nullptr;
};

// Applies the passes in order ("assign-streams", "canonicalize", "overlap",
// ...), verifying and race-checking after each. Remarks, when asked for,
// are appended to `remarks` rendered against the program's source.
Program applyPasses(const Program& program, const std::vector<std::string>& passes, const PassOptions& options = {},
                    std::vector<std::string>* remarks = nullptr);

}  // namespace hostir::api
