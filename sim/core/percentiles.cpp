#include "core/percentiles.hpp"

#include <algorithm>

#include "core/sim_time.hpp"

namespace infersim {

double interpolate(double below, double above, double index) {
  const double t = index - std::floor(index);
  // NumPy's _lerp, including its switch to the upper end for t >= 0.5.
  const double diff = above - below;
  return t >= 0.5 ? above - diff * (1 - t) : below + diff * t;
}

namespace {

template <class T, class ToDouble>
std::optional<double> select_percentile(std::vector<T>& values, double q, ToDouble to_double) {
  if (values.empty()) return std::nullopt;
  const auto [index, below, above] = percentile_ranks(values.size(), q);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(below),
                   values.end());
  const double a = to_double(values[below]);
  if (above == below) return a;
  // The element just above `below` is the smallest of the upper part.
  const double b = to_double(
      *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(above), values.end()));
  return interpolate(a, b, index);
}

}  // namespace

std::optional<double> percentile(std::vector<double>& values, double q) {
  return select_percentile(values, q, [](double v) { return v; });
}

std::vector<std::optional<double>> percentiles(std::span<const double> values,
                                               const std::vector<double>& qs) {
  const double* data = values.data();
  return percentiles_of_keys(
      values.size(), values.size(), [data](std::size_t i) { return order_key(data[i]); }, qs);
}

std::optional<double> percentile_seconds(std::vector<std::int64_t>& ns, double q) {
  return select_percentile(ns, q, [](std::int64_t v) { return Duration::ns(v).seconds(); });
}

std::vector<std::optional<double>> percentiles_seconds(std::span<const std::int64_t> ns,
                                                       const std::vector<double>& qs) {
  const std::int64_t* data = ns.data();
  return percentiles_of_keys(
      ns.size(), ns.size(), [data](std::size_t i) { return order_key(data[i]); }, qs,
      [](std::uint64_t key) { return Duration::ns(int64_of_order_key(key)).seconds(); });
}

}  // namespace infersim
