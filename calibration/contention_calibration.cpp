#include "calibration/contention_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace hostir {
namespace {

// A class of work as a loop body, the operation its trace slices are named
// after, and the declarations it needs (G: the GEMM's size, C: elements).
struct ClassLoop {
  WorkClass workClass;
  const char* operation;
  const char* declarations;
  const char* body;
};

const ClassLoop kLoops[] = {
    {WorkClass::Gemm, "linear", "  input x : f32[G, G]\n  input w : f32[G, G]\n  input y : f32[G, G]\n",
     "    linear(x, w, out=y)\n"},
    {WorkClass::Memory, "copy", "  input a : f32[C]\n  input b : f32[C]\n", "    copy(a, out=b)\n"},
    {WorkClass::Elementwise, "add", "  input p : f32[C]\n  input q : f32[C]\n  input r : f32[C]\n",
     "    add(p, q, out=r)\n"},
    // Issued last in a pair: a collective's issue may wait on the host for its peers.
    {WorkClass::Communication, "allreduce", "  input t : f32[C]\n", "    h = allreduce(t, op=sum)\n    wait(h)\n"},
};

// `first` on stream(1) and, when given, `second` on stream(2), R1 and R2 times.
std::string pairProgram(const ClassLoop& first, const ClassLoop* second) {
  std::string text = "program contend(G = 64, C = 64, R1 = 1, R2 = 1) {\n";
  text += first.declarations;
  if (second) text += second->declarations;
  text += "  main = get_current_stream()\n  set_current_stream(stream(1))\n  for i in range(R1) {\n";
  text += first.body;
  text += "  }\n";
  if (second) {
    text += "  set_current_stream(stream(2))\n  for i in range(R2) {\n";
    text += second->body;
    text += "  }\n";
  }
  text += "  set_current_stream(main)\n  synchronize(stream(1))\n";
  if (second) text += "  synchronize(stream(2))\n";
  return text + "}\n";
}

std::vector<RecordedSlice> slicesNamed(const std::vector<RecordedSlice>& slices, std::string_view name) {
  std::vector<RecordedSlice> named;
  for (const RecordedSlice& slice : slices)
    if (slice.name == name && slice.category != "host") named.push_back(slice);
  return named;
}

std::vector<double> durations(const std::vector<RecordedSlice>& slices) {
  std::vector<double> micros;
  for (const RecordedSlice& slice : slices) micros.push_back(slice.durationMicros);
  return micros;
}

// The stretches of time `slices` cover, joined across gaps up to `gap` µs
// (the launch between one operation and the next on a stream).
std::vector<std::pair<double, double>> covered(std::vector<RecordedSlice> slices, double gap) {
  std::sort(slices.begin(), slices.end(),
            [](const RecordedSlice& a, const RecordedSlice& b) { return a.startMicros < b.startMicros; });
  std::vector<std::pair<double, double>> spans;
  for (const RecordedSlice& slice : slices) {
    if (!spans.empty() && slice.startMicros <= spans.back().second + gap)
      spans.back().second = std::max(spans.back().second, slice.endMicros());
    else
      spans.emplace_back(slice.startMicros, slice.endMicros());
  }
  return spans;
}

// The durations of the slices that lie wholly inside `spans`.
std::vector<double> durationsInside(const std::vector<RecordedSlice>& slices,
                                    const std::vector<std::pair<double, double>>& spans) {
  std::vector<double> inside;
  for (const RecordedSlice& slice : slices)
    for (const auto& [from, to] : spans)
      if (slice.startMicros >= from && slice.endMicros() <= to) {
        inside.push_back(slice.durationMicros);
        break;
      }
  return inside;
}

// A median of timed values (an operation's µs alone, or a rate beside
// another) and its spread.
struct Figure {
  double value = 0;
  double spread = 0;
};

class ContentionCalibrator {
 public:
  ContentionCalibrator(const CalibrationRuns& runs, const CalibrationRequest& request)
      : runs_(runs), request_(request) {
    const bool gpu = request.backend.kind == BackendKind::Cuda;
    // f32 [2048, 2048]: about a millisecond per GEMM on a shared H100; a CPU core's millisecond is [256, 256].
    gemmSize_ = gpu ? 2048 : 256;
    windowMicros_ = request.quick ? 4000 : 20000;
    if (!gpu)
      sizes_ = {int64_t{1} << 20};
    else if (request.quick)
      sizes_ = {int64_t{16} << 20};
    else
      sizes_ = {int64_t{64} << 20, int64_t{256} << 20};
  }

  std::vector<Contention> run() {
    std::map<std::pair<WorkClass, WorkClass>, std::vector<Figure>> rates;
    const size_t classes = request_.world > 1 ? std::size(kLoops) : std::size(kLoops) - 1;
    for (size_t a = 0; a < classes; ++a)
      for (size_t b = a + 1; b < classes; ++b)
        for (int64_t bytes : sizes_) measurePair(kLoops[a], kLoops[b], bytes, rates);
    // Collectives the copy-engine communicator carried are that class's figures, not the SM kernels'.
    const bool copyEngines =
        request_.backend.kind == BackendKind::Cuda && request_.backend.communicator == CommunicatorChoice::CopyEngine;
    auto carried = [copyEngines](WorkClass c) {
      return copyEngines && c == WorkClass::Communication ? WorkClass::CopyEngineCommunication : c;
    };
    std::vector<Contention> contention;
    for (auto& [pair, measured] : rates)
      contention.push_back(combined(carried(pair.first), carried(pair.second), measured));
    return contention;
  }

 private:
  std::map<std::string, int64_t> params(int64_t bytes) const {
    return {{"G", gemmSize_}, {"C", std::max<int64_t>(bytes / 4, 1)}};
  }

  // The operation's time alone (µs, median) and its spread, from a short traced run.
  Figure aloneMicros(const ClassLoop& loop, int64_t bytes) {
    const auto key = std::make_pair(std::string(loop.operation), loop.workClass == WorkClass::Gemm ? 0 : bytes);
    if (auto known = alone_.find(key); known != alone_.end()) return known->second;
    std::map<std::string, int64_t> set = params(bytes);
    set["R1"] = 8;
    const std::vector<double> micros =
        durations(slicesNamed(runs_.tracedRun(runs_.parse(pairProgram(loop, nullptr)), set, 1), loop.operation));
    const Figure alone{medianOf(micros), spreadOf(micros)};
    alone_[key] = alone;
    return alone;
  }

  void measurePair(const ClassLoop& first, const ClassLoop& second, int64_t bytes,
                   std::map<std::pair<WorkClass, WorkClass>, std::vector<Figure>>& rates) {
    const Figure firstAlone = aloneMicros(first, bytes), secondAlone = aloneMicros(second, bytes);
    if (!(firstAlone.value > 0) || !(secondAlone.value > 0)) return;
    // The first loop spans the window alone and the second half of it: if the
    // second is slowed much it covers the whole first loop, if not it lies
    // inside it; either way both are timed beside the other.
    std::map<std::string, int64_t> set = params(bytes);
    set["R1"] = std::clamp<int64_t>(static_cast<int64_t>(windowMicros_ / firstAlone.value), 4, 2000);
    set["R2"] = std::clamp<int64_t>(static_cast<int64_t>(windowMicros_ / 2 / secondAlone.value), 4, 2000);
    const std::vector<RecordedSlice> slices = runs_.tracedRun(runs_.parse(pairProgram(first, &second)), set, 1);
    const std::vector<RecordedSlice> a = slicesNamed(slices, first.operation);
    const std::vector<RecordedSlice> b = slicesNamed(slices, second.operation);
    auto record = [&](WorkClass slowed, WorkClass beside, const Figure& alone, const std::vector<RecordedSlice>& mine,
                      const std::vector<RecordedSlice>& theirs, const Figure& theirAlone) {
      const double gap = 0.1 * theirAlone.value + 20;
      const std::optional<double> rate = rateBeside(alone.value, mine, theirs, gap);
      if (!rate) return;  // too little overlap to time
      const std::vector<double> inside = durationsInside(mine, covered(theirs, gap));
      rates[{slowed, beside}].push_back(Figure{*rate, alone.spread + spreadOf(inside)});
    };
    record(first.workClass, second.workClass, firstAlone, a, b, secondAlone);
    record(second.workClass, first.workClass, secondAlone, b, a, firstAlone);
  }

  // The median rate over the sizes; the spread, the largest of theirs or of the rates themselves.
  static Contention combined(WorkClass slowed, WorkClass beside, const std::vector<Figure>& measured) {
    std::vector<double> values;
    double spread = 0;
    for (const Figure& r : measured) {
      values.push_back(r.value);
      spread = std::max(spread, r.spread);
    }
    const double rate = medianOf(values);
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    spread = std::max(spread, rate > 0 ? (*high - *low) / rate : 0);
    return Contention{slowed, beside, std::max(rate, 1e-3), std::min(spread, 10.0)};
  }

  const CalibrationRuns& runs_;
  const CalibrationRequest& request_;
  int64_t gemmSize_ = 2048;
  double windowMicros_ = 20000;
  std::vector<int64_t> sizes_;
  std::map<std::pair<std::string, int64_t>, Figure> alone_;
};

}  // namespace

std::optional<double> rateBeside(double aloneMicros, const std::vector<RecordedSlice>& mine,
                                 const std::vector<RecordedSlice>& theirs, double gapMicros) {
  const std::vector<double> inside = durationsInside(mine, covered(theirs, gapMicros));
  if (inside.size() < 2) return std::nullopt;
  const double beside = medianOf(inside);
  return beside > 0 ? std::min(1.0, aloneMicros / beside) : 1.0;
}

std::vector<Contention> measureContention(const CalibrationRuns& runs, const CalibrationRequest& request) {
  return ContentionCalibrator(runs, request).run();
}

}  // namespace hostir
