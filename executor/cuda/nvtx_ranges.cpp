#include "executor/cuda/nvtx_ranges.h"

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

namespace hostir::cuda {
namespace {

nvtxDomainHandle_t domainOf(void* domain) { return static_cast<nvtxDomainHandle_t>(domain); }

// One domain for the process: in-process ranks share it, and a tool may
// read it until the process ends, so it is never destroyed.
void* processDomain() {
  static void* const domain = nvtxDomainCreateA("hostir");
  return domain;
}

}  // namespace

NvtxRanges::NvtxRanges() : domain_(processDomain()) {}

NvtxRanges::~NvtxRanges() { leave(); }

void NvtxRanges::enter(const OperationInfo& info) {
  leave();
  const uint64_t key = (static_cast<uint64_t>(info.kind) << 48) ^ (static_cast<uint64_t>(info.loc.line) << 20) ^
                       static_cast<uint64_t>(info.loc.col);
  auto [it, added] = names_.try_emplace(key, nullptr);
  if (added) {
    std::string name(signatureOf(info.kind).name);
    if (!info.result.empty()) name = fmt::format("{} = {}", info.result, name);
    if (info.loc.valid()) name += fmt::format(" {}:{}", info.loc.line, info.loc.col);
    it->second = nvtxDomainRegisterStringA(domainOf(domain_), name.c_str());
  }
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = static_cast<nvtxStringHandle_t>(it->second);
  nvtxDomainRangePushEx(domainOf(domain_), &attributes);
  open_ = true;
}

void NvtxRanges::leave() {
  if (!open_) return;
  nvtxDomainRangePop(domainOf(domain_));
  open_ = false;
}

}  // namespace hostir::cuda
