// Program values: parsing, printing, declarations; the error conversion
// every API call shares.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "api/dtype_conversion.h"
#include "api/findings.h"
#include "api/pass_pipeline.h"
#include "api/program_file.h"
#include "api/program_impl.h"
#include "hostir/catalog.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/evaluator.h"

namespace hostir::api {

Error diagnosticError(ErrorKind kind, const Diagnostic& diag, std::string_view path, std::string_view text) {
  return Error(kind, diag.message, renderDiagnostic(diag, path, text), {findingOf(diag, path)});
}

Error plainError(ErrorKind kind, std::string message) {
  std::string rendered = fmt::format("error: {}", message);
  return Error(kind, std::move(message), std::move(rendered));
}

void checkStreams(int64_t streams) {
  if (streams < 1 || streams > kMaxStreams)
    throw plainError(ErrorKind::Usage, fmt::format("streams must be from 1 to {}, got {}", kMaxStreams, streams));
}

namespace {

// `value` for `param` as its kind takes it (a number parameter takes an integer too); Error kind Usage otherwise.
std::variant<int64_t, ValueParam> valueFor(const Param& param, const ParamValue& value) {
  auto refuse = [&](std::string_view takes) {
    return plainError(ErrorKind::Usage,
                      fmt::format("parameter {} = {}: {} takes {}", param.name, toString(value), param.name, takes));
  };
  switch (param.kind) {
    case ParamKind::Int:
      if (!std::holds_alternative<int64_t>(value) || std::get<int64_t>(value) < 0)
        throw refuse("a non-negative integer");
      return std::get<int64_t>(value);
    case ParamKind::Float: {
      if (std::holds_alternative<DType>(value)) throw refuse("a number");
      const double number = std::holds_alternative<int64_t>(value) ? static_cast<double>(std::get<int64_t>(value))
                                                                   : std::get<double>(value);
      if (!std::isfinite(number)) throw refuse("a finite number");
      return ValueParam{number};
    }
    case ParamKind::DType:
      if (!std::holds_alternative<DType>(value)) throw refuse("a dtype (f32, f16, bf16, f64 or i32)");
      return ValueParam{internalDType(std::get<DType>(value))};
  }
  throw refuse("a value of its kind");
}

}  // namespace

BoundProgram verifiedProgram(const ProgramSource& program, const Params& params, int64_t ranks) {
  if (ranks < 1 || ranks > kMaxRanks)
    throw plainError(ErrorKind::Usage, fmt::format("ranks must be from 1 to {}, got {}", kMaxRanks, ranks));
  BoundProgram bound{program, Bindings{{}, ranks}, {}};
  for (const Param& param : program.program.params) {
    if (param.kind == ParamKind::Float) bound.values[param.name] = param.floatValue;
    if (param.kind == ParamKind::DType) bound.values[param.name] = param.dtypeValue;
  }
  for (const auto& [name, value] : params) {
    const Param* param = program.program.findParam(name);
    // An unknown name goes to bindParams, which names the program's parameters.
    if (!param) {
      bound.bindings.params[name] = 0;
      continue;
    }
    std::variant<int64_t, ValueParam> checked = valueFor(*param, value);
    if (const int64_t* integer = std::get_if<int64_t>(&checked))
      bound.bindings.params[name] = *integer;
    else
      bound.values[name] = std::get<ValueParam>(checked);
  }
  // A value for a parameter the program lacks is the caller's mistake, not the program's.
  if (auto known = bindParams(program.program, bound.bindings); !known)
    throw diagnosticError(ErrorKind::Usage, known.error(), program.path, program.text);
  bindValueParams(bound.source.program, bound.values);
  if (Status error = verifyProgram(bound.source.program, bound.bindings))
    throw diagnosticError(ErrorKind::Program, *error, program.path, program.text);
  return bound;
}

std::map<std::string, int64_t> boundParams(const ProgramSource& program, const Bindings& bindings) {
  auto params = bindParams(program.program, bindings);
  if (!params) throw diagnosticError(ErrorKind::Program, params.error(), program.path, program.text);
  return std::move(*params);
}

namespace {

Program parsed(std::string path, std::string text) {
  auto ir = parseProgram(text);
  if (!ir) throw diagnosticError(ErrorKind::Program, ir.error(), path, text);
  // Structure only: shapes are checked once parameters are bound.
  if (Status error = verifyStructure(*ir)) throw diagnosticError(ErrorKind::Program, *error, path, text);
  return Program(
      std::make_shared<const Program::Impl>(Program::Impl{{std::move(path), std::move(text), std::move(*ir)}}));
}

}  // namespace

Program::Program(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {
  if (!impl_)
    throw plainError(ErrorKind::Usage, "a Program is made by Program::fromFile, fromText or parse, not from null");
}

Program Program::fromText(const std::string& text, const std::string& sourceName) {
  // The files' limit holds for text too: one bound, whatever the source.
  if (text.size() > kMaxProgramFileBytes)
    throw plainError(ErrorKind::Program,
                     fmt::format("{}: the program is longer than {} MiB; hostir reads programs of at most {} MiB",
                                 sourceName, kMaxProgramFileBytes >> 20, kMaxProgramFileBytes >> 20));
  return parsed(sourceName, text);
}

Program Program::fromFile(const std::string& path) {
  auto text = readProgramFile(path);
  if (!text) throw diagnosticError(ErrorKind::Program, text.error(), programDisplayName(path));
  return parsed(programDisplayName(path), std::move(*text));
}

Program Program::parse(const std::string& pathOrText) {
  bool isText = pathOrText.find('\n') != std::string::npos || pathOrText.starts_with("program");
  return isText ? fromText(pathOrText) : fromFile(pathOrText);
}

const std::string& Program::name() const { return impl_->program.name; }
std::vector<std::string> Program::paramNames() const {
  std::vector<std::string> names;
  for (const Param& param : impl_->program.params) names.push_back(param.name);
  return names;
}

const std::string& Program::sourceName() const { return impl_->path; }
const std::string& Program::sourceText() const { return impl_->text; }
std::string Program::print() const { return printProgram(impl_->program); }

Params Program::defaultParams() const {
  Params params;
  for (const Param& param : impl_->program.params) {
    switch (param.kind) {
      case ParamKind::Int: params[param.name] = param.value; break;
      case ParamKind::Float: params[param.name] = param.floatValue; break;
      case ParamKind::DType: params[param.name] = publicDType(param.dtypeValue); break;
    }
  }
  return params;
}

std::string toString(const ParamValue& value) {
  if (const double* number = std::get_if<double>(&value)) return formatFloatAttribute(*number);
  if (const DType* dtype = std::get_if<DType>(&value)) return toString(*dtype);
  return std::to_string(std::get<int64_t>(value));
}

ParamValue parseParamValue(const std::string& text) {
  if (std::optional<hostir::DType> dtype = parseDType(text)) return publicDType(*dtype);
  const char* end = text.data() + text.size();
  int64_t integer = 0;
  if (auto [at, ec] = std::from_chars(text.data(), end, integer); ec == std::errc() && at == end && !text.empty())
    return integer;
  double number = 0;
  const bool looksLikeNumber = text.find_first_of(".eE") != std::string::npos;
  if (auto [at, ec] = std::from_chars(text.data(), end, number);
      looksLikeNumber && ec == std::errc() && at == end && std::isfinite(number))
    return number;
  throw plainError(ErrorKind::Usage, fmt::format("'{}' is not an integer, a finite number (0.01, 1e-3) or a dtype "
                                                 "(f32, f16, bf16, f64 or i32)",
                                                 text));
}

std::vector<TensorDecl> Program::tensors(const Params& params, int64_t ranks) const {
  const BoundProgram bound = verifiedProgram(*impl_, params, ranks);
  auto values = boundParams(bound.source, bound.bindings);
  // The evaluator binds the declarations exactly as a run does.
  Evaluator evaluator(bound.source.program, values, 0, ranks);
  std::vector<TensorDecl> decls;
  for (bool input : {true, false}) {
    for (const TensorSpec& spec : input ? evaluator.inputs() : evaluator.outputs()) {
      TensorDecl out;
      out.name = spec.name;
      out.input = input;
      out.dtype = publicDType(spec.dtype);
      out.shape.assign(spec.globalShape.begin(), spec.globalShape.end());
      out.shardAxis = spec.shardAxis;
      decls.push_back(std::move(out));
    }
  }
  return decls;
}

bool operator==(const Program& a, const Program& b) { return a.impl_->program == b.impl_->program; }

Program applyPasses(const Program& program, const std::vector<std::string>& passes, const PassOptions& options,
                    std::vector<std::string>* remarks) {
  checkStreams(options.streams);
  checkPipeline(passes, !options.machine.empty());
  checkMinimumGain(options.minimumGain);
  const BoundProgram bound = verifiedProgram(program.impl(), options.params, options.ranks);
  const ProgramSource& source = bound.source;
  const Bindings& bindings = bound.bindings;
  PipelineOptions pipelineOptions;
  pipelineOptions.streams = options.streams;
  pipelineOptions.machine = loadMachine(options.machine);
  pipelineOptions.minimumGain = options.minimumGain;
  pipelineOptions.remarks = remarkSink(source, options.onRemark, options.onWarning, remarks);
  const std::vector<std::string> known = passNames();
  for (const std::string& name : options.printIrAfter)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw plainError(ErrorKind::Usage, fmt::format("printIrAfter: unknown pass '{}'", name));
  pipelineOptions.printIrAfterAll = options.printIrAfterAll;
  pipelineOptions.printIrAfter.insert(options.printIrAfter.begin(), options.printIrAfter.end());
  pipelineOptions.irDump = options.irDump;
  hostir::Program rewritten = applyPipeline(source, source.program, passes, bindings, pipelineOptions);
  // The result's positions still point into the original text; keep it, so
  // that later errors show the statement the pass started from.
  return Program(
      std::make_shared<const Program::Impl>(Program::Impl{{source.path, source.text, std::move(rewritten)}}));
}

}  // namespace hostir::api
