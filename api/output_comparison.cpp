#include "api/output_comparison.h"

#include <fmt/format.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/element.h"

namespace hostir {
namespace {

double elementAsDouble(const HostTensor& t, size_t i) {
  return loadElement<double>(t.dtype, t.data.data() + i * dtypeSize(t.dtype));
}

// Relative tolerance per dtype, applied as |a - b| <= tol * (|b| + rms(b)):
// the rms term keeps elements that cancel to near zero from failing.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::F64: return 1e-9;
    case DType::F32: return 1e-4;
    case DType::F16: return 1e-2;
    case DType::BF16: return 4e-2;
    case DType::I32: return 0;  // indices match exactly
  }
  return 0;
}

// How far `a` is from the expected `b`, in tolerances: at most 1 is a
// match. An inf equal to the expected inf, and a NaN where NaN is expected,
// match exactly; any other non-finite value on either side is inf.
double elementError(double a, double b, double tol, double rms) {
  if (std::isnan(b)) return std::isnan(a) ? 0.0 : INFINITY;
  if (std::isinf(b)) return a == b ? 0.0 : INFINITY;
  if (!std::isfinite(a)) return INFINITY;
  return std::abs(a - b) / (tol * (std::abs(b) + rms) + 1e-300);
}

std::string indexString(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat) % shape[d];
    flat /= static_cast<size_t>(shape[d]);
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// The scale of the expected values: the rms of its finite elements (an
// inf or NaN in the reference must not make every tolerance inf or NaN).
double finiteRms(const HostTensor& t) {
  const size_t n = t.data.size() / dtypeSize(t.dtype);
  double sumSquares = 0;
  size_t finite = 0;
  for (size_t i = 0; i < n; ++i) {
    double b = elementAsDouble(t, i);
    if (!std::isfinite(b)) continue;
    sumSquares += b * b;
    ++finite;
  }
  return finite ? std::sqrt(sumSquares / static_cast<double>(finite)) : 0.0;
}

}  // namespace

Comparison compareOutputs(const std::map<std::string, HostTensor>& actual,
                          const std::map<std::string, HostTensor>& reference) {
  Comparison c;
  std::vector<std::string> lines;
  for (const auto& [name, ref] : reference) {
    auto it = actual.find(name);
    if (it == actual.end() || it->second.shape != ref.shape || it->second.dtype != ref.dtype) {
      c.ok = false;
      lines.push_back(fmt::format("output '{}' is missing or has the wrong shape", name));
      continue;
    }
    const HostTensor& got = it->second;
    size_t n = ref.data.size() / dtypeSize(ref.dtype);
    const double rms = finiteRms(ref);
    double tol = tolerance(ref.dtype);
    double worstRatio = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; ++i) {
      double a = elementAsDouble(got, i), b = elementAsDouble(ref, i);
      double ratio = elementError(a, b, tol, rms);
      if (ratio > worstRatio) {
        worstRatio = ratio;
        worst = i;
      }
    }
    if (worstRatio > 1.0) {
      c.ok = false;
      lines.push_back(fmt::format(
          "output '{}' differs from the serial reference: worst element {} is {:.8g}, "
          "expected {:.8g} (tolerance {:.3g} relative to |expected| + rms {:.4g})",
          name, indexString(worst, ref.shape), elementAsDouble(got, worst), elementAsDouble(ref, worst), tol, rms));
    } else {
      lines.push_back(
          fmt::format("output '{}' matches the serial reference ({} elements, worst error {:.3g} of "
                      "the {} tolerance)",
                      name, n, worstRatio, dtypeName(ref.dtype)));
    }
  }
  c.report = fmt::format("{}", fmt::join(lines, "\n"));
  return c;
}

std::optional<std::string> compareCopies(const std::string& name, const std::vector<HostTensor>& copies) {
  if (copies.size() < 2) return std::nullopt;
  const HostTensor& first = copies.front();
  const size_t n = first.data.size() / dtypeSize(first.dtype);
  const double rms = finiteRms(first), tol = tolerance(first.dtype);
  std::vector<size_t> differing;  // ranks
  size_t rank = 0, element = 0;   // the first difference: the lowest rank's first element
  for (size_t r = 1; r < copies.size(); ++r)
    for (size_t i = 0; i < n; ++i)
      if (elementError(elementAsDouble(copies[r], i), elementAsDouble(first, i), tol, rms) > 1.0) {
        if (differing.empty()) std::tie(rank, element) = std::pair{r, i};
        differing.push_back(r);
        break;
      }
  if (differing.empty()) return std::nullopt;
  return fmt::format(
      "output '{}' is replicated (declared without shard), but its ranks disagree: at element {}, rank 0 holds "
      "{:.8g} and rank {} holds {:.8g} (ranks that differ from rank 0: {}; the run returns rank 0's)",
      name, indexString(element, first.shape), elementAsDouble(first, element), rank,
      elementAsDouble(copies[rank], element), fmt::join(differing, ", "));
}

}  // namespace hostir
