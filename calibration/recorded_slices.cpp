#include "calibration/recorded_slices.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace hostir {

Result<std::vector<RecordedSlice>, std::string> recordedSlices(const TraceRecorder& recorder) {
  // The recording is JSON objects separated by ",\n": an array once bracketed.
  std::string text = "[";
  text.resize(1 + recorder.recordedBytes());
  if (recorder.readRecorded(0, text.data() + 1, text.size() - 1) != static_cast<int64_t>(text.size() - 1))
    return std::string("the recorded trace cannot be read back");
  text += "]";
  nlohmann::json events = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (events.is_discarded() || !events.is_array()) return std::string("the recorded trace is not valid JSON");
  std::vector<RecordedSlice> slices;
  for (const nlohmann::json& event : events) {
    if (!event.is_object() || event.value("ph", "") != "X") continue;
    RecordedSlice slice;
    slice.thread = event.value("tid", 0);
    slice.name = event.value("name", "");
    slice.category = event.value("cat", "");
    slice.startMicros = event.value("ts", 0.0);
    slice.durationMicros = event.value("dur", 0.0);
    slices.push_back(std::move(slice));
  }
  return slices;
}

}  // namespace hostir
