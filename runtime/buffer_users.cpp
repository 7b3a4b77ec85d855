#include "runtime/buffer_users.h"

#include <algorithm>

namespace hostir {

void BufferUsers::noteUse(const Buffer* buffer, Stream* stream) {
  if (!buffer || !stream) return;
  std::vector<Stream*>& streams = users_[buffer];
  if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
}

std::vector<Stream*> BufferUsers::release(const Buffer* buffer, Stream* freeing) {
  auto it = users_.find(buffer);
  if (it == users_.end()) return {};
  std::vector<Stream*> others = std::move(it->second);
  users_.erase(it);
  others.erase(std::remove(others.begin(), others.end(), freeing), others.end());
  return others;
}

}  // namespace hostir
