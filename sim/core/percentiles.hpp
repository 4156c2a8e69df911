// Exact percentiles as NumPy's default interpolation computes them: of an
// array (selected, not sorted), of nanosecond counts in seconds, and several
// at once of order keys (core/order_statistics) in one selection.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/order_statistics.hpp"

namespace infersim {

// Percentile q in [0, 1] of the values, by linear interpolation at (n-1)*q
// exactly as NumPy's default does it. Reorders `values`. None when empty.
std::optional<double> percentile(std::vector<double>& values, double q);
// NumPy's default interpolation between the values at floor((n-1)q) and the
// next index, as `percentile` does it.
double interpolate(double below, double above, double index);

// Where NumPy's default interpolation reads percentile q of n > 0 sorted
// values: at (n-1)q, between the values of rank `below` and `above`.
struct PercentileRanks {
  double index;
  std::size_t below;
  std::size_t above;
};
inline PercentileRanks percentile_ranks(std::size_t n, double q) {
  const double index = static_cast<double>(n - 1) * q;
  const auto below = static_cast<std::size_t>(std::floor(index));
  return {index, below, std::min(below + 1, n - 1)};
}

// `percentile` at each of `qs` of the `count` reals among key_at(0), ...,
// key_at(n - 1), order keys (core/order_statistics) of reals, or of values
// that `value_of` turns into reals keeping their order, the others being
// kNoValue: one selection of the ranks every q needs, rather than one a
// percentile. None when count is 0.
inline constexpr std::uint64_t kNoValue = ~std::uint64_t{0};
struct DoubleOfOrderKey {
  double operator()(std::uint64_t key) const { return double_of_order_key(key); }
};
template <class KeyAt, class ValueOf = DoubleOfOrderKey>
std::vector<std::optional<double>> percentiles_of_keys(std::size_t count, std::size_t n,
                                                       const KeyAt& key_at,
                                                       const std::vector<double>& qs,
                                                       const ValueOf& value_of = {}) {
  std::vector<std::optional<double>> out(qs.size());
  if (count == 0) return out;
  std::vector<std::size_t> ranks;
  for (const double q : qs) {
    const PercentileRanks r = percentile_ranks(count, q);
    ranks.push_back(r.below);
    ranks.push_back(r.above);
  }
  const std::vector<std::uint64_t> keys = select_ranks(n, key_at, std::span(ranks));
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double a = value_of(keys[2 * i]);
    out[i] = ranks[2 * i] == ranks[2 * i + 1] ? a
                                              : interpolate(a, value_of(keys[2 * i + 1]),
                                                            static_cast<double>(count - 1) * qs[i]);
  }
  return out;
}
// `percentile` at each of `qs`; `values` is left as it is.
std::vector<std::optional<double>> percentiles(std::span<const double> values,
                                               const std::vector<double>& qs);
// The same percentile of nanosecond counts, in seconds: equal to `percentile`
// over each count converted by Duration::seconds (the conversion keeps the
// order). Selects rather than sorts; reorders `ns`.
std::optional<double> percentile_seconds(std::vector<std::int64_t>& ns, double q);
// `percentile_seconds` at each of `qs`, in one selection; `ns` is left as it is.
std::vector<std::optional<double>> percentiles_seconds(std::span<const std::int64_t> ns,
                                                       const std::vector<double>& qs);
}  // namespace infersim
