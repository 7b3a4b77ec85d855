// The executable: a run prepared once, its team kept between calls.
#include "hostir/executable.h"

#include <fmt/format.h>

#include "api/command_line.h"
#include "api/dtype_conversion.h"
#include "api/executable_impl.h"
#include "executor/resident_team.h"

namespace hostir::api {
namespace {

// In-process ranks: a resident team, started again after a call that
// broke it (the passes and the proof are kept).
class InProcessTeamOfExecutable : public PreparedTeam {
 public:
  InProcessTeamOfExecutable(const RunRequest& request, int64_t world) : request_(request), world_(world) {}

  // Starts the team now, so that the first call costs what every call does.
  std::optional<Diagnostic> start() {
    Result<std::unique_ptr<ResidentTeam>> started = ResidentTeam::start(request_, world_);
    if (!started) return started.error();
    team_ = std::move(started.value());
    return std::nullopt;
  }

  Result<RunResult> run(const RunCall& call) override {
    if (!team_)
      if (std::optional<Diagnostic> failed = start()) return *failed;
    Result<RunResult> result = team_->run(call);
    if (team_->broken()) team_.reset();
    return result;
  }
  std::optional<std::string> closesAfterFailure() const override { return std::nullopt; }

 private:
  const RunRequest& request_;
  const int64_t world_;
  std::unique_ptr<ResidentTeam> team_;
};

std::vector<TensorDecl> declarations(const PreparedRun& prepared) {
  std::vector<TensorDecl> decls;
  for (bool input : {true, false}) {
    for (const TensorSpec& spec : input ? prepared.inputs : prepared.outputs)
      decls.push_back(TensorDecl{spec.name, input, publicDType(spec.dtype), spec.globalShape.vector(), spec.shardAxis});
  }
  return decls;
}

}  // namespace

Executable::Impl::Impl(const Program& program, const RunOptions& options, PreparedRun prepared)
    : program(program), options(options), prepared(std::move(prepared)), decls(declarations(this->prepared)) {}

namespace {

std::unique_ptr<Executable::Impl> compileInProcess(const Program& program, const RunOptions& options,
                                                   const CommandLineHooks& hooks) {
  if (options.mainStream && options.ranks > 1)
    throw plainError(ErrorKind::Usage, "a caller's main stream serves one rank: run with ranks=1, or use runOnMpi");
  PreparedRun prepared = prepareRun(program, options, TeamPlace{true, options.ranks, options.ranks}, hooks.words);
  prepared.request.describeFailure = nullptr;  // in process: the failing rank's diagnostic comes back as a value
  prepared.request.atRun = hooks.atRun;
  auto impl = std::make_unique<Executable::Impl>(program, options, std::move(prepared));
  auto team = std::make_unique<InProcessTeamOfExecutable>(impl->prepared.request, options.ranks);
  if (std::optional<Diagnostic> failed = team->start()) {
    const ProgramSource& source = program.impl();
    throw diagnosticError(ErrorKind::Run, *failed, source.path, source.text);
  }
  impl->team = std::move(team);
  return impl;
}

}  // namespace

Executable::Executable(const Program& program, const RunOptions& options)
    : impl_(compileInProcess(program, options, {})) {}

Executable compileForCommandLine(const Program& program, const RunOptions& options, const CommandLineHooks& hooks) {
  return Executable(compileInProcess(program, options, hooks));
}

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Executable::~Executable() { close(); }

Executable::Executable(Executable&&) noexcept = default;

Executable& Executable::operator=(Executable&& other) noexcept {
  if (this != &other) {
    close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

RunStats Executable::run(const std::map<std::string, HostBuffer>& inputs,
                         const std::map<std::string, HostBuffer>& outputs) {
  if (!impl_) throw plainError(ErrorKind::Usage, "the executable was moved from");
  std::lock_guard lock(impl_->callMutex);
  if (!impl_->closedBecause.empty())
    throw plainError(ErrorKind::Usage, fmt::format("the executable is closed ({})", impl_->closedBecause));
  RunCall call;
  call.inputs = checkedInputs(impl_->prepared, inputs, outputs, impl_->options.fillMissingInputs);
  call.cancel = impl_->options.cancel;
  call.interruptCheck = impl_->options.interruptCheck;
  for (const auto& [name, buffer] : outputs) call.outputs[name] = static_cast<std::byte*>(buffer.data);
  call.gatherOtherOutputs = false;
  call.gatherCopies = impl_->options.checkReplicatedOutputs;
  call.everyRankWritesReplicatedOutputs = impl_->team->oneRankPerProcess();
  Result<RunResult> result = impl_->team->run(call);
  if (!result)
    if (std::optional<std::string> why = impl_->team->closesAfterFailure()) {
      impl_->team.reset();
      impl_->closedBecause = *why;
    }
  return finishRun(impl_->program, std::move(result));
}

void Executable::close() {
  if (!impl_) return;
  std::lock_guard lock(impl_->callMutex);
  impl_->team.reset();
  if (impl_->closedBecause.empty()) impl_->closedBecause = "closed by its owner";
}

bool Executable::closed() const {
  if (!impl_) return true;
  std::lock_guard lock(impl_->callMutex);
  return !impl_->closedBecause.empty();
}

const std::vector<TensorDecl>& Executable::tensors() const {
  if (!impl_) throw plainError(ErrorKind::Usage, "the executable was moved from");
  return impl_->decls;
}

}  // namespace hostir::api
